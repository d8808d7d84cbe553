// The one policy by which the end-to-end tests judge the timing of real runs.
//
// Most end-to-end checks are exact: that events arrive and are named (sites, lines, kinds,
// counts), exit codes, the JSON contract, data loss. Timing checks are different: a recording of
// a real program on a shared 2-core virtual machine is a sample, and the machine can be
// disturbed while it is taken. This file decides, for every timing check of every e2e test,
// how many recordings, what band, what counts as a disturbed recording, and what the test says
// then. Nothing else in the tests retries, waits for a quiet machine or widens a bound.
//
// The policy
//   1. A check returns two kinds of violation for a sample (one recording, or the several
//      recordings a comparison needs):
//        hard  what no disturbance can explain. The examples spin with tl_work, which counts
//              only time on the CPU, and tasklens takes preemption out: a disturbance can only
//              lengthen a strand. So a work or span BELOW its analytic value (a lost
//              dependence, work dropped) is hard, and so is anything exact. A hard violation
//              fails the test at once, whatever the machine was doing.
//        soft  a figure outside its band (a work, span or parallelism above or beside its
//              expected value). Judged against the recordings' own account of their disturbance:
//   2. Disturbance is what the recording itself measured while the program ran (its report:
//      Health below; or the recorded program's own account: the examples' spins report how far
//      they overran their units (SpinOverrun: a host's pause near a spin's end, a switch's cost),
//      and a figure above its band by no more than that is disturbed; or, for a check that says
//      so, the program's output, such as the loop times the false-sharing example prints), never
//      a guess from probing the machine before or after:
//        - what makes tasklens call a recording untrustworthy: an incomplete trace, lost data
//          or context switches, recorder stalls of 5% of the work or more (unless the test
//          provokes them), clipped strands that moved the parallelism 10% or more,
//        - the virtual machine's host took 2% or more of the CPUs' time (steal),
//        - the robust span clipped 1% or more of the work (the machine paused inside strands),
//        - other processes held the program's CPUs: its threads were switched out while
//          runnable (anywhere in the run: `threads_preempted_percent`) 5% or more of their time
//          beyond what its own threads, if more than the CPUs, take from each other. Preemption
//          is taken out of the work, but a strand preempted again and again pays its switches,
//          and the wall time and the threads' running together are the machine's then,
//        - for checks of real computation (Needs::RealTiming: the suite's programs, whose costs
//          change when their threads do not run at once, unlike the examples' spins): other
//          processes held the threads 5% or more of their time inside strands.
//   3. A sample with no violation passes. A disturbed sample off its band is recorded again
//      (after a second's pause), up to kMaxSamples in all. A sample off its band while
//      undisturbed is unexplained: the band is the program's, and an undisturbed recording
//      must meet it; but no recording sees every disturbance (a host's pause in the runtime's
//      code between two spins, or in a strand whose code fragment has too few instances for
//      the robust span to judge it; a machine whose speed changed between the two recordings
//      a comparison takes). So the check is taken once more, and TWO unexplained samples FAIL
//      it: a real regression (a figure off by the program's or tasklens's doing) is off in
//      every recording and cannot pass this way, and a lost dependence or lost work is hard
//      (rule 1). A check that passes after an unexplained sample prints "[ UNEXPLAINED ]" with
//      its figures, and the suite's summary lists it. When no sample held and fewer than two
//      were unexplained, the check is INCONCLUSIVE: the test is marked skipped with every
//      sample's figures ("INCONCLUSIVE:"), which the summary (scripts/ctest_counts.py) counts
//      apart from passes and failures.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "../../examples/common/work.h"  // TL_UNIT_TICKS

