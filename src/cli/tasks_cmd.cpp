#include "cli/tasks_cmd.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>

#include "analysis/stream_tasks.hpp"
#include "analysis/tasks.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/recording.hpp"
#include "model/builder.hpp"
#include "report/profile_report.hpp"
#include "report/tasks_report.hpp"
#include "trace/reader.hpp"

namespace tasklens::cli {
namespace {

// One recording: its trace, model with symbolized (merged) sites (load::load()), and
// its task profile.
struct Run {
  std::unique_ptr<trace::TraceFile> trace;
  model::Model model;
  std::vector<report::SiteLabel> labels;
  analysis::TaskProfile profile;
  report::TasksRun view;
};

}  // namespace

model::StrandSink& TasksPass::sink(const trace::TraceFile& trace) {
  options = analysis::default_task_options(model::metric_of(trace), model::task_cost_of(trace),
                                           trace.tsc_hz(), bins);
  stream = std::make_unique<analysis::StreamTasks>(options.tiny_size);
  return *stream;
}

namespace {

// The recording read in one pass (analysis/stream_tasks.hpp): memory that follows the task
// types, not the task count; percentiles from a sketch (the note says how close). The model and
// labels are copied from the pass's (its trace stays there).
void stream_run(Run& r, TasksPass& pass, const load::Streamed& st) {
  r.model = st.model;
  r.labels = st.labels;
  r.profile = pass.stream->finish(r.model, pass.options);
  r.model.warnings.push_back(fmt::format(
      "read in one pass (--stream, or its DAG does not fit in the memory): medians and 90th "
      "percentiles to within {:.1f}% below the exact ones, the rare long waits' threshold "
      "within that much above (a wait that close to it may be missed); counts, totals, means, "
      "minimums, maximums and histograms are exact",
      100 * r.profile.sketch_error));
}

// Checks the task profile of `r` and fills its view.
void finish_run(Run& r, const std::string& path, const trace::TraceFile& trace,
                const analysis::TaskOptions& options) {
  const double hz = trace.tsc_hz();
  if (r.profile.tasks == 0)
    throw UsageError(path +
                     ": the trace has no tasks (no OpenMP task, taskloop or loop chunk, no "
                     "oneTBB task): nothing to show; `tasklens report` shows its constructs");
  if (!r.profile.timestamps)
    throw UsageError(path +
                     ": the trace was recorded without timestamps (every strand starts at 0): "
                     "waiting times need them; record it again with `tasklens record`");
  r.view.model = &r.model;
  r.view.profile = &r.profile;
  r.view.labels = &r.labels;
  r.view.options = options;
  r.view.info = report::run_info(trace);
  r.view.tsc_hz = hz;
}

// `path` read in one pass of its own.
std::unique_ptr<Run> streamed_run(const std::string& path, unsigned bins) {
  auto r = std::make_unique<Run>();
  TasksPass pass(bins);
  load::Streamed st = load::read_in_one_pass(
      path, "sizing the tasks of",
      [&pass](const report::SitesAsTheyCome&, const trace::TraceFile& trace) -> model::StrandSink& {
        return pass.sink(trace);
      });
  stream_run(*r, pass, st);
  r->trace = std::move(st.trace);
  finish_run(*r, path, *r->trace, pass.options);
  return r;
}

std::unique_ptr<Run> load_run(const std::string& path, unsigned bins, bool stream) {
  if (stream) return streamed_run(path, bins);
  auto r = std::make_unique<Run>();
  try {
    load::Loaded l = load::load(path);
    r->trace = std::move(l.trace);
    r->model = std::move(l.model);
    r->labels = std::move(l.labels);
  } catch (const OutOfMemoryError&) {
    // Too large for the DAG: in one pass, when the recording allows it.
    try {
      return streamed_run(path, bins);
    } catch (const model::NotInOnePass& e) {
      throw OutOfMemoryError(path + ": " + not_in_one_pass_words(e));
    }
  }
  const analysis::TaskOptions options =
      analysis::default_task_options(r->model, r->trace->tsc_hz(), bins);
  r->profile = analysis::compute_tasks(r->model, options);
  finish_run(*r, path, *r->trace, options);
  return r;
}

std::string type_list(const Run& r) {
  std::string s;
  for (size_t i = 0; i < r.profile.types.size() && i < 5; ++i)
    s += (i ? ", " : "") + r.labels[r.profile.types[i].site].site;
  if (r.profile.types.size() > 5) s += ", ...";
  return s;
}

}  // namespace

std::string tasks_text_of(TasksPass& pass, const load::Streamed& read, report::Format format) {
  Run r;
  stream_run(r, pass, read);
  finish_run(r, read.trace->path(), *read.trace, pass.options);
  warn_beside_csv(format, r.model.warnings);
  return report::render_tasks(r.view, format, std::numeric_limits<size_t>::max());
}

void run_tasks(const TasksOptions& opt) {
  report::Format format = parse_format(opt.format);
  if (opt.bins < 1 || opt.bins > 64)
    throw UsageError(fmt::format("--bins {}: use a number of bins from 1 to 64", opt.bins));
  if (opt.traces.size() > 2)
    throw UsageError("tasks: give one trace, or two to compare (base other), not " +
                     std::to_string(opt.traces.size()));
  const size_t top = opt.top                           ? opt.top
                     : format == report::Format::Table ? 10
                                                       : std::numeric_limits<size_t>::max();
  if (opt.traces.size() < 2) {
    std::unique_ptr<Run> r =
        load_run(opt.traces.empty() ? "tasklens.data" : opt.traces[0], opt.bins, opt.stream);
    warn_beside_csv(format, r->model.warnings);
    write_and_exit(report::render_tasks(r->view, format, top));
  }
  std::unique_ptr<Run> base = load_run(opt.traces[0], opt.bins, opt.stream);
  std::unique_ptr<Run> other = load_run(opt.traces[1], opt.bins, opt.stream);
  if (base->model.metric != other->model.metric)
    throw UsageError(fmt::format(
        "tasks: {} measures {} and {} measures {}: task sizes in different metrics do not "
        "compare; record both with the same --metric",
        opt.traces[0], base->model.metric, opt.traces[1], other->model.metric));
  analysis::TaskComparison c =
      analysis::compare_tasks(base->profile, report::task_type_keys(base->model, base->labels),
                              other->profile, report::task_type_keys(other->model, other->labels));
  if (c.rows.empty())
    throw UsageError(fmt::format(
        "tasks: {} and {} have no task type in common ({}: {}; {}: {}): not the same program?",
        opt.traces[0], opt.traces[1], opt.traces[0], type_list(*base), opt.traces[1],
        type_list(*other)));
  std::string out = report::render_task_comparison(base->view, other->view, c, format, top);
  warn_beside_csv(format, base->model.warnings, "base: ");
  warn_beside_csv(format, other->model.warnings, "other: ");
  write_and_exit(out);
}

}  // namespace tasklens::cli
