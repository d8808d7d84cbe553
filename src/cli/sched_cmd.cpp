#include "cli/sched_cmd.hpp"

#include <fmt/format.h>

#include "analysis/profile.hpp"
#include "analysis/sched.hpp"
#include "analysis/stream_sched.hpp"
#include "analysis/temp_blocks.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/progress.hpp"
#include "load/recording.hpp"
#include "load/timings.hpp"
#include "report/sched_report.hpp"
#include "trace/reader.hpp"

namespace tasklens::cli {
namespace {

void check_timed(const analysis::Schedule& schedule, const std::string& trace) {
  if (schedule.timed_strands == 0)
    throw UsageError(trace +
                     ": the trace was recorded without timestamps (no strand has a start or end "
                     "time): the schedule needs them; record it again with `tasklens record`");
  if (!schedule.timestamps)
    throw UsageError(trace +
                     ": every strand starts and ends at the same instant: no time elapsed, "
                     "nothing to break down");
}

}  // namespace

std::string sched_text_of(analysis::StreamSchedule& sink, const load::Streamed& st,
                          const SchedOptions& opt, report::Format format) {
  load::Progress::global().phase("sweeping the timeline of " + opt.trace);
  const analysis::StreamSchedule::Result r = sink.finish(report::sched_point_counts(opt.points));
  load::Timings::global().lap("schedule");
  if (load::Timings::global().enabled())  // (what the disk held: docs/benchmarks.md)
    fmt::print(stderr, "tasklens: timings: the schedule's temporary files held {} bytes\n",
               r.disk_bytes);
  check_timed(r.schedule, opt.trace);
  model::Model m = st.model;  // (no DAG: its sites and facts, with this reading's warning)
  m.warnings.push_back(
      "read in one pass (--stream, or its DAG does not fit in the memory): the same figures as "
      "with the DAG in memory");
  report::SchedRun run;
  run.model = &m;
  run.schedule = &r.schedule;
  run.work = r.profile.work;
  run.span = r.profile.span;
  run.info = report::run_info(*st.trace);
  run.tsc_hz = st.trace->tsc_hz();
  run.points = opt.points;
  warn_beside_csv(format, m.warnings);
  return report::render_sched(run, format);
}

// The schedule of a recording read in one pass (analysis/stream_sched.hpp): the same figures,
// with memory that follows what the run had live; its events wait on disk to be swept in time
// order.
std::string sched_streamed_text(const SchedOptions& opt, report::Format format) {
  // The strands' times and the paths' logs take a few bytes per task on disk
  // (docs/sched.md has the measured sizes): a disk without the room is said before the pass,
  // not after it.
  const trace::TraceFile::Scan scan = trace::TraceFile::scan(opt.trace);
  const uint64_t needed = scan.tasks_created * 20, free = analysis::temp_dir_free_bytes();
  if (scan.has_finish && free > 0 && free < needed)
    fmt::print(stderr,
               "tasklens: warning: sched keeps the strands' times on disk while it reads a "
               "recording in one pass, about {} for these {} tasks, and {} has {} free: point "
               "TMPDIR at a disk with the room\n",
               human_bytes(needed), scan.tasks_created, analysis::temp_dir(), human_bytes(free));
  analysis::StreamSchedule sink;
  const load::Streamed st = load::read_in_one_pass(
      opt.trace, "timing the strands of",
      [&sink](const report::SitesAsTheyCome&, const trace::TraceFile&) -> model::StrandSink& {
        return sink;
      },
      analysis::StreamSchedule::kFixedBytes);
  return sched_text_of(sink, st, opt, format);
}

void run_sched(const SchedOptions& opt) {
  report::Format format = parse_format(opt.format);
  if (opt.points < 1 || opt.points > 1000000)
    throw UsageError(
        fmt::format("--points {}: use a number of points from 1 to 1000000", opt.points));
  if (opt.stream) write_and_exit(sched_streamed_text(opt, format));
  load::Loaded l;
  try {
    l = load::load(opt.trace);
  } catch (const OutOfMemoryError&) {
    // Too large for the DAG: the same schedule in one pass, when the recording allows it.
    read_in_one_pass_instead(opt.trace, [&] { write_and_exit(sched_streamed_text(opt, format)); });
  }
  const analysis::Schedule schedule = analysis::compute_schedule(l.model);
  check_timed(schedule, opt.trace);
  const analysis::Profile profile = analysis::compute_profile(l.model);
  report::SchedRun run;
  run.model = &l.model;
  run.schedule = &schedule;
  run.work = profile.work;
  run.span = profile.span;
  run.info = report::run_info(*l.trace);
  run.tsc_hz = l.trace->tsc_hz();
  run.points = opt.points;
  warn_beside_csv(format, l.model.warnings);
  write_and_exit(report::render_sched(run, format));
}

}  // namespace tasklens::cli
