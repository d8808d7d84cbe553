// Turns recorded return addresses into file:line and function, at report time.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
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
  // When a frame of the program's own code was chosen over the library frames inlined into it:
  // the outermost of those (the library's entry point the program called: "file:line",
  // basename), kept as detail. Empty otherwise.
  std::string library_frame;
  bool known() const { return line != 0 || !function.empty(); }
};

// What one resolve() call cost; lets callers (and tests) check that work was deduplicated.
struct ResolveStats {
  size_t distinct = 0;   // distinct addresses in the input
  size_t looked_up = 0;  // addresses sent to addr2line (distinct and inside a module)
  // addr2line processes started by this call: one per module, and one more (LLVM's) for a
  // module with answers inside a library's headers; none for those an earlier call started
  size_t processes = 0;
};

// Which code is a library's rather than the program's own, for attributing constructs created
// inside a library (a header-only parallel library, oneTBB, the C++ standard library) to the
// program's call site, the innermost frame of its inline chain outside library code:
//  * oneTBB's and the C++ library's headers (.../oneapi/tbb/, .../include/tbb/, .../include/c++/);
//  * every file under the system's directories: /usr/include/, /usr/local/include/, /usr/lib/,
//    /usr/share/, /opt/;
//  * the library paths the user names (`--library-path`, or TASKLENS_LIBRARY_PATH, colon
//    separated): an absolute path is a prefix (a directory: /home/me/deps/), any other value a
//    directory name anywhere in the path (`pstl` matches .../pstl/...).
// Everything else (the program's own source tree) is the program's code.
void set_library_paths(std::vector<std::string> paths);
bool is_library_file(std::string_view file);

class Symbolizer {
 public:
  explicit Symbolizer(std::vector<Module> modules);
  ~Symbolizer();
  Symbolizer(Symbolizer&&) noexcept;
  Symbolizer& operator=(Symbolizer&&) noexcept;
  // Resolves each address (a return address: the call instruction is at address - 1). Of the
  // frames inlined at the address, the innermost outside a library's headers is reported.
  // Results are in the same order as the input. Never throws for unknown addresses: they get an
  // empty Location (with `module` set if a module contains them). The addr2line processes it
  // starts stay up until the Symbolizer goes: later calls ask them again, without starting any.
  std::vector<Location> resolve(const std::vector<uint64_t>& addresses) const;
  // Same, and reports the work done into *stats when it is not null.
  std::vector<Location> resolve(const std::vector<uint64_t>& addresses, ResolveStats* stats) const;

  // True when the file name of `path` names the OpenMP or TBB runtime (libomp, libgomp, libiomp,
  // libtbb).
  static bool is_runtime_module(const std::string& path);

 private:
  struct Servers;
  std::vector<Module> modules_;
  std::unique_ptr<Servers> servers_;
};

namespace detail {
// Parses the stdout of `addr2line -f -C -i -a` answering `count` addresses, in order. Answers
// missing from `output` (addr2line died) are left empty. Exposed for tests.
std::vector<Location> parse_addr2line_output(std::string_view output, size_t count);
}  // namespace detail

}  // namespace tasklens::symbols
