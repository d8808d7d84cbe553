#include "cli/command_support.hpp"

#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>

#include "errors.hpp"
#include "load/progress.hpp"
#include "load/timings.hpp"
#include "model/builder.hpp"

namespace tasklens::cli {

using load::Timings;

report::Format parse_format(const std::string& f) {
  if (f == "table") return report::Format::Table;
  if (f == "csv") return report::Format::Csv;
  if (f == "json") return report::Format::Json;
  throw UsageError("--format " + f + ": unknown format; use table, csv or json");
}

void print_timings(const char* last_phase) {
  load::Progress::global().stop();
  Timings& timings = Timings::global();
  if (!timings.enabled()) return;
  timings.lap(last_phase);
  fmt::print(stderr, "tasklens: timings: {}\n", timings.summary());
}

void write_and_exit(const std::string& out) {
  // The command's analysis, unless it timed it on its own, and its rendering.
  Timings::global().lap("render");
  load::Progress::global().stop();  // its line erased before the output
  bool ok = std::fwrite(out.data(), 1, out.size(), stdout) == out.size();
  ok = std::fflush(stdout) == 0 && ok;
  print_timings("write");
  if (!ok) std::fputs("tasklens: could not write the report to standard output\n", stderr);
  std::fflush(stderr);
  std::_Exit(ok ? 0 : 1);
}

void warn_beside_csv(report::Format format, const std::vector<std::string>& warnings,
                     const std::string& prefix) {
  if (format != report::Format::Csv) return;
  load::Progress::global().stop();  // its line erased first
  for (const std::string& w : warnings) fmt::print(stderr, "tasklens: warning: {}{}\n", prefix, w);
}

double parse_factor(const std::string& text, const std::string& what) {
  if (text == "inf" || text == "infinity") return analysis::kInfiniteFactor;
  size_t used = 0;
  double k = 0;
  try {
    k = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(k))
    throw UsageError(what + ": '" + text + "' is not a factor; use a number such as 4 or inf");
  if (k < 1) throw UsageError(what + ": a factor must be 1 or more (or inf), not " + text);
  return k;
}

std::vector<double> parse_factors(const std::string& list) {
  std::vector<double> factors;
  size_t pos = 0;
  while (pos <= list.size()) {
    size_t comma = list.find(',', pos);
    if (comma == std::string::npos) comma = list.size();
    factors.push_back(parse_factor(list.substr(pos, comma - pos), "--factors"));
    pos = comma + 1;
  }
  return factors;
}

analysis::WhatIfMode parse_mode(const std::string& mode) {
  if (mode == "parallelize") return analysis::WhatIfMode::Parallelize;
  if (mode == "speedup") return analysis::WhatIfMode::Speedup;
  throw UsageError("--mode " + mode + ": unknown mode; use parallelize or speedup");
}

std::string not_in_one_pass_words(const model::NotInOnePass& e) {
  return "the DAG of this recording does not fit in the memory, and it has " + e.construct +
         ", which tasklens cannot read in one pass yet; read it on a machine with more memory, "
         "or record a shorter run (a smaller input, or a cut-off: fewer tasks)";
}

void read_in_one_pass_instead(const std::string& trace,
                              const std::function<void()>& read_in_one_pass) {
  try {
    read_in_one_pass();
  } catch (const model::NotInOnePass& e) {
    throw OutOfMemoryError(trace + ": " + not_in_one_pass_words(e));
  }
  std::abort();  // a one-pass reading ends the process: it writes its report and exits
}

std::string human_bytes(uint64_t b) {
  if (b < 10 * 1024) return fmt::format("{} B", b);
  if (b < 10 * 1024 * 1024) return fmt::format("{:.1f} KiB", double(b) / 1024.0);
  if (b < uint64_t{10} << 30) return fmt::format("{:.1f} MiB", double(b) / (1024.0 * 1024.0));
  return fmt::format("{:.1f} GiB", double(b) / (1024.0 * 1024.0 * 1024.0));
}

}  // namespace tasklens::cli
