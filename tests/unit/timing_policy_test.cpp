// The end-to-end tests' timing policy (tests/support/e2e_timing.hpp), on made-up samples: what a
// recording's report says about its disturbance, what the examples' spin report explains, how
// an analytic check splits its violations, and what the policy decides on a sequence of samples.
// Exact: nothing here records or times anything.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "e2e_timing.hpp"

namespace tasklens::e2e {
namespace {

// A report (report --format json) with the program's figures in units and the given health.
json report(double work, double span, json extra = json::object()) {
  json j = {{"program",
             {{"work", work * kUnitTicks},
              {"work_raw", work * kUnitTicks},
              {"span", span * kUnitTicks},
              {"parallelism", work / span},
              {"parallelism_raw", work / span}}},
            {"complete", true},
            {"threads", 1}};
  for (auto& [k, v] : extra.items()) j[k] = v;
  return j;
}

std::string temp_file(const std::string& text) {
  char name[] = "/tmp/tasklens-timing-XXXXXX";
  const int fd = mkstemp(name);
  EXPECT_GE(fd, 0);
  close(fd);
  std::ofstream(name) << text;
  return name;
}

TEST(SpinOverrun, ReadsTheProgramsReportInUnits) {
  const std::string path = temp_file(
      "spins 40 overrun_ticks 100000 overrun_max_ticks 30000 "
      "unit_ticks 2000\n");
  const SpinOverrun o = SpinOverrun::read(path);
  std::remove(path.c_str());
  EXPECT_TRUE(o.known);
  EXPECT_EQ(o.spins, 40);
  EXPECT_EQ(o.total, 50);
  EXPECT_EQ(o.most, 15);
}

TEST(SpinOverrun, AnAbsentOrDamagedReportIsUnknownAndExplainsNothing) {
  EXPECT_FALSE(SpinOverrun::read("/nonexistent/tasklens-spins").known);
  const std::string path = temp_file("spins 40 overrun_ticks\n");
  const SpinOverrun o = SpinOverrun::read(path);
  std::remove(path.c_str());
  EXPECT_FALSE(o.known);
  EXPECT_EQ(o.explains(1), "");
}

TEST(SpinOverrun, ExplainsAnExcessUpToWhatTheSpinsOverran) {
  SpinOverrun o;
  o.known = true;
  o.spins = 10;
  o.total = 50;
  o.most = 15;
  EXPECT_NE(o.explains(50), "");
  EXPECT_EQ(o.explains(50.01), "");
  EXPECT_NE(o.explains(15, true), "");  // one strand: the most one spin overran
  EXPECT_EQ(o.explains(15.01, true), "");
  EXPECT_EQ(o.explains(0), "");  // nothing to explain
  EXPECT_NE(o.explains(20).find("10 spins"), std::string::npos);
}

TEST(Health, ReadsItsFiguresFromTheReport) {
  json j = report(1000, 100,
                  {{"clipped_work", 20 * kUnitTicks},
                   {"recorder_stalls_removed", 60 * kUnitTicks},
                   {"preemption_removed", 1000 * kUnitTicks / 3},
                   {"host_steal_percent", 1.5},
                   {"threads_preempted_percent", 4},
                   {"switches_lost", 0},
                   {"data_loss", json::array({"x"})}});
  j["program"]["parallelism_raw"] = 11;
  const Health h = health_of(j);
  EXPECT_TRUE(h.read);
  EXPECT_DOUBLE_EQ(h.clipped_percent, 2);
  EXPECT_DOUBLE_EQ(h.stall_percent, 6);
  EXPECT_DOUBLE_EQ(h.clipped_shift_percent, 10);
  EXPECT_DOUBLE_EQ(h.preempted_percent, 25);
  EXPECT_DOUBLE_EQ(h.host_steal_percent, 1.5);
  EXPECT_EQ(h.data_lost, 1u);
  EXPECT_FALSE(health_of(json()).read);
}

TEST(Health, EachDisturbanceCountsFromItsThreshold) {
  auto reasons = [](Health h, const Needs& needs = Needs::SpinTiming) {
    h.read = true;
    h.threads = 1;
    return h.disturbed(needs).size();
  };
  EXPECT_EQ(reasons({}), 0u);
  Health h;
  h.host_steal_percent = 1.99;
  EXPECT_EQ(reasons(h), 0u);
  h.host_steal_percent = 2;
  EXPECT_EQ(reasons(h), 1u);
  h = {};
  h.clipped_percent = 0.99;
  EXPECT_EQ(reasons(h), 0u);
  h.clipped_percent = 1;
  EXPECT_EQ(reasons(h), 1u);
  h = {};
  h.stall_percent = 5;
  EXPECT_EQ(reasons(h), 1u);
  EXPECT_EQ(reasons(h, Needs::SpinTiming.stalls()), 0u);  // the test slows the writer itself
  h = {};
  h.complete = false;
  EXPECT_EQ(reasons(h), 1u);
  EXPECT_EQ(reasons(h, Needs::SpinTiming.incomplete()), 0u);
  h = {};
  h.preempted_percent = 5;  // inside strands: a disturbance of real computation only
  EXPECT_EQ(reasons(h), 0u);
  EXPECT_EQ(reasons(h, Needs::RealTiming), 1u);
  h = {};
  h.threads_preempted_percent = 5;
  EXPECT_EQ(reasons(h), 1u);
}

TEST(Health, ThreadsBeyondTheCpusDoNotCountAsOtherProcesses) {
  const double cpus = double(sysconf(_SC_NPROCESSORS_ONLN));
  Health h;
  h.read = true;
  h.threads = 2 * cpus;  // half their time is each other's
  h.threads_preempted_percent = 54;
  EXPECT_DOUBLE_EQ(h.others_percent(), 4);
  EXPECT_TRUE(h.disturbed(Needs::SpinTiming).empty());
  h.threads_preempted_percent = 56;
  EXPECT_DOUBLE_EQ(h.others_percent(), 6);
  EXPECT_EQ(h.disturbed(Needs::SpinTiming).size(), 1u);
}

// Parts of one sample's check: explained only while every part off its band is.
TEST(AddViolations, TheWholeIsExplainedOnlyIfEveryPartOffItsBandIs) {
  const Violations fine, paused{"", "span off\n", "a pause"}, lost{"", "work off\n", ""},
      broken{"span below\n", "", ""};
  Violations v;
  add_violations(v, fine);
  add_violations(v, paused, "row: ");
  EXPECT_EQ(v.soft, "row: span off\n");
  EXPECT_EQ(v.disturbed, "a pause");
  add_violations(v, paused);
  EXPECT_EQ(v.disturbed, "a pause; a pause");
  add_violations(v, lost);  // one unexplained part: the whole is
  EXPECT_EQ(v.disturbed, "");
  add_violations(v, paused);  // and stays so
  EXPECT_EQ(v.disturbed, "");
  EXPECT_EQ(v.soft, "row: span off\nspan off\nwork off\nspan off\n");
  Violations w;
  add_violations(w, lost);
  add_violations(w, paused);
  EXPECT_EQ(w.disturbed, "");
  add_violations(w, broken, "row: ");
  EXPECT_EQ(w.hard, "row: span below\n");
}

TEST(AnalyticViolations, BelowTheAnalyticWorkOrSpanIsHard) {
  const Analytic a{1000, 100};
  SpinOverrun plenty;
  plenty.known = true;
  plenty.total = plenty.most = 1e9;
  Violations v = analytic_violations(report(1000, 98.9), a, plenty);
  EXPECT_NE(v.hard.find("span"), std::string::npos);  // a lost dependence
  v = analytic_violations(report(989, 100), a, plenty);
  EXPECT_NE(v.hard.find("work"), std::string::npos);
  v = analytic_violations(report(1000, 99), a);  // 1% for rounding
  EXPECT_EQ(v.hard, "");
  EXPECT_EQ(v.soft, "");
  EXPECT_NE(analytic_violations(json(), a).hard, "");
}

TEST(AnalyticViolations, AWorkAboveItsBandIsDisturbedOnlyWithinTheSpinsOverrun) {
  const Analytic a{1000, 100};
  SpinOverrun o;
  o.known = true;
  o.total = 50;  // the excess: 1,150 against a band up to 1,100
  o.most = 50;
  Violations v = analytic_violations(report(1150, 100), a, o);
  EXPECT_EQ(v.hard, "");
  EXPECT_NE(v.soft.find("work"), std::string::npos);
  EXPECT_NE(v.disturbed, "");
  o.total = 49.9;
  v = analytic_violations(report(1150, 100), a, o);
  EXPECT_NE(v.soft, "");
  EXPECT_EQ(v.disturbed, "");
  v = analytic_violations(report(1150, 100), a);  // no report from the program
  EXPECT_EQ(v.disturbed, "");
}

TEST(AnalyticViolations, ASpanAboveItsBandIsMeasuredFromTheLongestSpanInTheBand) {
  // Work 1,000, span 125: parallelism 8 against 10, whose band goes down to 9: the longest span
  // in the band is 1,000 / 9, and a disturbance of 125 - 1,000 / 9 explains the sample.
  Analytic a{1000, 100};
  SpinOverrun o;
  o.known = true;
  o.total = 125 - 1000.0 / 9 + 0.01;
  Violations v = analytic_violations(report(1000, 125), a, o);
  EXPECT_NE(v.soft.find("parallelism"), std::string::npos);
  EXPECT_NE(v.disturbed, "");
  o.total = 125 - 1000.0 / 9 - 0.01;
  EXPECT_EQ(analytic_violations(report(1000, 125), a, o).disturbed, "");
  // A work within a wider band: the longest span in the parallelism's band is 1,180 / 9.
  a.work_over = 0.2;
  o.total = 140 - 1180.0 / 9 + 0.01;
  EXPECT_NE(analytic_violations(report(1180, 140), a, o).disturbed, "");
  o.total = 140 - 1180.0 / 9 - 0.01;
  EXPECT_EQ(analytic_violations(report(1180, 140), a, o).disturbed, "");
}

// A made-up sequence of samples: sample i (from 0) has the violations `script[i]`.
struct Script {
  explicit Script(std::vector<Violations> s) : samples(std::move(s)) {}
  std::vector<Violations> samples;
  std::vector<json> health;  // each sample's report (default: an undisturbed one)
  int taken = 0;
  int pauses = 0;
  Judgement judge() {
    return judge_samples<int>(
        "the check", Needs::SpinTiming, [&] { return taken++; },
        [&](const int& i) { return samples.at(size_t(i)); },
        [&](const int& i) {
          return std::vector<json>{size_t(i) < health.size() ? health[size_t(i)] : report(100, 10)};
        },
        [&] { ++pauses; });
  }
};

Violations soft(const std::string& disturbed = "") { return {"", "off its band\n", disturbed}; }

TEST(JudgeSamples, AnUndisturbedSampleInItsBandPassesAtOnce) {
  Script s(std::vector<Violations>(1));
  const Judgement j = s.judge();
  EXPECT_EQ(j.verdict, Verdict::Pass);
  EXPECT_EQ(j.samples, 1);
  EXPECT_EQ(s.pauses, 0);
  EXPECT_EQ(j.message, "");
}

TEST(JudgeSamples, TwoUndisturbedSamplesOffTheirBandFail) {
  Script s({soft(), soft(), {}});
  const Judgement j = s.judge();
  EXPECT_EQ(j.verdict, Verdict::Fail);
  EXPECT_EQ(j.samples, 2);
  EXPECT_EQ(j.unexplained, 2);
  EXPECT_NE(j.message.find("an undisturbed recording"), std::string::npos);
  EXPECT_NE(j.message.find("sample 1, undisturbed by its own account"), std::string::npos);
}

TEST(JudgeSamples, OneUndisturbedSampleOffItsBandIsTakenAgainAndSaidSo) {
  Script s({soft(), {}});
  const Judgement j = s.judge();
  EXPECT_EQ(j.verdict, Verdict::Pass);
  EXPECT_EQ(j.samples, 2);
  EXPECT_EQ(j.unexplained, 1);
  EXPECT_NE(j.message.find("sample 2 holds"), std::string::npos);
  EXPECT_NE(j.message.find("undisturbed by its own account"), std::string::npos);
}

TEST(JudgeSamples, UnexplainedSamplesFailEvenWithADisturbedOneBetween) {
  Script s({soft(), soft("spins overran"), soft(), {}});
  const Judgement j = s.judge();
  EXPECT_EQ(j.verdict, Verdict::Fail);
  EXPECT_EQ(j.samples, 3);
}

TEST(JudgeSamples, OneUnexplainedAndTheOthersDisturbedIsInconclusive) {
  Script s({soft("a"), soft(), soft("c"), {}});
  const Judgement j = s.judge();
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_EQ(j.samples, kMaxSamples);
  EXPECT_EQ(j.unexplained, 1);
  EXPECT_NE(j.message.find("one off its band undisturbed"), std::string::npos);
}

TEST(JudgeSamples, AHardViolationFailsEvenInADisturbedSample) {
  Script s({{"span below the analytic\n", "", "the machine paused"}, {}});
  s.health = {report(100, 10, {{"host_steal_percent", 50}})};
  const Judgement j = s.judge();
  EXPECT_EQ(j.verdict, Verdict::Fail);
  EXPECT_EQ(j.samples, 1);
  EXPECT_NE(j.message.find("no disturbance explains this"), std::string::npos);
}

TEST(JudgeSamples, ADisturbedSampleOffItsBandIsTakenAgain) {
  Script s({soft("spins overran"), {}});
  const Judgement j = s.judge();
  EXPECT_EQ(j.verdict, Verdict::Pass);
  EXPECT_EQ(j.samples, 2);
  EXPECT_EQ(s.pauses, 1);
  EXPECT_NE(j.message.find("sample 2 holds"), std::string::npos);
  EXPECT_NE(j.message.find("spins overran"), std::string::npos);
}

TEST(JudgeSamples, TheReportsHealthIsADisturbanceToo) {
  Script s({soft(), {}});
  s.health = {report(100, 10, {{"host_steal_percent", 3}})};
  const Judgement j = s.judge();
  EXPECT_EQ(j.verdict, Verdict::Pass);
  EXPECT_EQ(j.samples, 2);
  EXPECT_EQ(j.unexplained, 0);  // the first sample was disturbed, by its report
  EXPECT_NE(j.message.find("the VM's host took 3%"), std::string::npos);
}

TEST(JudgeSamples, EverySampleDisturbedAndOffIsInconclusive) {
  Script s({soft("a"), soft("b"), soft("c"), {}});
  const Judgement j = s.judge();
  EXPECT_EQ(j.verdict, Verdict::Inconclusive);
  EXPECT_EQ(j.samples, kMaxSamples);
  EXPECT_EQ(s.pauses, kMaxSamples - 1);
  EXPECT_NE(j.message.find("sample 3, disturbed (c)"), std::string::npos);
}

}  // namespace
}  // namespace tasklens::e2e
