/* empty_ompt_tool.c: the OMPT limit of bench/overhead.sh (docs/benchmarks.md).
 *
 * The empty tool of empty_ompt_tool.h, as a library: a program run under LLVM 16's
 * libomp with it pays what the runtime's OMPT support costs and nothing of tasklens: no recorder
 * can be faster, so `record` time / this time is the recorder's own overhead. Loaded with
 * LD_PRELOAD (before the runtime), as `tasklens record` loads the recorder.
 */
#include "empty_ompt_tool.h"

__attribute__((visibility("default"))) ompt_start_tool_result_t* ompt_start_tool(
    unsigned int omp_version, const char* runtime_version) {
  (void)omp_version, (void)runtime_version;
  static ompt_start_tool_result_t result = {empty_tool_initialize, empty_tool_finalize, {0}};
  return &result;
}