namespace tasklens::e2e {

using nlohmann::json;

// TSC ticks per unit of tl_work() in the examples.
inline constexpr double kUnitTicks = TL_UNIT_TICKS;

// A number of a report's JSON object (NaN when absent or not a number: every comparison with it
// fails).
inline double num(const json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return NAN;
  return j[key].get<double>();
}

// How many samples a disturbed check may take before it is inconclusive.
inline constexpr int kMaxSamples = 3;

// What the check's figures come from: the examples' calibrated spins (the recorder's removal of
// preemption is what is tested: preemption is not a disturbance), or a real program's own
// computation (the suite: its costs change when its threads are preempted); and what the test
// does to its recording on purpose (a program killed, a writer slowed down), which is then no
// disturbance.
struct Needs {
  bool real_timing = false;
  bool incomplete_by_design = false;  // the program is killed: the trace ends early
  bool stalls_by_design = false;      // the writer is slowed down: threads wait for buffers
  static const Needs SpinTiming;
  static const Needs RealTiming;
  Needs incomplete() const {
    Needs n = *this;
    n.incomplete_by_design = true;
    return n;
  }
  Needs stalls() const {
    Needs n = *this;
    n.stalls_by_design = true;
    return n;
  }
};
inline const Needs Needs::SpinTiming{};
inline const Needs Needs::RealTiming{true};

// What a recording measured about its own disturbance (report --format json: docs/report-json.md).
struct Health {
  bool read = false;                 // the report was there
  bool complete = true;              // the trace was finished
  size_t data_lost = 0;              // ways the recording lost data (`data_loss`)
  double switches_lost = 0;          // context switches not seen
  double stall_percent = 0;          // waits for the recorder's buffers in strands, % of the work
  double host_steal_percent = 0;     // the VM's host took this share of the CPUs' time
  double clipped_percent = 0;        // work the robust span clipped, % of the work as measured
  double clipped_shift_percent = 0;  // how far that moved the parallelism
  double preempted_percent = 0;      // time other processes held the threads in strands, % of it
                                     // and the work together
  double threads_preempted_percent = 0;  // the threads switched out while runnable, whole run
  double threads = 0;                    // the program's threads

  // The share of the threads' time that other processes took: the whole run's preemption less
  // what threads beyond the CPUs take from each other (4 threads on 2 CPUs: half of it).
  double others_percent() const {
    const double cpus = double(sysconf(_SC_NPROCESSORS_ONLN));
    const double own = threads > cpus && cpus > 0 ? 100 * (1 - cpus / threads) : 0;
    return std::max(0.0, threads_preempted_percent - own);
  }

