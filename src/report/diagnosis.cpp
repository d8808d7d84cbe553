#include "report/diagnosis.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "analysis/algebra.hpp"
#include "analysis/cutoff.hpp"
#include "analysis/whatif.hpp"
#include "report/cutoff_report.hpp"
#include "report/loop_report.hpp"

namespace tasklens::report {
namespace {

using model::SiteKind;

// A fragment's label as a location: `file:first-last`, or `file:line` for one that starts at the
// program's start or runs to its task's end ("start-f.c:9" and "f.c:9-end" name one line).
std::string fragment_location(std::string label) {
  if (label.rfind("start-", 0) == 0) label.erase(0, 6);
  if (label.size() > 4 && label.compare(label.size() - 4, 4, "-end") == 0)
    label.erase(label.size() - 4);
  return label;
}

std::string where(const SiteLabel& l) {
  return l.function.empty() ? l.site : fmt::format("{} ({})", l.site, l.function);
}

// Critical-path code outside every construct, by fragment group: the largest group and what the
// parallelism would be without it.
void serial_code(const DiagnosisInput& in, std::vector<DiagnosisItem>& out) {
  const model::Model& m = *in.model;
  const analysis::Profile& p = *in.profile;
  const FragmentLabels& fl = *in.fragments;
  if (p.span == 0 || fl.label.empty()) return;
  std::vector<uint64_t> crit(fl.label.size(), 0);
  uint64_t serial = 0;
  for (uint32_t s : p.critical_path) {
    const model::Strand& st = m.strands[s];
    if (st.site >= m.sites.size() || m.sites[st.site].kind != SiteKind::Program) continue;
    if (st.fragment >= fl.group_of.size()) continue;
    const uint64_t w = analysis::path_weight(m, s, st.work);
    crit[fl.group_of[st.fragment]] += w;
    serial += w;
  }
  // Above the adviser's target the span does not limit the speedup on this machine (nor on 8
  // times its cores): a fine-grained fib with a parallelism of 2,000 on 2 cores had its printing
  // at the end, 63 us in a 0.3 s run, named first as half of its critical path.
  const double target = parallelism_target(m);
  if (serial * 10 < p.span || p.parallelism >= target) return;
  const uint32_t g =
      static_cast<uint32_t>(std::max_element(crit.begin(), crit.end()) - crit.begin());
  // The parallelism if that code took no time: one longest path without it.
  std::vector<uint64_t> weights(m.strands.size());
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    const model::Strand& st = m.strands[s];
    const bool mine = st.site < m.sites.size() && m.sites[st.site].kind == SiteKind::Program &&
                      st.fragment < fl.group_of.size() && fl.group_of[st.fragment] == g;
    weights[s] = mine ? 0 : st.work;
  }
  uint64_t work_without = 0;
  for (uint64_t w : weights) work_without += w;
  const uint64_t span_without = analysis::longest_path(m, nullptr, weights.data());
  const std::string& label = fl.label[g];
  const std::string function = fl.function.size() > g ? fl.function[g] : std::string();
  DiagnosisItem d;
  d.kind = "serial-code";
  d.finding = fmt::format(
      "serial code outside any parallel construct is {:.0f}% of the critical "
      "path",
      analysis::percent_of(serial, p.span));
  d.evidence = fmt::format(
      "{}{} takes {} of the {} critical path; without it the parallelism would be {:.2f} (now "
      "{:.2f})",
      label, function.empty() ? "" : " in " + function, format_work(m, crit[g]),
      format_work(m, p.span), analysis::parallelism_of(work_without, span_without), p.parallelism);
  d.location = fragment_location(label);
  d.advice = fmt::format(
      "run that code in parallel (tasks or a parallel loop) or beside the parallel work; "
      "`tasklens whatif --fragment {}` shows the gain factor by factor",
      label);
  // The share of the time on `target` cores that the serial code explains: that time is about
  // work / target + span (Brent), of which the span is 1 / (parallelism / target + 1).
  d.weight =
      static_cast<double>(serial) / static_cast<double>(p.span) / (p.parallelism / target + 1);
  out.push_back(std::move(d));
}

// Task types whose tasks are mostly under 1 us (as tasks.hpp's ManyTinyTasks: half of them,
// and 8 or more).
void tiny_tasks(const DiagnosisInput& in, std::vector<DiagnosisItem>& out) {
  if (!in.task_sizes || in.tiny_size == 0) return;
  const model::Model& m = *in.model;
  const uint64_t work = in.profile->work;
  double delay = 0.5;
  std::string overhead;
  if (in.schedule && in.schedule->cumulative > 0) {
    const analysis::SchedComponents& c = in.schedule->total;
    delay = static_cast<double>(c.delay + c.no_work_sched) /
            static_cast<double>(in.schedule->cumulative);
    overhead = fmt::format(
        "; the workers spent {:.0f}% of their time between tasks with work "
        "ready (the runtime's overhead)",
        100.0 * delay);
  } else if (m.thread_count > 0) {
    // Without the schedule (report): the share of the workers' time outside the program's code
    // over the run (the runtime's overhead, and idling when there was nothing to run).
    uint64_t first = UINT64_MAX, last = 0;
    for (const model::Strand& st : m.strands)
      if (model::is_timed(st)) {
        first = std::min(first, st.start);
        last = std::max(last, st.end);
      }
    const double capacity = last > first ? static_cast<double>(last - first) * m.thread_count : 0;
    if (capacity > 0 && m.metric_is_time) {
      delay = std::clamp(1.0 - static_cast<double>(work) / capacity, 0.0, 1.0);
      overhead = fmt::format("; the workers ran the program's code only {:.0f}% of the time",
                             100.0 * (1.0 - delay));
    }
  }
  // Tiny task types of one recursion (fib's two spawns) are one finding, whose advice is the
  // cut-off to write (analysis/cutoff.hpp); the recursions are found only when needed.
  std::vector<const analysis::TypeSizes*> tiny;
  for (const analysis::TypeSizes& type : *in.task_sizes)
    if (type.count >= 8 && type.tiny * 2 >= type.count && type.site < in.labels->size())
      tiny.push_back(&type);
  if (tiny.empty()) return;
  const bool any_tasks = std::any_of(tiny.begin(), tiny.end(), [](auto* t) { return !t->chunks; });
  const std::vector<analysis::Recursion> recursions =
      any_tasks ? analysis::find_recursions(m) : std::vector<analysis::Recursion>();
  auto recursion_of = [&](const analysis::TypeSizes& type) -> size_t {
    for (size_t r = 0; r < recursions.size() && !type.chunks; ++r)
      if (std::binary_search(recursions[r].sites.begin(), recursions[r].sites.end(), type.site))
        return r;
    return recursions.size();
  };
  uint64_t per_task = 0;
  bool overhead_known = false;
  std::vector<uint8_t> done(recursions.size(), 0);
  for (const analysis::TypeSizes* first : tiny) {
    const size_t r = recursion_of(*first);
    if (r < recursions.size() && done[r]) continue;
    std::vector<const analysis::TypeSizes*> group{first};
    if (r < recursions.size()) {
      done[r] = 1;
      for (const analysis::TypeSizes* other : tiny)
        if (other != first && recursion_of(*other) == r) group.push_back(other);
    }
    uint64_t count = 0, small = 0, total = 0;
    std::string sites;
    const analysis::TypeSizes* largest = first;
    for (const analysis::TypeSizes* t : group) {
      count += t->count;
      small += t->tiny;
      total += t->total;
      sites += (sites.empty() ? "" : ", ") + (*in.labels)[t->site].site;
      if (t->count > largest->count) largest = t;
    }
    DiagnosisItem d;
    d.kind = "tiny-tasks";
    d.finding = fmt::format("the {} at {} are too small to pay for themselves",
                            first->chunks ? "loop chunks" : "tasks", sites);
    d.evidence =
        fmt::format("{} of {} ({:.0f}%) take under 1 us, median {}{}", small, count,
                    analysis::percent_of(small, count), format_work(m, largest->median), overhead);
    d.location = (*in.labels)[largest->site].site;
    if (first->chunks) {
      d.advice =
          "give the loop larger chunks (schedule(dynamic, N) with N iterations worth 10 us or "
          "more)";
    } else if (r < recursions.size()) {
      if (!overhead_known) {
        per_task = analysis::estimate_task_overhead(m).per_task;
        overhead_known = true;
      }
      const analysis::CutoffAdvice cut =
          analysis::advise_cutoff(m, recursions[r], parallelism_target(m), per_task, 0);
      d.advice =
          cutoff_sentence(m, cut, *in.labels) + "; `tasklens advise` shows the depths around it";
    } else {
      d.advice =
          "make each task do more: create fewer, larger tasks (several items per task, or an "
          "if() clause that runs the small ones at once), so that each does 10 us of work or "
          "more";
    }
    const double share = work ? static_cast<double>(total) / static_cast<double>(work) : 0;
    d.weight = share * std::max(delay, 0.1);
    out.push_back(std::move(d));
  }
}

// Task types with too few tasks for the workers (fewer than 4 each, holding 10% of the work or
// more), or one task larger than a worker's share (as tasks.hpp's FewLargeTasks and
// DominantTask).
void few_tasks(const DiagnosisInput& in, std::vector<DiagnosisItem>& out) {
  if (!in.task_sizes) return;
  const model::Model& m = *in.model;
  const uint64_t work = in.profile->work;
  const uint32_t workers = m.thread_count;
  if (workers < 2 || work == 0) return;
  for (const analysis::TypeSizes& type : *in.task_sizes) {
    // Loop chunks are not counted: their number is the schedule's (a static loop has one per
    // thread whatever its iterations); uneven-shares says what matters about them.
    if (type.chunks || type.site >= in.labels->size() || type.count == 0) continue;
    const double share = static_cast<double>(type.total) / static_cast<double>(work);
    const bool few = type.count < 4ull * workers && share >= 0.1;
    const bool dominant = type.count >= 2 && type.max * workers > type.total;
    if (!few && !dominant) continue;
    const SiteLabel& l = (*in.labels)[type.site];
    const char* what = type.chunks ? "loop chunks" : "tasks";
    DiagnosisItem d;
    d.kind = "few-tasks";
    d.finding =
        few ? fmt::format("too few {} at {} to keep {} workers busy", what, l.site, workers)
            : fmt::format("one of the {} at {} is larger than a worker's share", what, l.site);
    d.evidence = fmt::format("{} {}, largest {} of {} in all", type.count, what,
                             format_work(m, type.max), format_work(m, type.total));
    d.location = l.site;
    d.advice = fmt::format(
        "create more, smaller {} there (split the largest), so that every "
        "worker has several",
        what);
    d.weight = 0.4 * share;
    out.push_back(std::move(d));
  }
}

void loops(const DiagnosisInput& in, const std::vector<analysis::LoopFacts>& facts,
           std::vector<DiagnosisItem>& out) {
  const analysis::Profile& p = *in.profile;
  for (const analysis::SiteRow& row : p.sites) {
    if (row.site >= facts.size() || row.site >= in.labels->size()) continue;
    const analysis::LoopFacts& f = facts[row.site];
    const SiteLabel& l = (*in.labels)[row.site];
    if (f.static_instances > 0 && f.share_imbalance >= kImbalanceNote) {
      DiagnosisItem d;
      d.kind = "uneven-shares";
      d.finding = fmt::format("the threads' static shares of the loop at {} are uneven", l.site);
      d.evidence = fmt::format(
          "the slowest share took {:.0f}% longer than the average one, and the rest of the team "
          "waited for it",
          100.0 * f.share_imbalance);
      d.location = l.site;
      d.advice =
          "give the loop schedule(dynamic) or schedule(guided) (or smaller static "
          "chunks), so that threads that finish early take more iterations";
      d.weight = f.share_imbalance / (1 + f.share_imbalance) *
                 (p.span ? static_cast<double>(row.span) / static_cast<double>(p.span) : 0);
      out.push_back(std::move(d));
    }
    if (f.team_bound_work > 0 &&
        static_cast<double>(f.team_bound_work) >= kTeamBoundShare * static_cast<double>(row.work)) {
      DiagnosisItem d;
      d.kind = "team-bound";
      d.finding =
          fmt::format("the parallel region at {} splits its work by the team itself", l.site);
      d.evidence = fmt::format(
          "{:.0f}% of its work ran as one stretch per thread, with no construct the runtime "
          "reports (a loop gcc compiled with a static schedule, or code using "
          "omp_get_thread_num()): its parallelism, {:.2f}, is the {} threads it was recorded "
          "with",
          row.work ? 100.0 * static_cast<double>(f.team_bound_work) / row.work : 0.0,
          row.parallelism, f.team);
      d.location = l.site;
      d.advice =
          "record the clang build, or with more threads than cores (OMP_NUM_THREADS=16), "
          "to see how far it scales";
      d.weight = p.work ? static_cast<double>(f.team_bound_work) / p.work : 0;
      out.push_back(std::move(d));
    }
  }
}

// A parallel region entered again and again (`#pragma omp parallel for` inside a time-step
// loop) whose own strands hold a sizeable share of the critical path, a little at each entry:
// the team's start and end, and the code around the constructs inside it. Splitting that code
// (what whatif-gain would propose for the site holding most of the path) cannot help; entering
// the team fewer times does. A region whose entries hold more than kRegionEntryMax each on the
// path does real work of its own there: the other findings cover it.
constexpr uint64_t kRegionEntries = 64;
constexpr double kRegionEntryShare = 10;   // % of the critical path, directly in the site
constexpr double kRegionEntryMax = 50e-6;  // seconds on the critical path per entry
// The sites that qualify, by site index. A region whose loops gcc split by the team itself
// (team-bound) has its loops' work in its own strands: that is work, not entries.
std::vector<uint8_t> entered_too_often(const model::Model& m, const analysis::Profile& p,
                                       const std::vector<analysis::LoopFacts>& facts) {
  std::vector<uint8_t> out(m.sites.size(), 0);
  for (const analysis::SiteRow& row : p.sites) {
    if (row.site >= m.sites.size() || m.sites[row.site].kind != SiteKind::Parallel ||
        row.count < kRegionEntries || row.critical_path_percent < kRegionEntryShare)
      continue;
    if (row.site < facts.size() && static_cast<double>(facts[row.site].team_bound_work) >=
                                       kTeamBoundShare * static_cast<double>(row.work))
      continue;
    const double per_entry =
        static_cast<double>(row.critical_work) / static_cast<double>(row.count);
    // A metric without a time equivalent (a counter): the count and the share decide alone.
    out[row.site] = !m.metric_is_time || m.ticks_per_second <= 0 ||
                    per_entry <= kRegionEntryMax * m.ticks_per_second;
  }
  return out;
}

void region_entries(const DiagnosisInput& in, const std::vector<uint8_t>& too_often,
                    std::vector<DiagnosisItem>& out) {
  const model::Model& m = *in.model;
  const analysis::Profile& p = *in.profile;
  const double target = parallelism_target(m);
  if (p.span == 0 || p.parallelism >= target) return;
  for (const analysis::SiteRow& row : p.sites) {
    if (!too_often[row.site] || row.site >= in.labels->size()) continue;
    const SiteLabel& l = (*in.labels)[row.site];
    DiagnosisItem d;
    d.kind = "region-entries";
    d.finding = fmt::format(
        "the parallel region at {} is entered {} times, and each entry costs the critical path "
        "{}",
        l.site, row.count, format_work(m, row.critical_work / row.count));
    d.evidence = fmt::format(
        "its own strands (starting and ending the team, and the code around the constructs "
        "inside it) hold {:.0f}% of the critical path",
        row.critical_path_percent);
    d.location = l.site;
    d.advice =
        "create the team once: put one `#pragma omp parallel` around the loop that enters it "
        "again and again, with `#pragma omp for` inside (the serial code between its loops in "
        "`single` or `masked`), or fuse adjacent parallel loops into one region";
    d.weight = row.critical_path_percent / 100.0 / (p.parallelism / target + 1);
    out.push_back(std::move(d));
  }
}

void low_parallelism(const DiagnosisInput& in, const std::vector<uint8_t>& too_often,
                     std::vector<DiagnosisItem>& out) {
  const model::Model& m = *in.model;
  const analysis::Profile& p = *in.profile;
  if (p.span == 0) return;
  const double target = parallelism_target(m);
  if (p.parallelism >= target) return;
  const analysis::SiteRow* top = nullptr;
  for (const analysis::SiteRow& row : p.sites)
    if (m.sites[row.site].kind != SiteKind::Program && row.critical_path_percent > 0 &&
        !too_often[row.site]) {  // region-entries says what to do about those
      top = &row;
      break;
    }
  DiagnosisItem d;
  d.kind = "low-parallelism";
  d.finding = fmt::format(
      "the program's parallelism is {:.2f}: it can keep at most about {:.0f} "
      "cores busy",
      p.parallelism, std::max(1.0, p.parallelism));
  d.evidence =
      fmt::format("work {}, critical path {}", format_work(m, p.work), format_work(m, p.span));
  if (top && top->site < in.labels->size()) {
    const SiteLabel& l = (*in.labels)[top->site];
    d.evidence += fmt::format("; the {} at {} holds {:.0f}% of the critical path",
                              model::to_string(m.sites[top->site].kind), where(l),
                              top->critical_path_percent);
    d.location = l.site;
    d.advice = fmt::format(
        "shorten the critical path there: split that work into more, smaller parallel pieces; "
        "`tasklens whatif --site {}` shows the gain, `tasklens advise` what to change first",
        l.site);
  } else {
    d.advice = "`tasklens advise` says what to change first";
  }
  // The other findings say why, when they can: this one comes after them.
  d.weight = 0.25 * (1 - p.parallelism / target);
  out.push_back(std::move(d));
}

void inflation(const DiagnosisInput& in, std::vector<DiagnosisItem>& out) {
  if (!in.base) return;
  const analysis::Diff& d = *in.base;
  const model::Model& m = *in.model;
  const size_t k = d.sort_metric;
  for (const analysis::UnitDiff& u : d.sites) {  // sorted by cost
    if (u.site_kind == SiteKind::Program || k >= u.metrics.size()) continue;
    const analysis::MetricDiff& x = u.metrics[k];
    if (!(x.ratio >= 1.3) || x.cost_percent < 10) continue;
    DiagnosisItem item;
    item.kind = "work-inflation";
    item.finding = fmt::format(
        "the work at {} grows {:.1f}x from the base recording ({} "
        "thread{}) to this one ({})",
        u.name, x.ratio, d.base.threads, d.base.threads == 1 ? "" : "s", d.other.threads);
    item.evidence = fmt::format(
        "{} more work there; the critical path would be {:.0f}% shorter if it did the base's "
        "work",
        format_work(m, static_cast<uint64_t>(std::max<int64_t>(x.inflation, 0))), x.cost_percent);
    item.location = u.name;
    item.advice =
        "look there for contention, false sharing or lost locality; `tasklens diff` of "
        "the two recordings compares them unit by unit";
    item.weight = x.cost_percent / 100.0;
    out.push_back(std::move(item));
    return;  // the largest one
  }
}

void whatif_gain(const DiagnosisInput& in, const std::vector<uint8_t>& too_often,
                 std::vector<DiagnosisItem>& out) {
  const model::Model& m = *in.model;
  const analysis::Profile& p = *in.profile;
  if (p.span == 0 || p.parallelism >= parallelism_target(m)) return;
  const analysis::SiteRow* top = nullptr;
  // (A region entered too often is region-entries': its own strands are not work to split.)
  for (const analysis::SiteRow& row : p.sites)
    if (m.sites[row.site].kind != SiteKind::Program && row.critical_path_percent >= 20 &&
        !too_often[row.site]) {
      top = &row;
      break;
    }
  if (!top || top->site >= in.labels->size()) return;
  constexpr double kSplit = 8;
  const analysis::Unit unit = analysis::unit_of_sites(m, {top->site}, "");
  const analysis::Weights w =
      analysis::apply_units(m, {&unit}, kSplit, analysis::WhatIfMode::Parallelize);
  uint64_t work = 0;
  for (uint64_t x : w.work) work += x;
  const double after =
      analysis::parallelism_of(work, analysis::longest_path(m, nullptr, w.span.data()));
  if (after < 1.5 * p.parallelism) return;
  const SiteLabel& l = (*in.labels)[top->site];
  DiagnosisItem d;
  d.kind = "whatif-gain";
  d.finding = fmt::format(
      "splitting the {} at {} 8 ways would raise the parallelism from {:.2f} "
      "to {:.2f}",
      model::to_string(m.sites[top->site].kind), l.site, p.parallelism, after);
  d.evidence = fmt::format("it holds {:.0f}% of the critical path (`tasklens whatif --site {}`)",
                           top->critical_path_percent, l.site);
  d.location = l.site;
  d.advice =
      "break its work into smaller parallel pieces (more tasks, a finer loop, a parallel "
      "algorithm inside it)";
  d.weight = (1 - p.parallelism / after) / 3;
  out.push_back(std::move(d));
}

void trust(const DiagnosisInput& in, std::vector<DiagnosisItem>& out) {
  const model::Model& m = *in.model;
  const analysis::Profile& p = *in.profile;
  std::vector<std::string> why;
  std::string location;
  double weight = 0;
  if (!m.complete) {
    why.push_back("the trace is incomplete (the program was killed or data was lost)");
    weight = 1;
  }
  for (const trace::Loss& loss : m.losses) {
    why.push_back(loss.message);
    weight = 1;
  }
  if (in.account && in.account->clipping && !in.account->clipping->strands.empty() &&
      p.parallelism > 0) {
    const double raw = in.account->measured.parallelism;
    const double moved = std::abs(raw - p.parallelism) / p.parallelism;
    if (moved >= 0.10) {
      why.push_back(fmt::format(
          "{} strand(s) far longer than the rest of their code (a paused machine, page faults, "
          "interrupts) were counted at their code's median: as measured the parallelism is "
          "{:.2f}",
          in.account->clipping->strands.size(), raw));
      if (!in.account->fragments.empty())
        location = fragment_location(in.account->fragments.front());
      weight = std::max(weight, 0.3);
    }
  }
  if (m.recorder_stalled * 20 > p.work && p.work > 0) {
    why.push_back(fmt::format("threads waited {} for tasklens's event buffers (taken out)",
                              format_work(m, m.recorder_stalled)));
    weight = std::max(weight, 0.3);
  }
  if (m.switches_lost > 0) {
    why.push_back(fmt::format("{} context switches were not seen", m.switches_lost));
    weight = std::max(weight, 0.3);
  }
  if (m.host_steal_percent >= model::kHostStealDisturbing) {
    why.push_back(fmt::format(
        "the virtual machine's host took {:.0f}% of the CPUs' time away (steal), time the "
        "strands it paused count as work",
        m.host_steal_percent));
    weight = std::max(weight, 0.3);
  }
  if (why.empty()) return;
  DiagnosisItem d;
  d.kind = "untrustworthy";
  d.finding = "this recording is disturbed: read its figures with care";
  for (size_t i = 0; i < why.size(); ++i) d.evidence += (i ? "; " : "") + why[i];
  d.location = location;
  d.advice =
      "record it again on a quiet machine and compare (a figure is a distribution until "
      "it is shown stable)";
  d.weight = weight;
  out.push_back(std::move(d));
}

}  // namespace

