// The cut-off adviser's report (report/cutoff_report.cpp): the sentence and the JSON when a
// depth cut-off helps (fib) and when it cannot and a cut-off by size is proposed (an unbalanced
// tree: fixtures::unbalanced_tree_model).
#include "report/cutoff_report.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "analysis/cutoff.hpp"
#include "model_fixtures.hpp"

namespace tasklens {
namespace {

struct Advised {
  model::Model m;
  std::vector<report::SiteLabel> labels;
  std::vector<analysis::CutoffAdvice> advice;
  Advised(model::Model model, double target, uint64_t per_task,
          analysis::CutoffMachine machine = {})
      : m(std::move(model)) {
    m.ticks_per_second = 1e9;  // 1 unit = 1 ns
    labels = {{"<program>", "", 0, "", false, ""}, {"t.c:7", "/src/t.c", 7, "search", false, ""}};
    for (const analysis::Recursion& r : analysis::find_recursions(m))
      advice.push_back(analysis::advise_cutoff(m, r, target, per_task, 2, machine));
  }
};

TEST(CutoffReport, ADepthThatHelpsIsAdvisedAloneAndTheJsonSaysSo) {
  const Advised a(fixtures::fib_model(16), 16, 0);
  ASSERT_EQ(a.advice.size(), 1u);
  const auto j = report::cutoff_json(a.m, a.advice, a.labels);
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0]["depth_cutoff_helps"], true);
  EXPECT_TRUE(j[0]["size_cutoff"].is_null());
  const std::string said = j[0]["advice"].get<std::string>();
  EXPECT_EQ(said.rfind("write a cut-off at depth ", 0), 0u) << said;
  EXPECT_EQ(said.find("by size"), std::string::npos) << said;
  EXPECT_EQ(report::cutoff_table(a.m, a.advice, a.labels).find(" size "), std::string::npos);
  // Nothing known of the recorded threads: nothing said of them.
  EXPECT_TRUE(j[0]["for_recorded_threads"].is_null());
  EXPECT_TRUE(j[0]["recommended"]["cost_on_recorded_threads_seconds"].is_null());
  EXPECT_EQ(said.find("threads it was recorded with"), std::string::npos) << said;
}

// With the recorded threads' cost per task, the depth for them beside the target's: fib(16) for
// a target of 16 is depth 6; on 2 threads where a task costs 100, fewer tasks win (depth 3).
TEST(CutoffReport, TheDepthForTheRecordedThreadsIsGivenBesideTheTargets) {
  const Advised a(fixtures::fib_model(16), 16, 0, {2, 100});
  const analysis::CutoffAdvice& c = a.advice.at(0);
  ASSERT_GT(c.fastest, 0u);
  ASSERT_LT(c.fastest, c.recommended);
  const auto j = report::cutoff_json(a.m, a.advice, a.labels);
  const auto& t = j[0]["for_recorded_threads"];
  ASSERT_TRUE(t.is_object()) << j[0].dump(2);
  EXPECT_EQ(t["threads"], 2);
  EXPECT_EQ(t["per_task_cost"], 100);
  EXPECT_DOUBLE_EQ(t["per_task_cost_seconds"].get<double>(), 100e-9);
  EXPECT_EQ(t["fastest_depth"], c.fastest);
  EXPECT_EQ(t["fastest"]["depth"], c.fastest);
  for (const auto& l : j[0]["levels"])
    EXPECT_TRUE(l["cost_on_recorded_threads_seconds"].is_number()) << l.dump();
  EXPECT_EQ(j[0]["recommended_depth"], c.recommended);  // the target's, as before
  const std::string said = j[0]["advice"].get<std::string>();
  EXPECT_NE(said.find(fmt::format("On the 2 threads it was recorded with, a task cost about 100 "
                                  "ns in this run")),
            std::string::npos)
      << said;
  EXPECT_NE(said.find(fmt::format("write depth {} for this machine, depth {} to scale to more "
                                  "cores",
                                  c.fastest, c.recommended)),
            std::string::npos)
      << said;
  const std::string table = report::cutoff_table(a.m, a.advice, a.labels);
  EXPECT_NE(table.find("cost, 2 thr"), std::string::npos) << table;
  EXPECT_NE(table.find("<- fastest on 2 threads"), std::string::npos) << table;
}

