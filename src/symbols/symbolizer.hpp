// Turns recorded return addresses into file:line and function, at report time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tasklens::symbols {

// One loaded object of the recorded process, as dl_iterate_phdr saw it.
struct Module {
  std::string path;    // absolute path of the object file
  uint64_t base = 0;   // load bias (dlpi_addr): file address = runtime address - base
  uint64_t begin = 0;  // lowest runtime address of its executable PT_LOAD segments
  uint64_t end = 0;    // one past the highest
};

struct Location {
  std::string file;      // source file (may be empty when there is no debug info)
  unsigned line = 0;     // 0 when unknown
  std::string function;  // demangled; empty when unknown
  std::string module;    // path of the module containing the address; empty if none
  // The address is inside the OpenMP/TBB runtime (libomp, libgomp, libiomp, libtbb).
  bool in_runtime = false;
  // The chosen frame is inside a library's headers (oneTBB, the C++ library): every inlined frame
  // of the address was (see Symbolizer::resolve).
  bool in_library_header = false;
  bool known() const { return line != 0 || !function.empty(); }
};

// What one resolve() call cost; lets callers (and tests) check that work was deduplicated.
struct ResolveStats {
  size_t distinct = 0;   // distinct addresses in the input
  size_t looked_up = 0;  // addresses sent to addr2line (distinct and inside a module)
  // addr2line processes started: one per module, and one more (LLVM's) for a module with
  // answers inside a library's headers
  size_t processes = 0;
};

class Symbolizer {
 public:
  explicit Symbolizer(std::vector<Module> modules);
  // Resolves each address (a return address: the call instruction is at address - 1). Of the
  // frames inlined at the address, the innermost outside a library's headers is reported.
  // Results are in the same order as the input. Never throws for unknown addresses: they get an
  // empty Location (with `module` set if a module contains them).
  std::vector<Location> resolve(const std::vector<uint64_t>& addresses) const;
  // Same, and reports the work done into *stats when it is not null.
  std::vector<Location> resolve(const std::vector<uint64_t>& addresses, ResolveStats* stats) const;

  // True when the file name of `path` names the OpenMP or TBB runtime (libomp, libgomp, libiomp,
  // libtbb).
  static bool is_runtime_module(const std::string& path);

 private:
  std::vector<Module> modules_;
};

namespace detail {
// Parses the stdout of `addr2line -f -C -i -a` answering `count` addresses, in order. Answers
// missing from `output` (addr2line died) are left empty. Exposed for tests.
std::vector<Location> parse_addr2line_output(std::string_view output, size_t count);
}  // namespace detail

}  // namespace tasklens::symbols
