// The verdict that opens `report` and `view` (issue "a newcomer's first hour"): at most five
// findings, most important first, each with its evidence, the code location and what to do.
//
// Sources, each weighed by the share of the program's time it explains (the weight orders them):
//  * serial-code: critical-path strands outside every construct (the Program site), by code
//    fragment; reported when they hold at least 10% of the span and the program's parallelism
//    is below the adviser's target (low-parallelism's: above it the span does not limit the
//    speedup). Weight: their share of the span times the span's share of the time on `target`
//    cores, 1 / (parallelism / target + 1). Evidence: the fragment's time on the path and what
//    the parallelism would be if it took no time (one longest path without it).
//  * tiny-tasks: a task type (analysis::task_sizes) half of whose tasks, and 8 or more, are under
//    1 us (tasks.hpp's ManyTinyTasks). Weight: the type's share of the program's work, times
//    the share of the workers' time spent in delay when the schedule is known (else half of it).
//  * few-tasks: a task type (not loop chunks, whose number is the schedule's) with fewer than 4
//  tasks per recorded thread holding 10% or more of
//    the work, or one task larger than a worker's share (tasks.hpp's FewLargeTasks and
//    DominantTask). Weight: 0.4 x the type's share of the work.
//  * uneven-shares, team-bound: analysis/loops.hpp's findings (report/loop_report.hpp's
//    thresholds). Weight: the loop's imbalance times its share of the span; the team-bound
//    work's share of the program's work.
//  * low-parallelism: the program's parallelism is below the adviser's default target, 8 x the
//    cores (of this machine, or the threads recorded if more): the site holding most of the
//    critical path is named. Weight: (1 - parallelism / target) / 4 (the other findings say
//    why, when they can). Not given with a whatif-gain finding, which names the site and more.
//  * region-entries: a parallel region entered 64 times or more whose own strands (the team's
//    start and end, the code around the constructs inside it) hold 10% or more of the critical
//    path, at most 50 us per entry, below the adviser's target: enter the team fewer times.
//    Weight: that share times the span's share of the time on `target` cores (as serial-code).
//    whatif-gain passes over such a site.
//  * work-inflation (report --base): the construct site (diff's unit) whose work grew the most
//    from the base recording, costing 10% or more of this recording's critical path and at
//    least 1.3x the base's work. Weight: that cost's share of the span.
//  * whatif-gain: below the adviser's target (low-parallelism's), the construct site holding
//    most of the critical path, if splitting it 8 ways (whatif --site, parallelize mode) would
//    raise the program's parallelism 1.5x or more.
//    Weight: (1 - before / after) / 3.
//  * untrustworthy: the recording is disturbed: strands clipped by the robust span that moved
//    the parallelism by 10% or more, recorder stalls or preemption over 10% of the work, lost
//    context switches, an incomplete trace, lost data. Weight: 1 (it qualifies every other line).
#pragma once

#include <string>
#include <vector>

#include "analysis/diff.hpp"
#include "analysis/profile.hpp"
#include "analysis/sched.hpp"
#include "analysis/tasks.hpp"
#include "model/model.hpp"
#include "report/profile_report.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::report {

struct DiagnosisItem {
  std::string kind;      // serial-code, tiny-tasks, uneven-shares, team-bound, region-entries,
                         // low-parallelism, work-inflation, whatif-gain, untrustworthy
  std::string finding;   // what is wrong, in a sentence
  std::string evidence;  // the figures behind it
  std::string location;  // file:line or file:first-last; empty when the finding has none
  std::string advice;    // what to do
  double weight = 0;     // the share of the run it explains (ordering)
};

struct DiagnosisInput {
  const model::Model* model = nullptr;
  const analysis::Profile* profile = nullptr;
  const std::vector<SiteLabel>* labels = nullptr;
  const FragmentLabels* fragments = nullptr;
  const SpanAccount* account = nullptr;                          // may be null
  const std::vector<analysis::TypeSizes>* task_sizes = nullptr;  // may be null
  uint64_t tiny_size = 0;  // what "tiny" means, metric units (tasks.hpp's default: 1 us)
  const analysis::Schedule* schedule = nullptr;  // may be null
  const analysis::Diff* base = nullptr;          // report --base's comparison; may be null
};

inline constexpr size_t kDiagnosisLines = 5;

std::vector<DiagnosisItem> diagnose(const DiagnosisInput& input);

// The parallelism the report's findings and `advise` aim at unless told otherwise: 8 x the
// cores, of this machine or the threads recorded if there were more (a recording made on a
// larger machine is judged for it), and how it was chosen, for the user.
double parallelism_target(const model::Model& m);
std::string parallelism_target_origin(const model::Model& m);

// The serial code outside every construct (strands of the Program site) by code fragment group:
// the groups with work, by critical-path share then work, at most `limit` of them.
std::vector<SerialFragment> serial_fragments(const model::Model& model,
                                             const analysis::Profile& profile,
                                             const FragmentLabels& fragments, size_t limit = 8);

// The parallel regions region-entries names (by site index: 1 for those), for `advise`, whose
// steps would otherwise propose parallelizing such a region's own code.
std::vector<uint8_t> regions_entered_too_often(const model::Model& model,
                                               const analysis::Profile& profile);

// The table's lines ("Diagnosis, most important first:" then one numbered line per finding;
// "" when there is none) and the JSON list ([{kind, finding, evidence, location, advice}]).
std::string diagnosis_table(const std::vector<DiagnosisItem>& items);
nlohmann::ordered_json diagnosis_json(const std::vector<DiagnosisItem>& items);

}  // namespace tasklens::report
