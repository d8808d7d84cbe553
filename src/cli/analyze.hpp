// The reader commands: report, whatif, advise (tasks: tasks_cmd.hpp). Each loads a trace into the
// model, runs its analysis and prints one rendering of it.
#pragma once

#include <cstddef>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "analysis/diff.hpp"
#include "analysis/robust.hpp"
#include "analysis/sched.hpp"
#include "analysis/tasks.hpp"
#include "analysis/whatif.hpp"
#include "model/model.hpp"
#include "report/diagnosis.hpp"
#include "report/profile_report.hpp"
#include "report/whatif_report.hpp"
#include "trace/reader.hpp"

namespace tasklens::cli {

struct ReportOptions {
  std::string trace = "tasklens.data";
  std::string format = "table";
  size_t top = 0;         // 0: 20 rows for the table, all for csv/json
  bool raw_span = false;  // --raw-span: every strand as measured (no clipping of disturbances)
  std::string base;       // --base: a recording to compare with (the diagnosis's work inflation)
};

struct WhatIfOptions {
  std::string trace = "tasklens.data";
  std::vector<std::string> regions, sites, fragments;  // NAME[=FACTOR]
  std::string factors = "2,4,8,16,32,inf";
  std::string mode = "parallelize";
  std::string format = "table";
  size_t top = 0;
  bool list = false;
  bool raw_span = false;
};

struct AdviseOptions {
  std::string trace = "tasklens.data";
  double target = 0;  // 0: 8 x the cores of this machine
  size_t max_steps = 10;
  double factor = 0;  // 0: the target
  double k = 10;      // stop below k x the tasking overhead
  std::string mode = "parallelize";
  std::string format = "table";
  bool raw_span = false;
};

// Each writes its output to stdout and ends the process (see write_and_exit in analyze.cpp).
[[noreturn]] void run_report(const ReportOptions& options);
[[noreturn]] void run_whatif(const WhatIfOptions& options);
[[noreturn]] void run_advise(const AdviseOptions& options);

// How the commands that compute a span load the model. Robust: strands far longer than the
// rest of their code fragment (a paused machine, page faults, interrupts) are clipped to the
// fragment's median (analysis/robust.hpp), so that one disturbed strand cannot decide the
// critical path. Raw (--raw-span, and the commands that show the run as measured: tasks, sched,
// export): every strand as measured.
enum class SpanMode { Robust, Raw };

// A trace, its model with symbolized (and merged) sites, and the warnings of what the
// recording could not see. Throws the trace's and the model's typed errors.
struct Loaded {
  std::unique_ptr<trace::TraceFile> trace;
  model::Model model;
  std::vector<report::SiteLabel> labels;
  analysis::Clipping clipping;  // what the robust mode clipped (nothing in Raw mode)
  bool robust = false;          // the outlier rule was applied (Robust mode, a metric it judges)
};
Loaded load(const std::string& path, SpanMode mode = SpanMode::Raw);
SpanMode span_mode(bool raw_span);
// The run's facts for the renderers, with span_mode ("robust" or "raw") set.
report::RunInfo run_info_of(const Loaded& loaded);
// The robust profile's account of what it clipped (the figures as measured; the clipped
// strands' fragments named), for render_profile. `measured_span`: the span as measured if the
// caller started computing it (analysis::measured_span), else computed here.
report::SpanAccount span_account(const Loaded& loaded, const analysis::Profile& profile,
                                 std::future<uint64_t>* measured_span = nullptr);

// What the diagnosis (report/diagnosis.hpp) needs beside the profile, computed from the loaded
// model alone (so that it can run beside the profile): the code fragments' labels, the task
// types and the schedule.
struct Diagnosed {
  report::FragmentLabels fragments;
  std::vector<analysis::TypeSizes> task_sizes;
  uint64_t tiny_size = 0;
  // `view` only (`full`): the schedule and the task types, which its page shows anyway.
  analysis::Schedule schedule;
  analysis::TaskProfile tasks;
};
Diagnosed diagnosis_inputs(const Loaded& loaded, bool full = false);
// The differential analysis' input of one loaded recording (its units named by their labels).
analysis::DiffInput diff_input(const Loaded& loaded, const report::FragmentLabels& fragments);

// `base`: the comparison with a base recording (`report --base`), or null.
std::vector<report::DiagnosisItem> diagnose(const Loaded& loaded, const analysis::Profile& profile,
                                            const report::SpanAccount& account,
                                            const Diagnosed& inputs,
                                            const analysis::Diff* base = nullptr);

// How every reader command builds its models (flags common to them all, set by main()).
struct ModelSettings {
  bool blocked_as_work = false;    // --blocked-as-work (model::BuildOptions::blocked_as_work)
  bool keep_slow_faults = false;   // --keep-slow-faults (model::BuildOptions::keep_slow_faults)
  bool keep_runtime_cost = false;  // --keep-runtime-cost (model::BuildOptions::keep_runtime_cost)
};
ModelSettings& model_settings();

// With TASKLENS_TIMINGS set: ends the timed phase under `last_phase` and prints every phase's
// time to stderr (cli/timings.hpp). Commands that end without write_and_exit call it.
void print_timings(const char* last_phase);

// Writes a command's output and ends the process without tearing down its data: a model of
// millions of strands takes a tenth of a second or more to free (munmap of hundreds of MB),
// which is pure waste at exit. A failed write (closed pipe, full disk) is an error.
[[noreturn]] void write_and_exit(const std::string& out);

// "table", "csv", "json"; throws UsageError otherwise.
report::Format parse_format(const std::string& format);

// Parses "2", "2.5", "inf": a what-if factor (>= 1). Throws UsageError naming `what`.
double parse_factor(const std::string& text, const std::string& what);
// Parses --factors' comma-separated list.
std::vector<double> parse_factors(const std::string& list);

// The units named by whatif's --region, --site and --fragment, in that order, with their kinds
// ("region", "site", "fragment") appended to `kinds`. Throws UsageError for a unit not found.
std::vector<analysis::Unit> resolve_units(const Loaded& loaded, const report::FragmentLabels& fl,
                                          const WhatIfOptions& options,
                                          std::vector<std::string>& kinds);
// The what-if report of `units` (curves at every factor, the profile after all of them).
report::WhatIfReport whatif_report(const model::Model& model,
                                   const std::vector<analysis::Unit>& units,
                                   std::vector<std::string> kinds, std::vector<double> factors,
                                   analysis::WhatIfMode mode);
// advise's options checked and resolved (target, factor, k); the target, unless given, is the
// report's for this recording (report::parallelism_target).
report::AdviceReport advice_options(const AdviseOptions& options, const model::Model& model);

}  // namespace tasklens::cli
