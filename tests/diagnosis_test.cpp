// report/diagnosis.hpp on hand-built models: which findings, in which order, located where.
#include "report/diagnosis.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <thread>

#include "model_fixtures.hpp"

namespace tasklens {
namespace {

using fixtures::ModelBuilder;
using model::Model;
using model::NodeKind;
using model::SiteKind;

// report::diagnose on a hand-built model (`fragments` may be null).
std::vector<report::DiagnosisItem> diagnose_model(const Model& m, const analysis::Profile& profile,
                                                  const std::vector<report::SiteLabel>& labels,
                                                  const report::FragmentLabels* fragments) {
  report::DiagnosisInput in;
  in.model = &m;
  in.profile = &profile;
  in.labels = &labels;
  in.fragments = fragments;
  return report::diagnose(in);
}

// Serial code of 600 (fragment 1, "a.c:3-9"), then 4 parallel tasks of 100 (site "a.c:12"):
// W = 1000, S = 700, the serial code is 600/700 of the critical path.
struct Amdahl {
  Model m;
  std::vector<report::SiteLabel> labels;
  report::FragmentLabels fragments;
  analysis::Profile profile;
  Amdahl() {
    ModelBuilder b;
    const uint32_t task = b.add_site(SiteKind::Task);
    const uint32_t serial = b.strand(600);
    std::vector<uint32_t> ends;
    for (int k = 0; k < 4; ++k) {
      b.open(NodeKind::Task, task);
      ends.push_back(b.strand(100, {serial}, k % 2));
      b.close();
    }
    b.strand(0, ends);
    m = b.finish();
    m.fragments = {{0, 0}, {0x10, 0x20}, {0x30, 0}};
    for (model::Strand& s : m.strands) s.fragment = s.site == 0 ? 1 : 2;
    m.thread_count = 2;
    labels = {{"<program>", "", 0, "(outside any construct)", false, ""},
              {"a.c:12", "/src/a.c", 12, "main", false, ""}};
    fragments.group_of = {0, 1, 2};
    fragments.label = {"<unknown>", "a.c:3-9", "a.c:12-end"};
    fragments.function = {"", "main", "main"};
    fragments.begin_file = {"", "/src/a.c", "/src/a.c"};
    profile = analysis::compute_profile(m);
  }
  std::vector<report::DiagnosisItem> diagnose() const {
    return diagnose_model(m, profile, labels, &fragments);
  }
};

TEST(Diagnosis, SerialCodeOnTheCriticalPathComesFirstWithItsFragment) {
  Amdahl a;
  ASSERT_EQ(a.profile.span, 700u);
  const auto items = a.diagnose();
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items[0].kind, "serial-code");
  EXPECT_EQ(items[0].location, "a.c:3-9");
  EXPECT_NE(items[0].finding.find("86%"), std::string::npos) << items[0].finding;
  // Without that code the span is one task: W/S = 400 / 100.
  EXPECT_NE(items[0].evidence.find("would be 4.00"), std::string::npos) << items[0].evidence;
  for (const auto& d : items) {
    EXPECT_FALSE(d.finding.empty());
    EXPECT_FALSE(d.advice.empty());
  }
  EXPECT_LE(items.size(), report::kDiagnosisLines);
}

// Serial code that holds most of the critical path of a program whose parallelism is far above
// the adviser's target (8 x the cores) does not limit its speedup: it is not a finding.
TEST(Diagnosis, SerialCodeIsNoFindingWhenTheParallelismIsAmple) {
  Amdahl a;
  ModelBuilder b;
  const uint32_t task = b.add_site(SiteKind::Task);
  const uint32_t serial = b.strand(600);
  std::vector<uint32_t> ends;
  const unsigned cores = std::max(2u, std::thread::hardware_concurrency());
  const int tasks = static_cast<int>(64 * cores);  // parallelism about 100 x tasks / 700
  for (int k = 0; k < tasks; ++k) {
    b.open(NodeKind::Task, task);
    ends.push_back(b.strand(100, {serial}, k % 2));
    b.close();
  }
  b.strand(0, ends);
  a.m = b.finish();
  a.m.fragments = {{0, 0}, {0x10, 0x20}, {0x30, 0}};
  for (model::Strand& s : a.m.strands) s.fragment = s.site == 0 ? 1 : 2;
  a.m.thread_count = 2;
  a.profile = analysis::compute_profile(a.m);
  ASSERT_GT(a.profile.parallelism, 8.0 * cores);
  ASSERT_GT(a.profile.span, 0u);
  for (const auto& d : a.diagnose()) EXPECT_NE(d.kind, "serial-code") << d.finding;

  // The same serial code before 4 tasks (parallelism 1.43): the first finding, weighed by the
  // span's share of the time on the target's cores.
  Amdahl low;
  const auto items = low.diagnose();
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items[0].kind, "serial-code");
  const double target = 8.0 * cores;
  EXPECT_NEAR(items[0].weight, 600.0 / 700.0 / (low.profile.parallelism / target + 1), 1e-9);
}

TEST(Diagnosis, AnIncompleteTraceIsSaidFirst) {
  Amdahl a;
  a.m.complete = false;
  const auto items = a.diagnose();
  ASSERT_FALSE(items.empty());
  EXPECT_EQ(items[0].kind, "untrustworthy");
}

