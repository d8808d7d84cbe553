#include "launch/runtime_compat.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <csignal>

namespace tasklens::launch {

std::string gomp_incompatibility(const std::string& program, const platform::ElfDynamic& info) {
  const bool libgomp =
      std::any_of(info.needed.begin(), info.needed.end(),
                  [](const std::string& n) { return n.rfind("libgomp.so", 0) == 0; });
  const bool detach = std::find(info.undefined.begin(), info.undefined.end(),
                                "omp_fulfill_event") != info.undefined.end();
  if (!libgomp || !detach) return {};
  return fmt::format(
      "{} is built with GCC's OpenMP (libgomp) and uses detached tasks (it calls "
      "omp_fulfill_event): tasklens records GCC's OpenMP code under LLVM's OpenMP runtime, which "
      "cannot run a detach clause compiled by GCC (the program would crash); build it with clang "
      "-fopenmp to profile it (--runtime PATH runs it anyway)",
      program);
}

std::string gomp_crash_note(int signal, bool libgomp) {
  if (!libgomp) return {};
  if (signal != SIGSEGV && signal != SIGBUS && signal != SIGILL && signal != SIGFPE &&
      signal != SIGABRT)
    return {};
  return "the program is built with GCC's OpenMP (libgomp) and ran under LLVM's OpenMP runtime, "
         "which tasklens records with: if it does not crash without tasklens, that runtime's "
         "support of GCC's code is the cause (GCC's detach clause is not supported, for one); "
         "build it with clang -fopenmp to profile it";
}

}  // namespace tasklens::launch