  // Why this recording cannot judge a soft check: empty when it can. The thresholds are
  // tasklens's own (the report's warnings and its `untrustworthy` finding), but for the clipped
  // work (1%: any pause that size is a disturbance of the figures judged here).
  std::vector<std::string> disturbed(const Needs& needs) const {
    std::vector<std::string> why;
    auto percent = [](double x) {
      std::ostringstream s;
      s.precision(3);
      s << x << "%";
      return s.str();
    };
    if (!read) why.push_back("no report");
    if (!complete && !needs.incomplete_by_design) why.push_back("the trace is incomplete");
    if (data_lost > 0) why.push_back("the recording lost data");
    if (switches_lost > 0) why.push_back("context switches were lost");
    if (stall_percent >= 5 && !needs.stalls_by_design)
      why.push_back("threads waited " + percent(stall_percent) + " of the work for buffers");
    if (host_steal_percent >= 2)
      why.push_back("the VM's host took " + percent(host_steal_percent) + " of the CPUs' time");
    if (clipped_percent >= 1 || clipped_shift_percent >= 10)
      why.push_back("pauses inside strands: " + percent(clipped_percent) +
                    " of the work clipped, moving the parallelism " +
                    percent(clipped_shift_percent));
    if (others_percent() >= 5)
      why.push_back("other processes held the program's CPUs " + percent(others_percent()) +
                    " of its threads' time");
    if (needs.real_timing && preempted_percent >= 5)
      why.push_back("other processes held the threads " + percent(preempted_percent) +
                    " of their time");
    return why;
  }
  std::string figures() const {
    std::ostringstream s;
    s.precision(3);
    s << "steal " << host_steal_percent << "%, clipped " << clipped_percent << "% (parallelism "
      << clipped_shift_percent << "%), preempted " << preempted_percent << "% (whole run "
      << threads_preempted_percent << "% of " << threads << " threads), stalls " << stall_percent
      << "%" << (complete ? "" : ", incomplete") << (data_lost ? ", data lost" : "")
      << (switches_lost ? ", switches lost" : "");
    return s.str();
  }
};

inline Health health_of(const nlohmann::json& report) {
  Health h;
  if (!report.is_object() || !report.contains("program")) return h;
  h.read = true;
  auto number = [](const nlohmann::json& j, const char* key) {
    return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : 0.0;
  };
  h.complete = report.value("complete", true);
  if (report.contains("data_loss") && report["data_loss"].is_array())
    h.data_lost = report["data_loss"].size();
  h.switches_lost = number(report, "switches_lost");
  h.host_steal_percent = number(report, "host_steal_percent");
  h.threads_preempted_percent = number(report, "threads_preempted_percent");
  h.threads = number(report, "threads");
  const nlohmann::json& program = report["program"];
  const double work = number(program, "work"), work_raw = number(program, "work_raw");
  if (work_raw > 0) {
    h.clipped_percent = 100 * number(report, "clipped_work") / work_raw;
    h.stall_percent = 100 * number(report, "recorder_stalls_removed") / work_raw;
  }
  const double par = number(program, "parallelism"), par_raw = number(program, "parallelism_raw");
  if (par > 0 && par_raw > 0) h.clipped_shift_percent = 100 * std::abs(par_raw - par) / par;
  const double preempted = number(report, "preemption_removed");
  if (work + preempted > 0) h.preempted_percent = 100 * preempted / (work + preempted);
  return h;
}

// The examples' own account of how far their spins overran their units (examples/common/work.h,
// TL_SPIN_REPORT): a host's pause near a spin's end, or a switch whose cost the spin could only
// bound, lengthens a strand beyond its units in the recording's work, and no recording can tell
// that from work. A figure above its analytic value by no more than this is a disturbance the
// program itself measured; one above it by more is not explained by the machine.
struct SpinOverrun {
  bool known = false;  // the program wrote its report
  double spins = 0;    // how many spins ran
  double total = 0;    // units all spins overran together: the most a span or work can gain
  double most = 0;     // units one spin overran at most: the most one strand can gain