// A host that took 10% or more of the CPUs' time away during the recording makes it
// untrustworthy; less, or unknown, says nothing.
TEST(Diagnosis, AHostThatStoleTimeMakesTheRecordingUntrustworthy) {
  auto untrustworthy = [](double steal) {
    Amdahl a;
    a.m.host_steal_percent = steal;
    for (const auto& d : a.diagnose())
      if (d.kind == "untrustworthy") return d.evidence;
    return std::string();
  };
  EXPECT_EQ(untrustworthy(-1), "");
  EXPECT_EQ(untrustworthy(9.5), "");
  const std::string evidence = untrustworthy(44);
  EXPECT_NE(evidence.find("took 44% of the CPUs' time away (steal)"), std::string::npos)
      << evidence;
}

TEST(Diagnosis, SerialFragmentsAreListedByCriticalShare) {
  Amdahl a;
  const auto serial = report::serial_fragments(a.m, a.profile, a.fragments);
  ASSERT_EQ(serial.size(), 1u);
  EXPECT_EQ(serial[0].label, "a.c:3-9");
  EXPECT_EQ(serial[0].work, 600u);
  EXPECT_EQ(serial[0].critical, 600u);
}

// A parallel region entered 100 times in a row (a time-step loop around `parallel for`): each
// entry holds `own` of its own (the team's start and end) around a loop of two chunks of 100.
struct Entries {
  Model m;
  std::vector<report::SiteLabel> labels;
  analysis::Profile profile;
  explicit Entries(uint64_t own, double ticks_per_second = 1e9, uint64_t entries = 100) {
    ModelBuilder b;
    const uint32_t par = b.add_site(SiteKind::Parallel);
    const uint32_t loop = b.add_site(SiteKind::Loop);
    uint32_t prev = b.strand(10);
    for (uint64_t i = 0; i < entries; ++i) {
      b.open(NodeKind::Parallel, par);
      const uint32_t fork = b.strand(own / 2, {prev});
      b.open(NodeKind::Loop, loop);
      const uint32_t c0 = b.strand(100, {fork}, 0), c1 = b.strand(100, {fork}, 1);
      b.close();
      prev = b.strand(own - own / 2, {c0, c1});
      b.close();
    }
    b.strand(0, {prev});
    m = b.finish();
    m.thread_count = 2;
    m.ticks_per_second = ticks_per_second;
    labels = {{"<program>", "", 0, "(outside any construct)", false, ""},
              {"s.c:12", "/src/s.c", 12, "main", false, ""},
              {"s.c:13", "/src/s.c", 13, "main", false, ""}};
    profile = analysis::compute_profile(m);
  }
  std::vector<report::DiagnosisItem> diagnose() const {
    return diagnose_model(m, profile, labels, nullptr);
  }
};

const report::DiagnosisItem* find_kind(const std::vector<report::DiagnosisItem>& items,
                                       const std::string& kind) {
  for (const auto& d : items)
    if (d.kind == kind) return &d;
  return nullptr;
}

TEST(Diagnosis, ARegionEnteredAgainAndAgainIsToldToBeEnteredOnce) {
  Entries e(60);  // 60 of 160 per entry: 6000 of the 16010 critical path, 37%
  ASSERT_EQ(e.profile.span, 10u + 100 * 160);
  const auto items = e.diagnose();
  const report::DiagnosisItem* d = find_kind(items, "region-entries");
  ASSERT_NE(d, nullptr) << report::diagnosis_table(items);
  EXPECT_EQ(d->location, "s.c:12");
  EXPECT_NE(d->finding.find("entered 100 times"), std::string::npos) << d->finding;
  EXPECT_NE(d->evidence.find("37%"), std::string::npos) << d->evidence;
  EXPECT_NE(d->advice.find("#pragma omp parallel"), std::string::npos) << d->advice;
  // Nothing tells the user to split the region's own strands.
  for (const auto& item : items) {
    if (item.kind != "whatif-gain" && item.kind != "low-parallelism") continue;
    EXPECT_NE(item.location, "s.c:12") << item.finding;
  }
}

TEST(Diagnosis, ARegionWithWorkOfItsOwnOrFewEntriesIsNotAskedToBeEnteredOnce) {
  // 60 us of its own at each entry (1 tick = 1 ns): real work of the region, not its entry.
  Entries heavy(120000);
  EXPECT_EQ(find_kind(heavy.diagnose(), "region-entries"), nullptr);
  // 10 entries: too few for the entries to be the problem.
  Entries few(60, 1e9, 10);
  EXPECT_EQ(find_kind(few.diagnose(), "region-entries"), nullptr);
  // 2 of 102 per entry: under 10% of the critical path.
  Entries light(2);
  EXPECT_EQ(find_kind(light.diagnose(), "region-entries"), nullptr);
}

TEST(Diagnosis, TheTableAndTheJsonSayTheSame) {
  Amdahl a;
  const auto items = a.diagnose();
  const std::string table = report::diagnosis_table(items);
  EXPECT_EQ(table.rfind("Diagnosis, most important first:\n  1. ", 0), 0u) << table;
  const auto json = report::diagnosis_json(items);
  ASSERT_EQ(json.size(), items.size());
  for (const char* key : {"kind", "finding", "evidence", "location", "advice"})
    EXPECT_TRUE(json[0].contains(key)) << key;
  EXPECT_EQ(report::diagnosis_table({}), "");
}

}  // namespace
}  // namespace tasklens
