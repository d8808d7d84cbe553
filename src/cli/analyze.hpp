// The reader commands: report, whatif, advise. Each loads a trace into the model, runs its
// analysis and prints one rendering of it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace tasklens::cli {

struct ReportOptions {
  std::string trace = "tasklens.data";
  std::string format = "table";
  size_t top = 0;  // 0: 20 rows for the table, all for csv/json
};

struct WhatIfOptions {
  std::string trace = "tasklens.data";
  std::vector<std::string> regions, sites, fragments;  // NAME[=FACTOR]
  std::string factors = "2,4,8,16,32,inf";
  std::string mode = "parallelize";
  std::string format = "table";
  size_t top = 0;
  bool list = false;
};

struct AdviseOptions {
  std::string trace = "tasklens.data";
  double target = 0;  // 0: 8 x the cores of this machine
  size_t max_steps = 10;
  double factor = 0;  // 0: the target
  double k = 10;      // stop below k x the tasking overhead
  std::string mode = "parallelize";
  std::string format = "table";
};

// Each writes its output to stdout and ends the process (see write_and_exit in analyze.cpp).
[[noreturn]] void run_report(const ReportOptions& options);
[[noreturn]] void run_whatif(const WhatIfOptions& options);
[[noreturn]] void run_advise(const AdviseOptions& options);

// Parses "2", "2.5", "inf": a what-if factor (>= 1). Throws UsageError naming `what`.
double parse_factor(const std::string& text, const std::string& what);

}  // namespace tasklens::cli
