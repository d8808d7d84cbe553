#pragma once

#include <string>
#include <vector>

namespace tasklens::cli {

struct RecordOptions {
  std::string output = "tasklens.data";
  std::string metric = "auto";  // cycles where the machine has hardware counters, else tsc
  std::string runtime;    // empty: LLVM 16's libomp if available; "program": the program's own
  unsigned flush_ms = 0;  // 0: the recorder's default
  std::string compression = "zstd";     // of the event blocks: zstd, lz4 or none
  bool no_runtime_calibration = false;  // keep the runtime's own cost in the work
  bool recalibrate = false;  // time the runtime's cost again instead of taking the cached one
  unsigned repeat = 1;       // record the program this many times (record_repeat.hpp)
  std::vector<std::string> command;
};

// Runs the program under the recorder; returns the exit code tasklens should exit with (the
// program's). If the program was killed by a signal, re-raises it after writing the summary.
int run_record(const RecordOptions& options);

}  // namespace tasklens::cli