double parallelism_target(const model::Model& m) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return 8.0 * std::max<unsigned>(m.thread_count, cores);
}

std::string parallelism_target_origin(const model::Model& m) {
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  return m.thread_count > cores
             ? fmt::format("8 x the {} threads recorded (more than this machine's {} cores)",
                           m.thread_count, cores)
             : fmt::format("8 x the {} cores of this machine", cores);
}

std::vector<SerialFragment> serial_fragments(const model::Model& m, const analysis::Profile& p,
                                             const FragmentLabels& fl, size_t limit) {
  std::vector<SerialFragment> groups(fl.label.size());
  std::vector<uint8_t> on_path(m.strands.size(), 0);
  for (uint32_t s : p.critical_path) on_path[s] = 1;
  for (uint32_t s = 0; s < m.strands.size(); ++s) {
    const model::Strand& st = m.strands[s];
    if (st.site >= m.sites.size() || m.sites[st.site].kind != SiteKind::Program) continue;
    if (st.fragment >= fl.group_of.size() || st.thread == model::kNone) continue;
    SerialFragment& g = groups[fl.group_of[st.fragment]];
    g.work += st.work;
    if (on_path[s]) g.critical += analysis::path_weight(m, s, st.work);
  }
  for (uint32_t g = 0; g < groups.size(); ++g) {
    groups[g].label = fl.label[g];
    if (g < fl.function.size()) groups[g].function = fl.function[g];
  }
  std::erase_if(groups, [](const SerialFragment& f) { return f.work == 0; });
  std::stable_sort(groups.begin(), groups.end(),
                   [](const SerialFragment& a, const SerialFragment& b) {
                     return a.critical != b.critical ? a.critical > b.critical : a.work > b.work;
                   });
  if (groups.size() > limit) groups.resize(limit);
  return groups;
}