  // Reads the report `path` (absent or unreadable: unknown).
  static SpinOverrun read(const std::string& path) {
    SpinOverrun o;
    std::ifstream in(path);
    std::string k1, k2, k3, k4;
    double spins = 0, total = 0, most = 0, unit = 0;
    if (in >> k1 >> spins >> k2 >> total >> k3 >> most >> k4 >> unit && unit > 0) {
      o.known = true;
      o.spins = spins;
      o.total = total / unit;
      o.most = most / unit;
    }
    return o;
  }
  // Why a figure `excess` units above its band is the machine's doing (empty: it is not, or
  // nothing is known): within what the spins overran, in all (`one_strand`: in one spin).
  std::string explains(double excess, bool one_strand = false) const {
    if (!known || !(excess > 0) || excess > (one_strand ? most : total)) return "";
    std::ostringstream s;
    s.precision(4);
    s << "the program's " << spins << " spins overran their units by " << total << " units in all, "
      << most << " at most in one (the machine paused them), enough for the " << excess
      << " units above the band";
    return s.str();
  }
};

// One sample's violations (each a line; empty: none), and what the sample itself measured that
// keeps it from judging its soft checks, beyond its reports' health (for instance the program's
// own timings, printed in the recorded run, showing that the effect to be measured did not
// happen on this machine then).
struct Violations {
  std::string hard;
  std::string soft;
  std::string disturbed;
};

// Adds `part`'s violations to `v`, `prefix` before each of its parts. The program's account
// explains the whole only if it explains every part off its band: once a part is unexplained
// (soft, and nothing disturbed it) the whole stays so, whatever explains the parts after it.
inline void add_violations(Violations& v, const Violations& part, const std::string& prefix = "") {
  const bool explained =
      (v.soft.empty() || !v.disturbed.empty()) && (part.soft.empty() || !part.disturbed.empty());
  const std::string why =
      v.disturbed + (v.disturbed.empty() || part.disturbed.empty() ? "" : "; ") + part.disturbed;
  if (!part.hard.empty()) v.hard += prefix + part.hard;
  if (!part.soft.empty()) v.soft += prefix + part.soft;
  v.disturbed = explained ? why : "";
}

// The outcome of a judged check, for a caller that goes on with exact checks of the sample.
enum class Verdict { Pass, Fail, Inconclusive };

// What an example's work and span should be, in units of tl_work().
struct Analytic {
  double work = 0;
  double span = 0;
  // Allowed relative deviation of the measured parallelism from work / span.
  double par_tol = 0.10;
  // Allowed relative excess of the measured work over the analytic work (the runtime's and the
  // recorder's overhead, interrupts). The work and span can never be below the analytic values:
  // every strand spins its units of TSC ticks on the CPU, and tasklens removes only the time off
  // the CPU (1% slack for rounding and for the part of a switch's own cost that tl_work may count).
  double work_over = 0.10;
};

// The report against `a`, by the timing policy (e2e_timing.hpp): below the analytic work or span
// is hard (work lost, a dependence missing: no disturbance shortens a spin); a work above its
// band or a parallelism off its band is soft.
inline Violations analytic_violations(const json& j, const Analytic& a,
                                      const SpinOverrun& overrun = {}) {
  Violations v;
  if (!j.is_object() || !j.contains("program")) {
    v.hard = "no report\n";
    return v;
  }
  const double work = num(j["program"], "work") / kUnitTicks;
  const double span = num(j["program"], "span") / kUnitTicks;
  const double par = num(j["program"], "parallelism");
  const double want_par = a.work / a.span;
  std::ostringstream hard, soft;
  hard.precision(6);
  soft.precision(6);
  if (!(work >= 0.99 * a.work))
    hard << "work " << work << " units is below the analytic " << a.work
         << " (work was lost: the spins alone take that long)\n";
  if (!(span >= 0.99 * a.span))
    hard << "span " << span << " units is below the analytic " << a.span
         << " (a dependence between strands is missing, or real work was clipped)\n";
  if (!(work <= (1 + a.work_over) * a.work))
    soft << "work " << work << " units exceeds the analytic " << a.work << " by more than "
         << a.work_over * 100 << "%\n";
  if (!(std::abs(par / want_par - 1) <= a.par_tol))
    soft << "parallelism " << par << " is not within " << a.par_tol * 100 << "% of the analytic "
         << want_par << " (work " << work << " / span " << span << " units; analytic " << a.work
         << " / " << a.span << ")\n";
  v.hard = hard.str();
  v.soft = soft.str();
  if (!v.soft.empty()) {
    // What the figures exceed their bands by: the work beyond its band, and the span beyond the
    // longest span that puts the parallelism in its band, at its lower edge (never below the
    // analytic span): a disturbance that lengthened the span by that much explains the sample.
    const double work_excess = std::max(0.0, work - (1 + a.work_over) * a.work);
    const double span_band = std::max(a.span, work / (want_par * std::max(1e-9, 1 - a.par_tol)));
    const double span_excess = par < want_par ? std::max(0.0, span - span_band) : 0.0;
    v.disturbed = overrun.explains(std::max(work_excess, span_excess));
  }
  return v;
}

namespace detail {

inline std::string test_name() {
  const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return info ? std::string(info->test_suite_name()) + "." + info->name() : "?";
}

}  // namespace detail

// What the policy decided on a check's samples: the verdict, and its message (a failure's, or
// the inconclusive check's line with every sample's figures).
struct Judgement {
  Verdict verdict = Verdict::Pass;
  std::string message;
  int samples = 0;      // how many were taken
  int unexplained = 0;  // how many were off their band with no disturbance seen (2: Fail)
};

// The policy's decision on samples taken by `take` (pausing with `pause` before each one after
// the first), without reporting it: judge_timing reports it to the test. Exact: unit-tested in
// tests/unit/timing_policy_test.cpp.
template <class Sample>
Judgement judge_samples(const std::string& what, const Needs& needs,
                        const std::function<Sample()>& take,
                        const std::function<Violations(const Sample&)>& check,
                        const std::function<std::vector<json>(const Sample&)>& reports,
                        const std::function<void()>& pause, Sample* last = nullptr) {
  std::string history;
  Judgement out;
  int unexplained = 0;  // samples off their band with no disturbance seen
  for (int attempt = 1; attempt <= kMaxSamples; ++attempt) {
    if (attempt > 1) pause();
    Sample sample = take();
    out.samples = attempt;
    const Violations v = check(sample);
    std::vector<std::string> disturbed;
    std::string health;
    for (const json& r : reports(sample)) {
      const Health h = health_of(r);
      health += (health.empty() ? "" : "; ") + h.figures();
      for (std::string& why : h.disturbed(needs)) disturbed.push_back(std::move(why));
    }
    if (!v.disturbed.empty()) disturbed.push_back(v.disturbed);
    if (last) *last = sample;
    if (!v.hard.empty()) {
      out.verdict = Verdict::Fail;
      out.message = what + ": " + v.hard + v.soft +
                    "(no disturbance explains this; recording: " + health + ")" + history;
      return out;
    }
    if (v.soft.empty()) {
      out.verdict = Verdict::Pass;
      out.unexplained = unexplained;
      if (attempt > 1)
        out.message = what + ": sample " + std::to_string(attempt) + " holds" + history;
      return out;
    }
    if (disturbed.empty()) {
      if (++unexplained == 2) {
        out.verdict = Verdict::Fail;
        out.unexplained = unexplained;
        out.message = what + ": " + v.soft + "(an undisturbed recording: " + health +
                      "; the second one off its band)" + history;
        return out;
      }
      history += "\n  sample " + std::to_string(attempt) + ", undisturbed by its own account (" +
                 health + "): " + v.soft;
      continue;
    }
    std::string why;
    for (const std::string& d : disturbed) why += (why.empty() ? "" : "; ") + d;
    history += "\n  sample " + std::to_string(attempt) + ", disturbed (" + why + "): " + v.soft;
  }
  out.verdict = Verdict::Inconclusive;
  out.unexplained = unexplained;
  out.message = what + ": no sample held (" +
                (unexplained ? "one off its band undisturbed, the others disturbed)"
                             : "every sample was disturbed)") +
                history;
  return out;
}

// Judges `check` on samples taken by `take`, by the policy above (judge_samples), with a
// second's pause between samples (a burst of the host's activity may pass meanwhile): a failure
// fails the test, an inconclusive check marks it skipped and is counted. `reports` gives the
// reports of a sample's recordings (their Health decides whether it was disturbed). Returns the
// verdict; `last` (if given) receives the sample judged last.
template <class Sample>
Verdict judge_timing(const std::string& what, const Needs& needs,
                     const std::function<Sample()>& take,
                     const std::function<Violations(const Sample&)>& check,
                     const std::function<std::vector<json>(const Sample&)>& reports,
                     Sample* last = nullptr) {
  const Judgement j = judge_samples<Sample>(
      what, needs, take, check, reports, [] { sleep(1); }, last);
  switch (j.verdict) {
    case Verdict::Pass:
      if (j.unexplained > 0) {
        // On stdout, which ctest's JUnit file keeps: scripts/ctest_counts.py lists the test.
        std::cout << "[ UNEXPLAINED ] " << j.message << "\n";
      } else if (!j.message.empty()) {
        std::cerr << "[ timing   ] " << j.message << "\n";
      }
      break;
    case Verdict::Fail:
      ADD_FAILURE() << j.message;
      break;
    case Verdict::Inconclusive: {
      const std::string line = detail::test_name() + ": " + j.message;
      // GTEST_SKIP returns from its own scope only: the caller goes on with its exact checks,
      // and a failure among those still fails the test.
      [&] { GTEST_SKIP() << "INCONCLUSIVE: " << line; }();
      break;
    }
  }
  return j.verdict;
}

}  // namespace tasklens::e2e
