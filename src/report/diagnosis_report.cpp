#include "report/diagnosis_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <variant>

#include "analysis/algebra.hpp"
#include "report/cutoff_report.hpp"

namespace tasklens::report {
namespace {

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

// Says each kind of finding; `out.kind` is set by the caller.
class Writer {
 public:
  Writer(const model::Model& m, const DiagnosisNames& names, DiagnosisItem& out)
      : m_(m), names_(names), d_(out) {}

  void operator()(const analysis::SerialCode& f) {
    const FragmentLabels& fl = *names_.fragments;
    const std::string& label = fl.label[f.group];
    const std::string function = fl.function.size() > f.group ? fl.function[f.group] : "";
    d_.finding = fmt::format(
        "serial code outside any parallel construct is {:.0f}% of the critical "
        "path",
        analysis::percent_of(f.serial, f.span));
    d_.evidence = fmt::format(
        "{}{} takes {} of the {} critical path; without it the parallelism would be {:.2f} (now "
        "{:.2f})",
        label, function.empty() ? "" : " in " + function, format_work(m_, f.group_critical),
        format_work(m_, f.span), f.parallelism_without, f.parallelism);
    d_.location = fragment_location(label);
    d_.advice = fmt::format(
        "run that code in parallel (tasks or a parallel loop) or beside the parallel work; "
        "`tasklens whatif --fragment {}` shows the gain factor by factor",
        label);
  }

  void operator()(const analysis::TinyTasks& f) {
    std::string sites;
    for (uint32_t s : f.sites) sites += (sites.empty() ? "" : ", ") + site(s);
    std::string overhead;
    if (f.delay_source == analysis::DelaySource::Schedule)
      overhead = fmt::format(
          "; the workers spent {:.0f}% of their time between tasks with work "
          "ready (the runtime's overhead)",
          100.0 * f.delay);
    else if (f.delay_source == analysis::DelaySource::Capacity)
      overhead = fmt::format("; the workers ran the program's code only {:.0f}% of the time",
                             100.0 * (1.0 - f.delay));
    d_.finding = fmt::format("the {} at {} are too small to pay for themselves",
                             f.chunks ? "loop chunks" : "tasks", sites);
    d_.evidence = fmt::format("{} of {} ({:.0f}%) take under {}, median {}{}", f.tiny, f.count,
                              analysis::percent_of(f.tiny, f.count), format_work(m_, f.tiny_size),
                              format_work(m_, f.median), overhead);
    d_.location = site(f.largest_site);
    switch (f.advice) {
      case analysis::TinyAdvice::LargerChunks:
        d_.advice =
            "give the loop larger chunks (schedule(dynamic, N) with N iterations worth 10 us or "
            "more)";
        break;
      case analysis::TinyAdvice::Cutoff:
        d_.advice = cutoff_sentence(m_, f.cutoff, *names_.sites) +
                    "; `tasklens advise` shows the depths around it";
        break;
      case analysis::TinyAdvice::LargerTasks:
        d_.advice =
            "make each task do more: create fewer, larger tasks (several items per task, or an "
            "if() clause that runs the small ones at once), so that each does 10 us of work or "
            "more";
        break;
    }
  }

  void operator()(const analysis::FewTasks& f) {
    // (Loop chunks are never few-tasks: their number is the schedule's.)
    const std::string at = site(f.site);
    d_.finding = f.few ? fmt::format("too few tasks at {} to keep {} workers busy", at, f.workers)
                       : fmt::format("one of the tasks at {} is larger than a worker's share", at);
    d_.evidence = fmt::format("{} tasks, largest {} of {} in all", f.count, format_work(m_, f.max),
                              format_work(m_, f.total));
    d_.location = at;
    d_.advice =
        "create more, smaller tasks there (split the largest), so that every "
        "worker has several";
  }

  void operator()(const analysis::UnevenShares& f) {
    d_.finding =
        fmt::format("the threads' static shares of the loop at {} are uneven", site(f.site));
    d_.evidence = fmt::format(
        "the slowest share took {:.0f}% longer than the average one, and the rest of the team "
        "waited for it",
        100.0 * f.imbalance);
    d_.location = site(f.site);
    d_.advice =
        "give the loop schedule(dynamic) or schedule(guided) (or smaller static "
        "chunks), so that threads that finish early take more iterations";
  }

