// Rendering of `tasklens diff` (report/diff_report.hpp) on hand-made recordings with two metrics
// (end to end, only tsc can be recorded today): the JSON contract of docs/report-json.md with
// every common metric keyed by name, null ratios, the CSV's columns per metric, the table's
// column per further metric, and the notes.
#include "report/diff_report.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "model_fixtures.hpp"

namespace tasklens {
namespace {

using fixtures::ModelBuilder;
using model::Model;
using model::NodeKind;
using model::SiteKind;
using nlohmann::json;

// fork -> task at site 1 (work a) and task at site 2 (work b) -> join; a second metric
// "instructions" with the given amounts for the two tasks.
Model recording(uint64_t a, uint64_t b, uint64_t ia, uint64_t ib, uint32_t threads) {
  ModelBuilder mb;
  const uint32_t s1 = mb.add_site(SiteKind::Task), s2 = mb.add_site(SiteKind::Loop);
  const uint32_t fork = mb.strand(0);
  mb.open(NodeKind::Task, s1);
  const uint32_t x = mb.strand(a, {fork});
  mb.close();
  mb.open(NodeKind::Loop, s2);
  const uint32_t y = mb.strand(b, {fork}, threads > 1 ? 1 : 0);
  mb.close();
  mb.strand(0, {fork, x, y});
  Model m = mb.finish();
  m.extra_metrics = {"instructions"};
  m.extra_work = {0, ia, ib, 0};
  m.thread_count = threads;
  m.ticks_per_second = 1e9;  // 1 tick = 1 ns: tsc amounts show as time
  m.fragments.resize(1);
  return m;
}

struct Fixture {
  Model base = recording(1000, 500, 7000, 3000, 1);
  Model other = recording(4000, 500, 7000, 3100, 2);
  std::vector<report::SiteLabel> labels = {{"<program>", "", 0, "", false, ""},
                                           {"a.c:10", "/src/a.c", 10, "work", false, ""},
                                           {"a.c:20", "/src/a.c", 20, "", false, ""}};
  report::FragmentLabels fragments{{0}, {"a.c:10-12"}, {"work"}, {"/src/a.c"}};
  analysis::Diff diff;
  report::DiffRun b, o;

