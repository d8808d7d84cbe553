// Programs that cannot run under the runtime `tasklens record` preloads, found before they run.
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
#include <vector>

namespace tasklens::cli {

// What a program's ELF file says about its dynamic linking.
struct ElfDynamic {
  bool elf = false;                    // an ELF64 little-endian file that could be read
  std::vector<std::string> needed;     // DT_NEEDED: the libraries it links
  std::vector<std::string> undefined;  // dynamic symbols it imports (undefined in .dynsym)
};

// Reads `path`'s dynamic section and dynamic symbols. Anything that is not a readable ELF64
// file (a script, a truncated or damaged file) gives elf = false; never throws.
ElfDynamic read_elf_dynamic(const std::string& path);

// Where execvp(argv0) would find the program: argv0 itself when it holds a '/', else the first
// executable regular file of that name in `path_list` (PATH's syntax); "" when there is none.
std::string find_command(const std::string& argv0, const std::string& path_list);

// Why the program cannot run under LLVM's libomp in place of libgomp, as one sentence that
// names `program` and says what to do; "" when nothing is known against it.
std::string gomp_incompatibility(const std::string& program, const ElfDynamic& info);

// A note for a program killed by `signal` after it ran under LLVM's libomp in place of libgomp
// (`libgomp`: the trace says it was built that way): the crash may be that runtime's GCC
// compatibility rather than the program. "" when the signal is not a crash or `libgomp` false.
std::string gomp_crash_note(int signal, bool libgomp);

}  // namespace tasklens::cli