std::vector<uint8_t> regions_entered_too_often(const model::Model& model,
                                               const analysis::Profile& profile) {
  return entered_too_often(model, profile, loop_facts_by_site(model));
}

std::vector<DiagnosisItem> diagnose(const DiagnosisInput& in) {
  std::vector<DiagnosisItem> out;
  if (!in.model || !in.profile || !in.labels) return out;
  trust(in, out);
  if (in.fragments) serial_code(in, out);
  tiny_tasks(in, out);
  few_tasks(in, out);
  const std::vector<analysis::LoopFacts> facts = loop_facts_by_site(*in.model);
  const std::vector<uint8_t> too_often = entered_too_often(*in.model, *in.profile, facts);
  loops(in, facts, out);
  region_entries(in, too_often, out);
  inflation(in, out);
  whatif_gain(in, too_often, out);
  // (The what-if names the site and the gain: the plain statement would repeat it.)
  if (std::none_of(out.begin(), out.end(),
                   [](const DiagnosisItem& d) { return d.kind == "whatif-gain"; }))
    low_parallelism(in, too_often, out);
  std::stable_sort(out.begin(), out.end(), [](const DiagnosisItem& a, const DiagnosisItem& b) {
    return a.weight > b.weight;
  });
  if (out.size() > kDiagnosisLines) out.resize(kDiagnosisLines);
  return out;
}

std::string diagnosis_table(const std::vector<DiagnosisItem>& items) {
  if (items.empty()) return "";
  std::string out = "Diagnosis, most important first:\n";
  for (size_t i = 0; i < items.size(); ++i) {
    const DiagnosisItem& d = items[i];
    out += fmt::format("  {}. {}{}: {}. What to do: {}.\n", i + 1, d.finding,
                       d.location.empty() ? "" : " [" + d.location + "]", d.evidence, d.advice);
  }
  return out;
}

nlohmann::ordered_json diagnosis_json(const std::vector<DiagnosisItem>& items) {
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const DiagnosisItem& d : items)
    list.push_back({{"kind", d.kind},
                    {"finding", d.finding},
                    {"evidence", d.evidence},
                    {"location", d.location},
                    {"advice", d.advice}});
  return list;
}

}  // namespace tasklens::report