  void operator()(const analysis::TeamBound& f) {
    d_.finding =
        fmt::format("the parallel region at {} splits its work by the team itself", site(f.site));
    d_.evidence = fmt::format(
        "{:.0f}% of its work ran as one stretch per thread, with no construct the runtime "
        "reports (a loop gcc compiled with a static schedule, or code using "
        "omp_get_thread_num()): its parallelism, {:.2f}, is the {} threads it was recorded "
        "with",
        f.work ? 100.0 * static_cast<double>(f.team_bound_work) / f.work : 0.0, f.parallelism,
        f.team);
    d_.location = site(f.site);
    d_.advice =
        "record the clang build, or with more threads than cores (OMP_NUM_THREADS=16), "
        "to see how far it scales";
  }

  void operator()(const analysis::RegionEntries& f) {
    const std::string at = site(f.site);
    d_.finding = fmt::format(
        "the parallel region at {} is entered {} times, and each entry costs the critical path "
        "{}",
        at, f.entries, format_work(m_, f.per_entry));
    d_.evidence = fmt::format(
        "its own strands (starting and ending the team, and the code around the constructs "
        "inside it) hold {:.0f}% of the critical path",
        f.critical_percent);
    d_.location = at;
    d_.advice =
        "create the team once: put one `#pragma omp parallel` around the loop that enters it "
        "again and again, with `#pragma omp for` inside (the serial code between its loops in "
        "`single` or `masked`), or fuse adjacent parallel loops into one region";
  }

  void operator()(const analysis::WorkInflation& f) {
    const std::string& unit = names_.base->sites[f.unit].name;
    d_.finding = fmt::format(
        "the work at {} grows {:.1f}x from the base recording ({} "
        "thread{}) to this one ({})",
        unit, f.ratio, f.base_threads, f.base_threads == 1 ? "" : "s", f.other_threads);
    d_.evidence = fmt::format(
        "{} more work there; the critical path would be {:.0f}% shorter if it did the base's "
        "work",
        format_work(m_, static_cast<uint64_t>(std::max<int64_t>(f.inflation, 0))), f.cost_percent);
    d_.location = unit;
    d_.advice =
        "look there for contention, false sharing or lost locality; `tasklens diff` of "
        "the two recordings compares them unit by unit";
  }

  void operator()(const analysis::WhatIfGain& f) {
    const std::string at = site(f.site);
    d_.finding = fmt::format(
        "splitting the {} at {} {:g} ways would raise the parallelism from {:.2f} "
        "to {:.2f}",
        model::to_string(f.site_kind), at, f.split, f.before, f.after);
    d_.evidence = fmt::format("it holds {:.0f}% of the critical path (`tasklens whatif --site {}`)",
                              f.critical_percent, at);
    d_.location = at;
    d_.advice =
        "break its work into smaller parallel pieces (more tasks, a finer loop, a parallel "
        "algorithm inside it)";
  }

  void operator()(const analysis::LowParallelism& f) {
    d_.finding = fmt::format(
        "the program's parallelism is {:.2f}: it can keep at most about {:.0f} "
        "cores busy",
        f.parallelism, std::max(1.0, f.parallelism));
    d_.evidence =
        fmt::format("work {}, critical path {}", format_work(m_, f.work), format_work(m_, f.span));
    if (f.site != model::kNone && f.site < names_.sites->size()) {
      const SiteLabel& l = (*names_.sites)[f.site];
      d_.evidence += fmt::format("; the {} at {} holds {:.0f}% of the critical path",
                                 model::to_string(f.site_kind), where(l), f.site_critical_percent);
      d_.location = l.site;
      d_.advice = fmt::format(
          "shorten the critical path there: split that work into more, smaller parallel pieces; "
          "`tasklens whatif --site {}` shows the gain, `tasklens advise` what to change first",
          l.site);
    } else {
      d_.advice = "`tasklens advise` says what to change first";
    }
  }

