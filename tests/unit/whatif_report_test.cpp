// advise's rendering (report/whatif_report.cpp) of what the recorded run lost beyond its DAG
// (analysis::run_loss): the sentence after the burdened line when most of the run was lost, the
// busy machine's caveat, and the JSON's `run_loss`.
#include "report/whatif_report.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "model_fixtures.hpp"

namespace tasklens {
namespace {

// A program that already reaches its target, recorded on 2 threads in 30 ms where its DAG needs
// at most 1 ms, over 2,000 tasks: 29 us per task over the threads, against 50 ns on one.
report::AdviceReport lossy_report(double switched_out) {
  report::AdviceReport r;
  r.options.target = 16;
  r.advice.work = 1'000'000;
  r.advice.span = 50'000;
  r.advice.parallelism = 20;
  r.advice.stop = analysis::AdviseStop::AlreadyReached;
  r.advice.overhead.per_task = 50;
  r.advice.overhead.source = analysis::OverheadSource::Calibration;
  r.loss.threads = 2;
  r.loss.tasks = 2000;
  r.loss.elapsed = 30'000'000;
  r.loss.greedy_bound = 550'000;
  r.loss.per_task = 29'450;
  r.loss.lost_share = 29'450'000.0 / 30'000'000.0;
  r.loss.switched_out_share = switched_out;
  r.loss.most_lost = true;
  return r;
}

model::Model nanosecond_model() {
  model::Model m = fixtures::fib_model(3);
  m.ticks_per_second = 1e9;  // 1 tick = 1 ns
  return m;
}

TEST(AdviceReport, MostOfTheRunLostIsSaidBesideTheBurdenedFigures) {
  const model::Model m = nanosecond_model();
  const std::string text = report::render_advice(m, lossy_report(0.02), report::FragmentLabels{},
                                                 report::RunInfo{}, report::Format::Table);
  EXPECT_NE(text.find("stopped: the program already reaches the target parallelism"),
            std::string::npos);
  EXPECT_NE(text.find("but this run lost 98.2% of its time beyond its work and critical path: on "
                      "2 threads it took 30.000 ms where a schedule of its DAG without overheads "
                      "needs at most 550.000 us (work / threads + span); the rest is 29.450 us "
                      "per task over the threads, 589 times the 50 ns a task costs on one thread"),
            std::string::npos)
      << text;
  // No recursion to cut off: fewer, larger tasks; with one, its cut-off.
  EXPECT_NE(text.find("make fewer, larger ones"), std::string::npos) << text;
  report::AdviceReport with_cutoff = lossy_report(0.02);
  with_cutoff.cutoffs.emplace_back();
  EXPECT_NE(report::render_advice(m, with_cutoff, report::FragmentLabels{}, report::RunInfo{},
                                  report::Format::Table)
                .find("make fewer of them: the cut-off below is the most the target needs"),
            std::string::npos);
  EXPECT_EQ(text.find("switched out"), std::string::npos) << text;  // (a quiet machine)
  // A busy machine's share is said, with what to do.
  const std::string busy = report::render_advice(m, lossy_report(0.6), report::FragmentLabels{},
                                                 report::RunInfo{}, report::Format::Table);
  EXPECT_NE(busy.find("Its threads were switched out 60% of the run"), std::string::npos) << busy;
  EXPECT_NE(busy.find("record again on a quiet machine"), std::string::npos) << busy;
  // Not most of the run lost: nothing said.
  report::AdviceReport quiet = lossy_report(0);
  quiet.loss.most_lost = false;
  EXPECT_EQ(report::render_advice(m, quiet, report::FragmentLabels{}, report::RunInfo{},
                                  report::Format::Table)
                .find("but this run lost"),
            std::string::npos);
}

TEST(AdviceReport, TheJsonHasTheRunsLossOrNullInOnePass) {
  const model::Model m = nanosecond_model();
  const auto j = nlohmann::json::parse(report::render_advice(
      m, lossy_report(0.25), report::FragmentLabels{}, report::RunInfo{}, report::Format::Json));
  const auto& l = j["run_loss"];
  ASSERT_TRUE(l.is_object()) << j.dump(2);
  EXPECT_EQ(l["threads"], 2);
  EXPECT_EQ(l["tasks"], 2000);
  EXPECT_EQ(l["elapsed"], 30'000'000);
  EXPECT_EQ(l["greedy_bound"], 550'000);
  EXPECT_EQ(l["per_task"], 29'450);
  EXPECT_DOUBLE_EQ(l["per_task_seconds"].get<double>(), 29.45e-6);
  EXPECT_NEAR(l["lost_percent"].get<double>(), 98.17, 0.01);
  EXPECT_DOUBLE_EQ(l["switched_out_percent"].get<double>(), 25);
  EXPECT_EQ(l["most_lost"], true);
  report::AdviceReport one_pass = lossy_report(0);
  one_pass.loss = analysis::RunLoss{};
  const auto k = nlohmann::json::parse(report::render_advice(
      m, one_pass, report::FragmentLabels{}, report::RunInfo{}, report::Format::Json));
  EXPECT_TRUE(k["run_loss"].is_null()) << k.dump(2);
}

}  // namespace
}  // namespace tasklens
