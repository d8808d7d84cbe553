// `tasklens record --repeat N`: the program recorded N times in a row, the spread of its figures
// said (report/repeat_report.hpp), and the median recording kept as the one to read.
#pragma once

#include "cli/record_cmd.hpp"

namespace tasklens::cli {

inline constexpr unsigned kMaxRepeat = 100;

// Runs run_record options.repeat times (numbered_output names each trace), stops at the first
// run that fails (its exit code passes through, its recording becomes `output`), then reads
// every recording, prints the summary and makes `output` the median recording (a hard link).
int run_record_repeated(const RecordOptions& options);

}  // namespace tasklens::cli