// The depth for the recorded threads is the one with the fewest tasks within kSameTime of the
// least predicted time: where a deeper one is predicted quicker, the sentence names it and its
// cost rather than call the fewer tasks the fastest, and the table marks both. fib(16) on 2
// threads over costs per task that give both cases.
TEST(CutoffReport, AFastestDepthWithinTheMarginOfAQuickerOneSaysSo) {
  int within = 0, quickest = 0;
  for (uint64_t c : {1u, 2u, 4u, 8u, 20u, 50u, 100u, 300u, 1000u}) {
    SCOPED_TRACE(std::to_string(c) + " per task");
    const Advised a(fixtures::fib_model(16), 16, 0, {2, c});
    const analysis::CutoffAdvice& adv = a.advice.at(0);
    ASSERT_GT(adv.fastest, 0u);
    ASSERT_GT(adv.least_cost, 0u);
    const auto j = report::cutoff_json(a.m, a.advice, a.labels);
    EXPECT_EQ(j[0]["for_recorded_threads"]["least_cost_depth"], adv.least_cost);
    const std::string said = j[0]["advice"].get<std::string>();
    const std::string table = report::cutoff_table(a.m, a.advice, a.labels);
    if (adv.least_cost == adv.fastest) {
      ++quickest;
      EXPECT_NE(said.find(fmt::format("there depth {} would run fastest", adv.fastest)),
                std::string::npos)
          << said;
      EXPECT_EQ(table.find("least cost on 2 threads"), std::string::npos) << table;
    } else {
      ++within;
      EXPECT_LT(adv.fastest, adv.least_cost);
      EXPECT_NE(said.find(fmt::format("there depth {} would run within 5% of the quickest "
                                      "predicted, depth {}, with ",
                                      adv.fastest, adv.least_cost)),
                std::string::npos)
          << said;
      EXPECT_EQ(said.find("would run fastest"), std::string::npos) << said;
      EXPECT_NE(table.find("least cost on 2 threads"), std::string::npos) << table;
    }
    EXPECT_NE(table.find("fastest on 2 threads"), std::string::npos) << table;
  }
  EXPECT_GT(within, 0);
  EXPECT_GT(quickest, 0);
}

TEST(CutoffReport, WhereNoDepthHelpsTheSizeCutoffIsWrittenWithItsFigures) {
  const Advised a(fixtures::unbalanced_tree_model(), 8, 2);
  ASSERT_EQ(a.advice.size(), 1u);
  ASSERT_FALSE(a.advice[0].depth_helps);
  const auto j = report::cutoff_json(a.m, a.advice, a.labels);
  EXPECT_EQ(j[0]["depth_cutoff_helps"], false);
  const auto& size = j[0]["size_cutoff"];
  ASSERT_TRUE(size.is_object()) << j[0].dump(2);
  EXPECT_EQ(size["min_work"], 16);
  EXPECT_DOUBLE_EQ(size["min_seconds"].get<double>(), 16e-9);
  EXPECT_EQ(size["tasks_kept"], 327);
  EXPECT_FALSE(size.contains("depth"));
  for (const char* key : {"leaf_tasks", "span", "parallelism", "burdened_parallelism"})
    EXPECT_TRUE(size.contains(key)) << key;
  const std::string said = j[0]["advice"].get<std::string>();
  EXPECT_EQ(said.rfind("a cut-off by depth cannot remove the small tasks here: the depth that "
                       "keeps the parallelism (22) still makes 1981 of the 2277 tasks",
                       0),
            0u)
      << said;
  EXPECT_NE(said.find("make a task only for a call whose work, the calls under it included, is "
                      "16 ns or more"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find(": 327 tasks"), std::string::npos) << said;
  const std::string table = report::cutoff_table(a.m, a.advice, a.labels);
  EXPECT_NE(table.find("<- by size: work >= 16 ns"), std::string::npos) << table;
}

// A wide level of calls that mostly do nothing (fixtures::wide_search_model): the advised depth's
// 512 tasks are still tiny, and the sentence says so and gives the grouping (32 calls a task),
// the table has its row, the JSON its figures; fib's advice has none.
TEST(CutoffReport, TinyTasksAtTheAdvisedDepthAreGroupedSeveralCallsATask) {
  const Advised a(fixtures::wide_search_model(), 8, 1);
  ASSERT_EQ(a.advice.size(), 1u);
  ASSERT_EQ(a.advice[0].group_cutoff.group, 32u);
  const auto j = report::cutoff_json(a.m, a.advice, a.labels);
  const auto& group = j[0]["group_cutoff"];
  ASSERT_TRUE(group.is_object()) << j[0].dump(2);
  EXPECT_EQ(group["calls_per_task"], 32);
  EXPECT_EQ(group["depth"], 2);
  EXPECT_EQ(group["tasks_kept"], 1 + 512 / 32);
  EXPECT_EQ(group["leaf_tasks"], 512 / 32);
  for (const char* key : {"span", "parallelism", "burdened_parallelism", "leaf_median_work"})
    EXPECT_TRUE(group.contains(key)) << key;
  const std::string said = j[0]["advice"].get<std::string>();
  EXPECT_NE(said.find("but its 512 tasks at depth 2 are still tiny (median 10 ns, under 20 times "
                      "the tasking overhead of 1 ns)"),
            std::string::npos)
      << said;
  EXPECT_NE(said.find("Make each task run 32 of those calls instead"), std::string::npos) << said;
  EXPECT_NE(said.find("then 17 tasks in all, the 16 at depth 2"), std::string::npos) << said;
  const std::string table = report::cutoff_table(a.m, a.advice, a.labels);
  EXPECT_NE(table.find("<- depth 2, 32 calls per task"), std::string::npos) << table;
  EXPECT_NE(table.find("(2x32: depth 2 with each of its tasks running 32 calls"), std::string::npos)
      << table;
  const Advised fib(fixtures::fib_model(16), 16, 1);
  const auto k = report::cutoff_json(fib.m, fib.advice, fib.labels);
  EXPECT_TRUE(k[0]["group_cutoff"].is_null());
  EXPECT_EQ(k[0]["advice"].get<std::string>().find("still tiny"), std::string::npos);
}

}  // namespace
}  // namespace tasklens
