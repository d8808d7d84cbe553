// Programs that cannot run under the runtime `tasklens record` preloads, found before they run
// (read from their ELF file: platform.hpp).
//
// `record` runs a program built by GCC (its OpenMP runtime is libgomp, which has no OMPT) under
// LLVM's libomp, whose GOMP_* entry points stand in for libgomp's. They do not cover every
// construct GCC compiles: LLVM's libomp (up to at least 16) cannot run a task with a `detach`
// clause compiled by GCC; the program dies inside the runtime (SIGSEGV). Such a program is
// recognised from its ELF file (it needs libgomp and calls omp_fulfill_event, which only a
// detach clause needs) and refused with a line that says why and what to do, rather than run
// and crashed.
#pragma once

#include <string>

#include "platform/platform.hpp"

namespace tasklens::launch {

// Why the program cannot run under LLVM's libomp in place of libgomp, as one sentence that
// names `program` and says what to do; "" when nothing is known against it.
std::string gomp_incompatibility(const std::string& program, const platform::ElfDynamic& info);

// A note for a program killed by `signal` after it ran under LLVM's libomp in place of libgomp
// (`libgomp`: the trace says it was built that way): the crash may be that runtime's GCC
// compatibility rather than the program. "" when the signal is not a crash or `libgomp` false.
std::string gomp_crash_note(int signal, bool libgomp);

}  // namespace tasklens::launch