  void operator()(const analysis::CreationBound& f) {
    const std::string at = site(f.site);
    d_.finding = fmt::format(
        "the {} at {} creates its tasks too slowly for them to keep the threads busy: {} tasks "
        "(most at {}) one after another on the critical path, one every {}, each running {} on "
        "average",
        model::to_string(f.site_kind), at, f.created, site(f.task_site), format_work(m_, f.gap),
        format_work(m_, f.task_mean));
    d_.evidence = fmt::format(
        "it holds {:.0f}% of the critical path; while it creates them, at most {:.2f} threads can "
        "be busy (one creating, the tasks ending as fast as they come)",
        f.critical_percent, f.bound);
    // The time per creation against what creating a task costs on one thread: what the rest
    // is, the recording cannot tell (the runtime's and the creator's code both run between two
    // creation events), so both are named.
    if (f.task_cost > 0 && f.gap >= 2 * f.task_cost)
      d_.evidence += fmt::format(
          "; creating an empty task costs the OpenMP runtime about {} on one thread: the rest of "
          "each {} is the runtime's work with other threads taking the tasks{}, or the creator's "
          "own code between two creations",
          format_work(m_, f.task_cost), format_work(m_, f.gap),
          f.dependences ? " and matching each task's `depend` clauses against the tasks before it"
                        : "");
    else if (f.task_cost > 0)
      d_.evidence += fmt::format(
          "; creating an empty task costs the OpenMP runtime about {}: that is most of the time "
          "between two creations",
          format_work(m_, f.task_cost));
    d_.location = at;
    // Tasks of (target - 1) x gap keep target - 1 threads busy beside the creator.
    const uint64_t need =
        static_cast<uint64_t>(std::max(1.0, f.target - 1) * static_cast<double>(f.gap));
    if (f.dependences)
      d_.advice = fmt::format(
          "create fewer, larger tasks (larger blocks or tiles): for a parallelism of {:.0f} each "
          "must run about {}; `depend` orders only tasks created by the same task, so creating "
          "them from several threads is not the way, and splitting the {} does not help",
          f.target, format_work(m_, need), model::to_string(f.site_kind));
    else
      d_.advice = fmt::format(
          "create fewer, larger tasks (for a parallelism of {:.0f} each must run about {}), moving "
          "into them any work the creator does between two creations; or create them from "
          "several threads (a taskloop, or tasks that create tasks)",
          f.target, format_work(m_, need));
  }

  void operator()(const analysis::Untrustworthy& f) {
    std::vector<std::string> why;
    if (f.incomplete)
      why.push_back("the trace is incomplete (the program was killed or data was lost)");
    for (size_t i = 0; i < f.losses && i < m_.losses.size(); ++i)
      why.push_back(m_.losses[i].message);
    if (f.clipped > 0) {
      why.push_back(fmt::format(
          "{} strand(s) far longer than the rest of their code (a paused machine, page faults, "
          "interrupts) were counted at their code's median: as measured the parallelism is "
          "{:.2f}",
          f.clipped, f.measured_parallelism));
      if (names_.account && !names_.account->fragments.empty())
        d_.location = fragment_location(names_.account->fragments.front());
    }
    if (f.recorder_stalled > 0)
      why.push_back(fmt::format("threads waited {} for tasklens's event buffers (taken out)",
                                format_work(m_, f.recorder_stalled)));
    if (f.switches_lost > 0)
      why.push_back(fmt::format("{} context switches were not seen", f.switches_lost));
    if (f.host_steal_percent >= model::kHostStealDisturbing)
      why.push_back(fmt::format(
          "the virtual machine's host took {:.0f}% of the CPUs' time away (steal), time the "
          "strands it paused count as work",
          f.host_steal_percent));
    d_.finding = "this recording is disturbed: read its figures with care";
    for (size_t i = 0; i < why.size(); ++i) d_.evidence += (i ? "; " : "") + why[i];
    d_.advice =
        "record it again on a quiet machine and compare (a figure is a distribution until "
        "it is shown stable)";
  }

 private:
  // A site's label ("file.c:12").
  std::string site(uint32_t s) const {
    return s < names_.sites->size() ? (*names_.sites)[s].site : std::string();
  }

