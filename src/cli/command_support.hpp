// What the reader commands share: their --format, their output (written at once, then the
// process ends), the timings of TASKLENS_TIMINGS, and the what-if factors and modes several of
// them take.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "analysis/whatif.hpp"
#include "model/builder.hpp"
#include "report/printable.hpp"
#include "report/profile_report.hpp"

namespace tasklens::cli {

// "table", "csv", "json"; throws UsageError otherwise.
report::Format parse_format(const std::string& format);

// Writes a command's output and ends the process without tearing down its data: a model of
// millions of strands takes a tenth of a second or more to free (munmap of hundreds of MB),
// which is pure waste at exit. A failed write (closed pipe, full disk) is an error.
[[noreturn]] void write_and_exit(const std::string& out);

// A CSV has no place for a recording's warnings, which the table and the JSON carry (what the
// recording could not see, a figure that is approximate): with `--format csv` they go to stderr,
// one line each ("tasklens: warning: [prefix]..."), before the output. Nothing otherwise.
void warn_beside_csv(report::Format format, const std::vector<std::string>& warnings,
                     const std::string& prefix = "");

// With TASKLENS_TIMINGS set: ends the timed phase under `last_phase` and prints every phase's
// time to stderr (load/timings.hpp). Commands that end without write_and_exit call it.
void print_timings(const char* last_phase);

// A size for the user: "812 B", "3.4 KiB", "61.0 MiB", "7.3 GiB".
std::string human_bytes(uint64_t bytes);

// Parses "2", "2.5", "inf": a what-if factor (>= 1). Throws UsageError naming `what`.
double parse_factor(const std::string& text, const std::string& what);
// Parses --factors' comma-separated list.
std::vector<double> parse_factors(const std::string& list);
// --mode: "parallelize" or "speedup"; throws UsageError otherwise.
analysis::WhatIfMode parse_mode(const std::string& mode);

// Why a recording fits neither in memory nor in one pass (after "<trace>: ").
std::string not_in_one_pass_words(const model::NotInOnePass& e);
// For a recording whose DAG does not fit in the memory: runs `read_in_one_pass` (a command's
// one-pass reading, which ends the process), and turns its refusal of what one pass cannot read
// yet (model::NotInOnePass) into the one line of a recording that fits neither way (exit 6).
[[noreturn]] void read_in_one_pass_instead(const std::string& trace,
                                           const std::function<void()>& read_in_one_pass);

}  // namespace tasklens::cli
