#include "cli/sched_cmd.hpp"

#include <fmt/format.h>

#include "analysis/profile.hpp"
#include "analysis/sched.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/recording.hpp"
#include "report/sched_report.hpp"

namespace tasklens::cli {

void run_sched(const SchedOptions& opt) {
  report::Format format = parse_format(opt.format);
  if (opt.points < 1 || opt.points > 1000000)
    throw UsageError(
        fmt::format("--points {}: use a number of points from 1 to 1000000", opt.points));
  load::Loaded l = load::load(opt.trace);
  const analysis::Schedule schedule = analysis::compute_schedule(l.model);
  if (schedule.timed_strands == 0)
    throw UsageError(opt.trace +
                     ": the trace was recorded without timestamps (no strand has a start or end "
                     "time): the schedule needs them; record it again with `tasklens record`");
  if (!schedule.timestamps)
    throw UsageError(opt.trace +
                     ": every strand starts and ends at the same instant: no time elapsed, "
                     "nothing to break down");
  const analysis::Profile profile = analysis::compute_profile(l.model);
  report::SchedRun run;
  run.model = &l.model;
  run.schedule = &schedule;
  run.work = profile.work;
  run.span = profile.span;
  run.info = report::run_info(*l.trace);
  run.tsc_hz = l.trace->tsc_hz();
  run.points = opt.points;
  write_and_exit(report::render_sched(run, format));
}

}  // namespace tasklens::cli