  const model::Model& m_;
  const DiagnosisNames& names_;
  DiagnosisItem& d_;
};

}  // namespace

DiagnosisItem diagnosis_item(const model::Model& m, const analysis::DiagnosisFinding& finding,
                             const DiagnosisNames& names) {
  DiagnosisItem d;
  d.kind = analysis::to_string(finding.kind());
  std::visit(Writer(m, names, d), finding.figures);
  return d;
}

std::vector<DiagnosisItem> diagnosis_items(const model::Model& m,
                                           const std::vector<analysis::DiagnosisFinding>& findings,
                                           const DiagnosisNames& names) {
  std::vector<DiagnosisItem> out;
  for (const analysis::DiagnosisFinding& f : findings) out.push_back(diagnosis_item(m, f, names));
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

std::string parallelism_target_origin(const model::Model& m) {
  const unsigned cores = analysis::machine_cores();
  return m.thread_count > cores
             ? fmt::format("{:g} x the {} threads recorded (more than this machine's {} cores)",
                           analysis::kTargetPerCore, m.thread_count, cores)
             : fmt::format("{:g} x the {} cores of this machine", analysis::kTargetPerCore, cores);
}

std::vector<SerialFragment> serial_fragments(const model::Model& m, const analysis::Profile& p,
                                             const FragmentLabels& fl, size_t limit) {
  std::vector<SerialFragment> out;
  for (const analysis::SerialGroup& g :
       analysis::serial_groups(m, p, fl.group_of, static_cast<uint32_t>(fl.label.size()), limit)) {
    SerialFragment f;
    f.label = fl.label[g.group];
    if (g.group < fl.function.size()) f.function = fl.function[g.group];
    f.work = g.work;
    f.critical = g.critical;
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

// "1 (a.c:3-9, 97% of its work) and 3 (...)": advise's steps a note is about.
std::string steps_named(const std::vector<analysis::StepShare>& steps,
                        const analysis::Advice& advice, const FragmentLabels& fl) {
  std::string which;
  for (size_t k = 0; k < steps.size(); ++k)
    which += fmt::format("{}{} ({}, {:.0f}% of its work)",
                         k == 0                  ? ""
                         : k + 1 == steps.size() ? " and "
                                                 : ", ",
                         steps[k].index + 1, fl.label[advice.steps[steps[k].index].group],
                         100 * steps[k].share);
  return which;
}

}  // namespace

std::vector<std::string> region_entry_notes(const std::vector<analysis::RegionEntrySteps>& regions,
                                            const analysis::Advice& advice,
                                            const FragmentLabels& fl,
                                            const std::vector<SiteLabel>& sites) {
  std::vector<std::string> notes;
  for (const analysis::RegionEntrySteps& r : regions) {
    const auto& steps = r.steps;
    const std::string which = steps_named(steps, advice, fl);
    notes.push_back(fmt::format(
        "step{} {} {} the own code of the parallel region at {}, entered {} times (starting and "
        "ending its team): what parallelizes it is creating the team once, one `#pragma omp "
        "parallel` around the loop that enters it with `#pragma omp for` inside",
        steps.size() == 1 ? "" : "s", which, steps.size() == 1 ? "runs" : "run",
        r.site < sites.size() ? sites[r.site].site : std::string(), r.entries));
  }
  return notes;
}

std::vector<std::string> creation_step_notes(const std::vector<analysis::StepShare>& steps,
                                             const analysis::CreationBound& creator,
                                             const analysis::Advice& advice,
                                             const FragmentLabels& fl,
                                             const std::vector<SiteLabel>& sites,
                                             const model::Model& m) {
  if (steps.empty()) return {};
  const std::string which = steps_named(steps, advice, fl);
  const std::string at = creator.site < sites.size() ? sites[creator.site].site : std::string();
  return {fmt::format(
      "step{} {} {} the time between two task creations of the {} at {}, one every {} for tasks "
      "of {} on average (report's creation-bound finding): that time is the OpenMP runtime's "
      "creating each task{} as much as code of yours, and what shortens it is fewer, larger "
      "tasks{}",
      steps.size() == 1 ? "" : "s", which, steps.size() == 1 ? "is" : "are",
      model::to_string(creator.site_kind), at, format_work(m, creator.gap),
      format_work(m, creator.task_mean),
      creator.dependences ? " and matching its `depend` clauses" : "",
      creator.dependences ? "" : ", or creating them from several threads")};
}

}  // namespace tasklens::report