  Fixture() {
    analysis::DiffInput bi, oi;
    using Input = std::pair<analysis::DiffInput*, Model*>;
    for (auto [in, m] : std::initializer_list<Input>{{&bi, &base}, {&oi, &other}}) {
      in->model = m;
      for (const auto& l : labels) in->site_names.push_back(l.site);
      in->fragment_group = {0};
      in->fragment_names = {"a.c:10-12"};
    }
    analysis::DiffOptions opt;
    opt.min_share = 0;
    diff = analysis::compute_diff(bi, oi, opt);
    using Run = std::pair<report::DiffRun*, Model*>;
    for (auto [run, m] : std::initializer_list<Run>{{&b, &base}, {&o, &other}}) {
      run->model = m;
      run->labels = &labels;
      run->fragments = &fragments;
      run->info.program = "/bin/app";
      run->tsc_hz = 1e9;
    }
    b.info.trace_path = "one.tlens";
    o.info.trace_path = "two.tlens";
  }
};

TEST(DiffReport, JsonHasEveryCommonMetricByName) {
  Fixture f;
  const json j = json::parse(report::render_diff(f.b, f.o, f.diff, report::Format::Json, 100));
  EXPECT_EQ(j["metrics"], json::array({"tsc", "instructions"}));
  EXPECT_EQ(j["sort_metric"], "tsc");
  EXPECT_EQ(j["base"]["work"]["instructions"], 10000);
  EXPECT_EQ(j["other"]["work"]["tsc"], 4500);
  EXPECT_EQ(j["other"]["span"]["tsc"], 4000);
  // Amounts' units per second (for readers such as tasklens view): tsc is a time, 1e9 ticks a
  // second here; instructions are a count.
  EXPECT_EQ(j["base"]["units_per_second"]["tsc"], 1e9);
  EXPECT_EQ(j["other"]["units_per_second"]["instructions"], 0);
  EXPECT_EQ(j["base"]["threads"], 1);
  EXPECT_EQ(j["other"]["workers"], 2);
  ASSERT_GE(j["sites"].size(), 2u);
  const json& first = j["sites"][0];
  EXPECT_EQ(first["unit"], "a.c:10");
  EXPECT_EQ(first["kind"], "task");
  EXPECT_EQ(first["function"], "work");
  EXPECT_DOUBLE_EQ(first["metrics"]["tsc"]["ratio"].get<double>(), 4.0);
  EXPECT_EQ(first["metrics"]["tsc"]["inflation"], 3000);
  // Scaled back to 1000 the task is still the longest path (the loop has 500): cost 3000.
  EXPECT_EQ(first["metrics"]["tsc"]["cost"], 3000);
  EXPECT_DOUBLE_EQ(first["metrics"]["tsc"]["cost_percent"].get<double>(), 75.0);
  EXPECT_DOUBLE_EQ(first["metrics"]["instructions"]["ratio"].get<double>(), 1.0);
  // The program site has no work in either recording: a null ratio.
  bool program_seen = false;
  for (const json& u : j["sites"])
    if (u["kind"] == "program") {
      program_seen = true;
      EXPECT_TRUE(u["metrics"]["tsc"]["ratio"].is_null()) << u.dump();
    }
  EXPECT_TRUE(program_seen);
  EXPECT_EQ(j["fragments"][0]["function"], "work");
  EXPECT_TRUE(j["notes"].empty()) << j["notes"].dump();
}

TEST(DiffReport, CsvHasSevenColumnsPerMetricAndTableOneRatioPerFurtherMetric) {
  Fixture f;
  const std::string csv = report::render_diff(f.b, f.o, f.diff, report::Format::Csv, 100);
  std::istringstream in(csv);
  std::string header, program;
  std::getline(in, header);
  std::getline(in, program);
  EXPECT_EQ(std::count(header.begin(), header.end(), ','), 6 + 2 * 7);
  EXPECT_NE(header.find("instructions_cost_percent"), std::string::npos);
  EXPECT_EQ(program.rfind("program,<whole program>,program,,0,4,4,1500,4500,3,3000,", 0), 0u)
      << program;
  const std::string table = report::render_diff(f.b, f.o, f.diff, report::Format::Table, 100);
  EXPECT_NE(table.find("x instructions"), std::string::npos) << table;
  EXPECT_NE(table.find("a.c:10"), std::string::npos) << table;
  EXPECT_NE(table.find("4.00x"), std::string::npos) << table;
}

TEST(DiffReport, NotesSayWhatTheComparisonCannotShow) {
  Fixture f;
  // Base on 2 workers (not an oracle), another executable, a metric only other has.
  f.base = recording(1000, 500, 7000, 3000, 2);
  f.o.info.program = "/bin/other_app";
  f.other.extra_metrics.push_back("hitm");
  f.other.extra_work.resize(8, 1);
  const std::vector<std::string> notes = report::diff_notes(f.b, f.o, f.diff);
  std::string all;
  for (const auto& n : notes) all += n + "\n";
  EXPECT_NE(all.find("different executables"), std::string::npos) << all;
  EXPECT_NE(all.find("metric hitm is only in other"), std::string::npos) << all;
  // diff.base.workers was computed from the 1-worker base: recompute for the 2-worker one.
  analysis::Diff d = f.diff;
  d.base.workers = 2;
  const std::vector<std::string> more = report::diff_notes(f.b, f.o, d);
  bool oracle = false;
  for (const auto& n : more) oracle |= n.find("not a contention-free oracle") != std::string::npos;
  EXPECT_TRUE(oracle);
  // Other preempted for 10% of its 2 workers x 1000 ticks.
  d.other.elapsed = 1000;
  f.other.preempted = 200;
  std::string preempted;
  for (const auto& n : report::diff_notes(f.b, f.o, d)) preempted += n;
  EXPECT_NE(preempted.find("preempted other's threads for 10%"), std::string::npos) << preempted;
  f.other.preempted = 50;  // 2.5%: no note
  preempted.clear();
  for (const auto& n : report::diff_notes(f.b, f.o, d)) preempted += n;
  EXPECT_EQ(preempted.find("preempted"), std::string::npos) << preempted;
  EXPECT_EQ(preempted.find("runtime's own cost"), std::string::npos) << "none was taken out";
}

// The runtime's own cost taken out of the work (model_runtime_cost_test) is said, per task, for
// both recordings: a team of several threads pays more per task than a one-thread team.
TEST(DiffReport, NotesSayTheRuntimesCostPerTaskWasTakenOut) {
  Fixture f;
  f.base.task_count = 100;
  f.other.task_count = 100;
  f.base.runtime_removed = 6700;    // 67 ns per task at 1e9 ticks per second
  f.other.runtime_removed = 19400;  // 194 ns
  std::string all;
  for (const auto& n : report::diff_notes(f.b, f.o, f.diff)) all += n + "\n";
  EXPECT_NE(all.find("runtime's own cost was taken out of the work (67 ns per task in base, 194 in "
                     "other)"),
            std::string::npos)
      << all;
  EXPECT_NE(all.find("--keep-runtime-cost"), std::string::npos) << all;
  const json j = json::parse(report::render_diff(f.b, f.o, f.diff, report::Format::Json, 100));
  EXPECT_EQ(j["notes"].size(), 1u) << j["notes"].dump();
}

}  // namespace
}  // namespace tasklens
