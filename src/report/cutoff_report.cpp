#include "report/cutoff_report.hpp"

#include <fmt/format.h>

#include "analysis/tasks.hpp"

namespace tasklens::report {

using analysis::CutoffAdvice;
using analysis::CutoffLevel;
using analysis::CutoffVerdict;
using Json = nlohmann::ordered_json;

namespace {

const CutoffLevel& level_at(const CutoffAdvice& a, uint32_t depth);
const CutoffLevel& recommended_level(const CutoffAdvice& a) { return level_at(a, a.recommended); }

std::string how_to_write(uint32_t depth) {
  return fmt::format(
      "a cut-off at depth {0}: create the tasks only while the recursion is less than {0} deep "
      "(test `depth < {0}` where the task is made, `#pragma omp task` or `task_group::run`, and "
      "make a plain call otherwise, with depth 0 at the top call and passed down; an "
      "`if(depth < {0})` clause runs the calls in the same order but still makes every task)",
      depth);
}

Json level_json(const model::Model& m, const CutoffLevel& l, bool machine) {
  return {
      {"depth", l.depth},
      {"tasks_kept", l.tasks_kept},
      {"leaf_tasks", l.leaf_tasks},
      {"leaf_median_work", l.leaf_median_work},
      {"leaf_median_seconds", seconds_of(m, l.leaf_median_work)},
      {"leaf_smallest_work", l.leaf_smallest_work},
      {"span", l.span},
      {"parallelism", l.parallelism},
      {"burdened_span", l.burdened_span},
      {"burdened_parallelism", l.burdened_parallelism},
      {"cost_on_recorded_threads_seconds", machine ? Json(seconds_of(m, l.machine_cost)) : Json()}};
}

const CutoffLevel& level_at(const CutoffAdvice& a, uint32_t depth) {
  for (const CutoffLevel& l : a.levels)
    if (l.depth == depth) return l;
  return a.recorded;
}

// A size cut-off's figures (null when none is proposed): the level's, with the size.
Json size_json(const model::Model& m, const CutoffLevel& l, bool machine) {
  if (l.min_work == 0) return nullptr;
  Json j = {{"min_work", l.min_work}, {"min_seconds", seconds_of(m, l.min_work)}};
  const Json level = level_json(m, l, machine);
  for (auto it = level.begin(); it != level.end(); ++it)
    if (it.key() != "depth") j[it.key()] = it.value();
  return j;
}

// The recommended depth with its tasks made several calls at a time (null when none is proposed).
Json group_json(const model::Model& m, const CutoffLevel& l, bool machine) {
  if (l.group == 0) return nullptr;
  Json j = {{"calls_per_task", l.group}};
  const Json level = level_json(m, l, machine);
  for (auto it = level.begin(); it != level.end(); ++it) j[it.key()] = it.value();
  return j;
}

// The depth for the recorded threads (null when none is predicted).
Json machine_json(const model::Model& m, const CutoffAdvice& a) {
  if (a.fastest == 0) return nullptr;
  return {{"threads", a.machine.threads},
          {"per_task_cost", a.machine.per_task},
          {"per_task_cost_seconds", seconds_of(m, a.machine.per_task)},
          {"fastest_depth", a.fastest},
          {"least_cost_depth", a.least_cost},
          {"fastest", level_json(m, level_at(a, a.fastest), true)}};
}

// The construct the recursion's parallelism is measured in: its scope, or the nearest construct
// around it with a site ("single at nqueens.c:85").
std::string scope_name(const model::Model& m, const analysis::Recursion& r,
                       const std::vector<SiteLabel>& labels) {
  const uint32_t read_in_passes = r.scope_site;  // (no node kept: its site came with it)
  if (read_in_passes != model::kNone && read_in_passes != 0 && read_in_passes < labels.size() &&
      read_in_passes < m.sites.size())
    return fmt::format("{} at {}", model::to_string(m.sites[read_in_passes].kind),
                       labels[read_in_passes].site);
  for (uint32_t v = r.scope; v < m.nodes.size(); v = m.nodes[v].parent) {
    const uint32_t site = m.nodes[v].site;
    if (site != model::kNone && site != 0 && site < labels.size() && site < m.sites.size())
      return fmt::format("{} at {}", model::to_string(m.sites[site].kind), labels[site].site);
    if (m.nodes[v].parent >= v) break;
  }
  return "whole program";
}

}  // namespace

std::string recursion_name(const analysis::Recursion& r, const std::vector<SiteLabel>& labels) {
  std::string sites, function;
  for (uint32_t s : r.sites) {
    if (s >= labels.size()) continue;
    sites += (sites.empty() ? "" : ", ") + labels[s].site;
    if (function.empty()) function = labels[s].function;
  }
  return function.empty() ? sites : fmt::format("{} ({})", sites, function);
}

namespace {

// Why the recommended depth does not help, and the size cut-off that does, if one does; after
// it, `otherwise`: what to do when none does.
std::string spread_sentence(const model::Model& m, const CutoffAdvice& a,
                            const std::string& otherwise) {
  const CutoffLevel& l = recommended_level(a);
  std::string out = fmt::format(
      "a cut-off by depth cannot remove the small tasks here: the depth that keeps the "
      "parallelism ({}) still makes {} of the {} tasks, since this recursion's tasks are spread "
      "over its levels (a deep or unbalanced tree), not gathered at its bottom",
      l.depth, l.tasks_kept, a.recursion.tasks);
  const CutoffLevel& s = a.size_cutoff;
  if (s.min_work == 0 && !a.coarser_forms_evaluated)
    return out +
           "; whether a cut-off by size does is not evaluated when the recording is read in "
           "passes (read it without --stream where its DAG fits in the memory): " +
           otherwise;
  if (s.min_work == 0) return out + "; nor does a cut-off by size: " + otherwise;
  const std::string overhead =
      a.per_task ? fmt::format(" ({:.1f} with every task charged the tasking overhead of {})",
                               s.burdened_parallelism, format_work(m, a.per_task))
                 : std::string();
  return out + fmt::format(
                   "; cut off by size instead: make a task only for a call whose work, the "
                   "calls under it included, is {} or more, and a plain call otherwise: {} "
                   "tasks, and the parallelism would be about {:.1f}{} for a target of {:g}. "
                   "The call must know its size before it makes the task (the length of its "
                   "range, its subproblem's size); a search whose tree unfolds as it goes "
                   "cannot, and needs several nodes per task instead (a stack of nodes each "
                   "task expands on its own)",
                   format_work(m, s.min_work), s.tasks_kept, s.parallelism, overhead, a.target);
}

std::string depth_sentence(const model::Model& m, const CutoffAdvice& a,
                           const std::vector<SiteLabel>& labels);

// Why the recommended depth's tasks are still too small, and the grouping that makes them
// larger.
std::string group_sentence(const model::Model& m, const CutoffAdvice& a,
                           const std::vector<SiteLabel>& labels) {
  const CutoffLevel& l = recommended_level(a);
  const CutoffLevel& g = a.group_cutoff;
  const std::string overhead =
      fmt::format(" ({:.1f} with every task charged the tasking overhead)", g.burdened_parallelism);
  return fmt::format(
      "but its {} tasks at depth {} are still tiny (median {}, under {} times the tasking "
      "overhead of {}): most calls at that depth do almost nothing, and no depth gathers them. "
      "Make each task run {} of those calls instead: where a task makes its calls at depth {}, "
      "make one task per {} of them, each running its calls one after the other (a loop over "
      "them inside the task); then {} tasks in all, the {} at depth {} doing about {} each "
      "(median), and the parallelism of the {} would be about {:.1f}{}, for a target of {:g}",
      l.leaf_tasks, l.depth, format_work(m, l.leaf_median_work), analysis::kTinyTaskCosts,
      format_work(m, a.per_task), g.group, l.depth, g.group, g.tasks_kept, g.leaf_tasks, l.depth,
      format_work(m, g.leaf_median_work), scope_name(m, a.recursion, labels), g.parallelism,
      overhead, a.target);
}

// The depth for the threads the program was recorded with, beside the target's. The fastest is
// the depth with the fewest tasks whose predicted time is within kSameTime of the least: when a
// deeper depth adds less, the sentence says so rather than call the fastest the quickest.
std::string machine_sentence(const model::Model& m, const CutoffAdvice& a) {
  const CutoffLevel& f = level_at(a, a.fastest);
  const CutoffLevel& r = recommended_level(a);
  const CutoffLevel& least = level_at(a, a.least_cost);
  const uint32_t threads = a.machine.threads;
  const std::string cost = fmt::format(
      "On the {0} threads it was recorded with, a task cost about {1} in this run (the run's "
      "time beyond work / {0} + span, times {0} over its tasks{2})",
      threads, format_work(m, a.machine.per_task),
      a.per_task ? fmt::format(", where one thread pays {}", format_work(m, a.per_task)) : "");
  // (least_cost is the shallowest of the least: it is the fastest unless a deeper depth is
  // predicted quicker within the margin.)
  const bool quickest = least.depth == f.depth;
  const std::string adds =
      fmt::format("adding about {} to the work the threads share", format_work(m, f.machine_cost));
  const std::string fast =
      quickest ? fmt::format("depth {} would run fastest, {}", f.depth, adds)
               : fmt::format(
                     "depth {} would run within {:.0f}% of the quickest predicted, depth {}, with "
                     "{} fewer tasks ({}, against {} at depth {}, on the {} of work / {} every "
                     "depth shares)",
                     f.depth, (analysis::kSameTime - 1) * 100, least.depth,
                     least.tasks_kept - f.tasks_kept, adds, format_work(m, least.machine_cost),
                     least.depth,
                     format_work(m, static_cast<uint64_t>(static_cast<double>(a.work) / threads)),
                     threads);
  if (f.depth == r.depth)
    return fmt::format("{}: there {}; the target's depth is also the one for this machine", cost,
                       fast);
  if (f.depth > r.depth)
    return fmt::format(
        "{}: there {}, against {} at depth {}: its {} more tasks pay for themselves even on {} "
        "threads; write depth {} for this machine",
        cost, fast, format_work(m, r.machine_cost), r.depth, f.tasks_kept - r.tasks_kept, threads,
        f.depth);
  // Shallower than the target's: the target's more tasks either cost more than the parallelism
  // they add brings here, or save less than the margin.
  const std::string deeper =
      r.machine_cost > f.machine_cost
          ? fmt::format(
                ", against {} at depth {}, whose {} more tasks cost more than the "
                "parallelism they add brings on {} threads",
                format_work(m, r.machine_cost), r.depth, r.tasks_kept - f.tasks_kept, threads)
          : fmt::format("; depth {}, the target's, adds about {}", r.depth,
                        format_work(m, r.machine_cost));
  return fmt::format(
      "{}: there {}{}; write depth {} for this machine, depth {} to scale to more "
      "cores",
      cost, fast, deeper, f.depth, r.depth);
}

// The grouped form against the fastest depth on the recorded threads, when it costs less there.
std::string group_machine_sentence(const model::Model& m, const CutoffAdvice& a) {
  const CutoffLevel& g = a.group_cutoff;
  const CutoffLevel& f = level_at(a, a.fastest);
  if (g.group <= 1 || g.machine_cost >= f.machine_cost) return "";
  return fmt::format(
      "; with {} calls per task at depth {}, about {} instead: that form is the one for this "
      "machine too",
      g.group, g.depth, format_work(m, g.machine_cost));
}

}  // namespace

std::string cutoff_sentence(const model::Model& m, const CutoffAdvice& a,
                            const std::vector<SiteLabel>& labels) {
  const std::string by_depth = depth_sentence(m, a, labels);
  std::string advice = a.depth_helps ? by_depth : spread_sentence(m, a, by_depth);
  if (a.group_cutoff.group > 1) advice += "; " + group_sentence(m, a, labels);
  const CutoffLevel& r = recommended_level(a);
  if (!a.coarser_forms_evaluated && a.per_task > 0 && r.leaf_tasks >= 2 &&
      r.leaf_median_work < analysis::kTinyTaskCosts * a.per_task)
    advice += fmt::format(
        "; its {} tasks at depth {} are still tiny (median {}): making each task run several of "
        "those calls may help, which is not evaluated when the recording is read in passes (read "
        "it without --stream where its DAG fits in the memory)",
        r.leaf_tasks, r.depth, format_work(m, r.leaf_median_work));
  return a.fastest > 0 ? advice + ". " + machine_sentence(m, a) + group_machine_sentence(m, a)
                       : advice;
}

namespace {

std::string depth_sentence(const model::Model& m, const CutoffAdvice& a,
                           const std::vector<SiteLabel>& labels) {
  const CutoffLevel& l = recommended_level(a);
  const std::string where = recursion_name(a.recursion, labels);
  const std::string overhead =
      a.per_task ? fmt::format(" ({:.1f} with every task charged the tasking overhead of {})",
                               l.burdened_parallelism, format_work(m, a.per_task))
                 : std::string();
  switch (a.verdict) {
    case CutoffVerdict::Reached:
      if (l.depth >= a.recursion.max_depth)
        return fmt::format(
            "the tasks at {} are needed as deep as they go ({} levels): a shallower cut-off "
            "would bring the parallelism below the target of {:g}; give each task more work of "
            "its own instead (a larger base case)",
            where, a.recursion.max_depth, a.target);
      return fmt::format(
          "write {}: {} tasks instead of {}, the {} deepest doing about {} each (median, the "
          "calls under them included, as recorded); the parallelism of the {} would be about "
          "{:.1f}{}, for a target of {:g} (an estimate from this recording: record the program "
          "with the cut-off to measure it)",
          how_to_write(l.depth), l.tasks_kept, a.recursion.tasks, l.leaf_tasks,
          format_work(m, l.leaf_median_work), scope_name(m, a.recursion, labels), l.parallelism,
          overhead, a.target);
    case CutoffVerdict::ReachedUnburdened:
      return fmt::format(
          "{} would keep the parallelism at {:.1f}, but with every task charged the tasking "
          "overhead of {} it is {:.1f}, below the target of {:g}: the tasks of {} do too little "
          "to pay for themselves at any depth; give each more work of its own (a larger base "
          "case), then cut off there",
          how_to_write(l.depth), l.parallelism, format_work(m, a.per_task), l.burdened_parallelism,
          a.target, where);
    case CutoffVerdict::NotReached:
      break;
  }
  return fmt::format(
      "no cut-off of {} reaches the target of {:g}, the most being {:.1f}: {} keeps {:.1f} of it "
      "with {} tasks instead of {} (the deeper tasks add nothing); what limits the parallelism "
      "is elsewhere on the critical path",
      where, a.target, a.recorded.parallelism, how_to_write(l.depth), l.parallelism, l.tasks_kept,
      a.recursion.tasks);
}

}  // namespace

std::string cutoff_table(const model::Model& m, const std::vector<CutoffAdvice>& advice,
                         const std::vector<SiteLabel>& labels) {
  std::string out;
  for (const CutoffAdvice& a : advice) {
    out += fmt::format(
        "\ncut-off of the recursion at {}: {} tasks, nested up to {} deep; parallelism of the {}\n",
        recursion_name(a.recursion, labels), a.recursion.tasks, a.recursion.max_depth,
        scope_name(m, a.recursion, labels));
    // With a machine prediction, one more column: the time on the recorded threads.
    const bool timed = a.machine.threads > 0;
    const std::string on_threads = timed ? fmt::format("on {} threads", a.machine.threads) : "";
    const std::string column = timed ? fmt::format("cost, {} thr", a.machine.threads) : "";
    out += fmt::format("  {:>6} {:>12} {:>12} {:>16} {:>12} {:>10}{}\n", "depth", "tasks",
                       "deepest", "deepest median", "parallelism", "burdened",
                       timed ? fmt::format(" {:>14}", column) : std::string());
    auto row = [&](const CutoffLevel& l, const std::string& mark) {
      out += fmt::format(
          "  {:>6} {:>12} {:>12} {:>16} {:>12.2f} {:>10.2f}{}{}\n", l.depth, l.tasks_kept,
          l.leaf_tasks, format_work(m, l.leaf_median_work), l.parallelism, l.burdened_parallelism,
          timed ? fmt::format(" {:>14}", format_work(m, l.machine_cost)) : std::string(), mark);
    };
    auto mark_of = [&](const CutoffLevel& l) {
      std::string mark;
      if (l.depth == a.recommended) mark += "  <- recommended";
      if (l.depth == a.fastest)
        mark += mark.empty() ? "  <- fastest " + on_threads : ", fastest " + on_threads;
      if (l.depth == a.least_cost && a.least_cost != a.fastest)
        mark += mark.empty() ? "  <- least cost " + on_threads : ", least cost " + on_threads;
      if (l.depth == a.recorded.depth) mark += mark.empty() ? "  (as recorded)" : " (as recorded)";
      return mark;
    };
    bool recorded_listed = false;
    for (const CutoffLevel& l : a.levels) {
      recorded_listed = recorded_listed || l.depth == a.recorded.depth;
      row(l, mark_of(l));
    }
    if (!recorded_listed) row(a.recorded, mark_of(a.recorded));
    if (a.size_cutoff.min_work > 0)
      out += fmt::format(
          "  {:>6} {:>12} {:>12} {:>16} {:>12.2f} {:>10.2f}{}  <- by size: work >= {}\n", "size",
          a.size_cutoff.tasks_kept, a.size_cutoff.leaf_tasks,
          format_work(m, a.size_cutoff.leaf_median_work), a.size_cutoff.parallelism,
          a.size_cutoff.burdened_parallelism,
          timed ? fmt::format(" {:>14}", format_work(m, a.size_cutoff.machine_cost))
                : std::string(),
          format_work(m, a.size_cutoff.min_work));
    const CutoffLevel& g = a.group_cutoff;
    if (g.group > 1)
      out += fmt::format(
          "  {:>6} {:>12} {:>12} {:>16} {:>12.2f} {:>10.2f}{}  <- depth {}, {} calls per task\n",
          fmt::format("{}x{}", g.depth, g.group), g.tasks_kept, g.leaf_tasks,
          format_work(m, g.leaf_median_work), g.parallelism, g.burdened_parallelism,
          timed ? fmt::format(" {:>14}", format_work(m, g.machine_cost)) : std::string(), g.depth,
          g.group);
    out +=
        "  (tasks: made with that cut-off; deepest: those at that depth, each running the calls "
        "under it; burdened: every task charged the tasking overhead)\n";
    if (timed)
      out += fmt::format(
          "  (cost, {0} thr: what the depth adds on {0} threads to the work / {0} every depth "
          "shares, ({2} x span + tasks x {1}) / {0}, {1} being what a task cost there in this "
          "run; fastest: the fewest tasks within {3:.0f}% of the least predicted time)\n",
          a.machine.threads, format_work(m, a.machine.per_task), a.machine.threads - 1,
          (analysis::kSameTime - 1) * 100);
    if (a.size_cutoff.min_work > 0)
      out +=
          "  (size: a task only for a call whose work, the calls under it included, is at least "
          "that much, at any depth; deepest: the tasks made whose calls are all plain)\n";
    if (g.group > 1)
      out += fmt::format(
          "  ({0}x{1}: depth {0} with each of its tasks running {1} calls made one after the "
          "other; deepest: those tasks)\n",
          g.depth, g.group);
    out += fmt::format("  {}\n", cutoff_sentence(m, a, labels));
  }
  return out;
}

Json cutoff_json(const model::Model& m, const std::vector<CutoffAdvice>& advice,
                 const std::vector<SiteLabel>& labels) {
  Json list = Json::array();
  for (const CutoffAdvice& a : advice) {
    Json sites = Json::array();
    std::string function;
    for (uint32_t s : a.recursion.sites)
      if (s < labels.size()) {
        sites.push_back(labels[s].site);
        if (function.empty()) function = labels[s].function;
      }
    Json levels = Json::array();
    for (const CutoffLevel& l : a.levels) levels.push_back(level_json(m, l, a.machine.threads > 0));
    list.push_back({{"sites", sites},
                    {"function", function},
                    {"scope", scope_name(m, a.recursion, labels)},
                    {"work", a.work},
                    {"tasks", a.recursion.tasks},
                    {"max_depth", a.recursion.max_depth},
                    {"target", a.target},
                    {"per_task_overhead", a.per_task},
                    {"verdict", analysis::to_string(a.verdict)},
                    {"recommended_depth", a.recommended},
                    {"recommended", level_json(m, recommended_level(a), a.machine.threads > 0)},
                    {"recorded", level_json(m, a.recorded, a.machine.threads > 0)},
                    {"levels", levels},
                    {"depth_cutoff_helps", a.depth_helps},
                    {"size_cutoff", size_json(m, a.size_cutoff, a.machine.threads > 0)},
                    {"group_cutoff", group_json(m, a.group_cutoff, a.machine.threads > 0)},
                    {"coarser_forms_evaluated", a.coarser_forms_evaluated},
                    {"for_recorded_threads", machine_json(m, a)},
                    {"advice", cutoff_sentence(m, a, labels)}});
  }
  return list;
}

}  // namespace tasklens::report
