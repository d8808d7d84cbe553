// Task sizes, waiting and idle times per task type (analysis/tasks.hpp): exact values on
// hand-built models and on a synthetic trace through the real builder, percentiles, the log2
// histogram's bin edges, each finding's trigger and non-trigger, and the comparison of two
// recordings.
#include "analysis/tasks.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "model_fixtures.hpp"
#include "model_team.hpp"
#include "report/tasks_report.hpp"
#include "trace/format.hpp"
#include "trace_builder.hpp"

namespace tasklens {
namespace {

using analysis::FindingKind;
using analysis::kNoTime;
using analysis::TaskOptions;
using analysis::TaskProfile;
using fixtures::ModelBuilder;
using model::kNone;
using model::Model;
using model::NodeKind;
using model::SiteKind;

using fixtures::set_time;

const analysis::TaskSample* sample_of(const std::vector<analysis::TaskSample>& v, uint32_t node) {
  for (const auto& s : v)
    if (s.node == node) return &s;
  return nullptr;
}

bool has(const TaskProfile& p, FindingKind k, size_t type = 0) {
  for (const auto& f : p.findings)
    if (f.kind == k && f.type == type) return true;
  return false;
}

// A spawner strand on thread 0 ending at time R, then one task per entry, each one strand of
// `size` work on thread `thread` (0: a thread of its own, 1 + index), starting `wait` after R;
// before it, on the same thread, a strand outside every task that ends `idle` before the start.
struct Spec {
  uint64_t size, wait, idle;
  uint32_t thread = 0;
};
constexpr uint64_t R = 1'000'000;

Model tasks_model(const std::vector<Spec>& specs, SiteKind kind = SiteKind::Task) {
  ModelBuilder b;
  const uint32_t site = b.add_site(kind);
  std::vector<uint32_t> fillers, firsts;
  const uint32_t spawn = b.strand(10);
  for (size_t i = 0; i < specs.size(); ++i) fillers.push_back(b.strand(1));
  for (size_t i = 0; i < specs.size(); ++i) {
    b.open(NodeKind::Task, site);
    firsts.push_back(b.strand(specs[i].size, {spawn}));
    b.close();
  }
  Model m = b.finish();
  set_time(m, spawn, 0, R - 10, R);
  for (size_t i = 0; i < specs.size(); ++i) {
    const uint32_t t = specs[i].thread ? specs[i].thread : static_cast<uint32_t>(i + 1);
    const uint64_t start = R + specs[i].wait;
    set_time(m, fillers[i], t, start - specs[i].idle - 1, start - specs[i].idle);
    set_time(m, firsts[i], t, start, start + specs[i].size);
  }
  return m;
}

TaskOptions options(uint64_t tiny = 0) {
  TaskOptions o;
  o.tiny_size = tiny;
  return o;
}

// ---- Samples: sizes, waits, idle times, what counts as a task and as its type.

TEST(TaskSamples, SizeIsTheTasksOwnStrandsAndWaitIsFromItsCreatorsEnd) {
  ModelBuilder b;
  const uint32_t task = b.add_site(SiteKind::Task);
  const uint32_t group = b.add_site(SiteKind::Taskgroup);
  const uint32_t s0 = b.strand(5);                       // main: creates T at 100
  const uint32_t t_node = b.open(NodeKind::Task, task);  // T
  const uint32_t t0 = b.strand(30, {s0});                // T runs 30, creates C
  const uint32_t c_node = b.open(NodeKind::Task, task);  // C: a child, not T's size
  const uint32_t c0 = b.strand(1000, {t0});
  b.close();
  const uint32_t t1 = b.strand(20, {t0});  // T continues beside C
  b.open(NodeKind::Taskgroup, group);      // still T's own strands
  const uint32_t t2 = b.strand(7, {t1});
  b.close();
  const uint32_t t3 = b.strand(3, {t2, c0});  // after the wait for C
  b.close();
  const uint32_t end = b.strand(0, {s0, t3});
  Model m = b.finish();
  ASSERT_EQ(fixtures::check_model(m), "");
  set_time(m, s0, 0, 95, 100);
  set_time(m, t0, 1, 160, 190);   // T waits 60, thread 1 idle from nothing before: no idle
  set_time(m, c0, 0, 250, 1250);  // C ready at 190, starts at 250: waits 60; idle 250-100
  set_time(m, t1, 1, 200, 220);
  set_time(m, t2, 1, 220, 227);
  set_time(m, t3, 1, 1300, 1303);
  set_time(m, end, 0, 1310, 1310);

  auto samples = analysis::task_samples(m);
  ASSERT_EQ(samples.size(), 2u);
  const auto* t = sample_of(samples, t_node);
  const auto* c = sample_of(samples, c_node);
  ASSERT_TRUE(t && c);
  EXPECT_EQ(t->size, 30u + 20 + 7 + 3);
  EXPECT_EQ(t->wait, 60u);
  EXPECT_EQ(t->idle, kNoTime);  // the first strand thread 1 ran
  EXPECT_EQ(t->site, task);
  EXPECT_FALSE(t->chunk);
  EXPECT_EQ(c->size, 1000u);
  EXPECT_EQ(c->wait, 60u);
  EXPECT_EQ(c->idle, 150u);
}

TEST(TaskSamples, TaskloopTasksAndLoopChunksTakeTheirConstructsSite) {
  ModelBuilder b;
  const uint32_t taskloop = b.add_site(SiteKind::Taskloop);
  const uint32_t loop = b.add_site(SiteKind::Loop);
  const uint32_t single = b.add_site(SiteKind::Single);
  const uint32_t s0 = b.strand(1);
  b.open(NodeKind::Taskloop, taskloop);
  for (int i = 0; i < 3; ++i) {
    b.open(NodeKind::Task, kNone);  // taskloop's tasks carry no site of their own
    b.strand(10, {s0});
    b.close();
  }
  b.close();
  b.open(NodeKind::Loop, loop);
  for (int i = 0; i < 2; ++i) {
    b.open(NodeKind::Chunk);
    b.strand(40, {s0});
    b.close();
  }
  b.close();
  b.open(NodeKind::Single, single);  // not a task type
  b.strand(500, {s0});
  b.close();
  b.open(NodeKind::Task);  // a task under the program without a site: not a task type
  b.strand(600, {s0});
  b.close();
  b.open(NodeKind::Task, taskloop);  // never ran: not counted
  b.close();
  Model m = b.finish();
  ASSERT_EQ(fixtures::check_model(m), "");
  auto samples = analysis::task_samples(m);
  ASSERT_EQ(samples.size(), 5u);
  int tl = 0, chunks = 0;
  for (const auto& s : samples) {
    EXPECT_EQ(s.wait, kNoTime);  // no timestamps in this model
    if (s.site == taskloop) {
      ++tl;
      EXPECT_EQ(s.size, 10u);
      EXPECT_FALSE(s.chunk);
    } else {
      ++chunks;
      EXPECT_EQ(s.site, loop);
      EXPECT_EQ(s.size, 40u);
      EXPECT_TRUE(s.chunk);
    }
  }
  EXPECT_EQ(tl, 3);
  EXPECT_EQ(chunks, 2);
  TaskProfile p = analysis::compute_tasks(m, options());
  ASSERT_EQ(p.types.size(), 2u);
  EXPECT_EQ(p.types[0].site, loop);  // 80 of work before 30
  EXPECT_TRUE(p.types[0].chunks);
  EXPECT_EQ(p.types[1].size.samples, 3u);
  EXPECT_FALSE(p.timestamps);
  EXPECT_EQ(p.tasks, 5u);
  EXPECT_EQ(p.task_work, 110u);
}

// task_sizes (the diagnosis's one-pass summary) agrees with compute_tasks on every type:
// the taskloop and loop-chunk model above, and the mixed tiny/large tasks of the findings.
TEST(TaskSizes, AgreeWithTheFullAnalysis) {
  auto check = [](const Model& m, uint64_t tiny) {
    TaskOptions o = options(tiny);
    const TaskProfile p = analysis::compute_tasks(m, o);
    const std::vector<analysis::TypeSizes> sizes = analysis::task_sizes(m, tiny);
    ASSERT_EQ(sizes.size(), p.types.size());
    for (const analysis::TaskType& t : p.types) {
      auto it = std::find_if(sizes.begin(), sizes.end(), [&](const analysis::TypeSizes& x) {
        return x.site == t.site && x.chunks == t.chunks;
      });
      ASSERT_NE(it, sizes.end()) << "site " << t.site;
      EXPECT_EQ(it->count, t.size.samples);
      EXPECT_EQ(it->total, t.size.total);
      EXPECT_EQ(it->max, t.size.max);
      EXPECT_EQ(it->median, t.size.median);
      EXPECT_EQ(it->tiny, t.tiny);
    }
  };
  std::vector<Spec> mixed(6, Spec{5000, 50, 10});
  mixed.insert(mixed.end(), 4, Spec{100, 50, 10});
  check(tasks_model(mixed), 1000);
  check(tasks_model(std::vector<Spec>(7, Spec{100, 50, 10})), 1000);
  ModelBuilder b;
  const uint32_t taskloop = b.add_site(SiteKind::Taskloop);
  const uint32_t loop = b.add_site(SiteKind::Loop);
  const uint32_t s0 = b.strand(1);
  b.open(NodeKind::Taskloop, taskloop);
  for (uint64_t w : {10, 30, 20, 40}) {
    b.open(NodeKind::Task, kNone);
    b.strand(w, {s0});
    b.close();
  }
  b.close();
  b.open(NodeKind::Loop, loop);
  for (uint64_t w : {40, 5, 7}) {
    b.open(NodeKind::Chunk);
    b.strand(w, {s0});
    b.close();
  }
  b.close();
  check(b.finish(), 25);
}

TEST(TaskSamples, AnUntimedJoinPredecessorCountsWithItsOwnPredecessorsEnd) {
  ModelBuilder b;
  const uint32_t task = b.add_site(SiteKind::Task);
  const uint32_t a = b.strand(5);
  const uint32_t c = b.strand(5);
  const uint32_t join = b.strand(0, {a, c});  // synthetic: no thread, no time
  const uint32_t node = b.open(NodeKind::Task, task);
  const uint32_t t = b.strand(9, {join});
  b.close();
  Model m = b.finish();
  set_time(m, a, 0, 10, 100);
  set_time(m, c, 1, 10, 140);
  m.strands[join].thread = kNone;
  set_time(m, t, 0, 200, 209);
  auto samples = analysis::task_samples(m);
  ASSERT_EQ(samples.size(), 1u);
  EXPECT_EQ(samples[0].node, node);
  EXPECT_EQ(samples[0].wait, 60u);   // ready at 140, the later of a and c
  EXPECT_EQ(samples[0].idle, 100u);  // thread 0 was busy until 100
}

TEST(TaskSamples, FromASyntheticTraceThroughTheBuilder) {
  using trace::EventKind;
  constexpr uint64_t kInitial = 1, kImplicit = 2, kExplicit = 4, kSwitch = 7, kComplete = 1,
                     kBarrier = 2;
  fixtures::TraceBuilder tb(2);
  const uint64_t I = fixtures::id(0, 2), P = fixtures::id(0, 3), A = fixtures::id(0, 4),
                 B = fixtures::id(1, 1), C = fixtures::id(0, 10), D = fixtures::id(0, 11);
  tb.ev(0, 0, EventKind::ImplicitBegin, {fixtures::id(0, 1), I, 1, 1, kInitial});
  tb.ev(0, 10, EventKind::ParallelBegin, {I, P, 2, 0, 0x1000});
  tb.ev(0, 10, EventKind::ImplicitBegin, {P, A, 2, 0, kImplicit});
  tb.ev(1, 11, EventKind::ImplicitBegin, {P, B, 2, 1, kImplicit});
  tb.ev(1, 12, EventKind::SyncBegin, {kBarrier, B, 0});
  tb.ev(0, 30, EventKind::TaskCreate, {A, C, kExplicit, 0x2000});  // C ready at 30
  tb.ev(0, 40, EventKind::TaskCreate, {A, D, kExplicit, 0x2000});  // D ready at 40
  tb.ev(1, 70, EventKind::TaskSchedule, {B, kSwitch, C});          // C waits 40, idle 58
  tb.ev(1, 370, EventKind::TaskSchedule, {C, kComplete, B});       // C: 300
  tb.ev(0, 50, EventKind::SyncBegin, {kBarrier, A, 0x1000});
  tb.ev(0, 55, EventKind::TaskSchedule, {A, kSwitch, D});     // D waits 15, idle 5
  tb.ev(0, 255, EventKind::TaskSchedule, {D, kComplete, A});  // D: 200
  tb.ev(0, 400, EventKind::SyncEnd, {kBarrier, A, 0x1000});
  tb.ev(0, 400, EventKind::ImplicitEnd, {A, 0, kImplicit});
  tb.ev(0, 400, EventKind::ParallelEnd, {P, I, 0, 0x1000});
  tb.ev(1, 401, EventKind::SyncEnd, {kBarrier, B, 0});
  tb.ev(1, 401, EventKind::ImplicitEnd, {B, 1, kImplicit});
  Model m = tb.build();
  fixtures::expect_invariants(m);
  TaskProfile p = analysis::compute_tasks(m, analysis::default_task_options(m, 1e9));
  ASSERT_EQ(p.types.size(), 1u);
  const auto& t = p.types[0];
  EXPECT_EQ(m.sites[t.site].kind, SiteKind::Task);
  EXPECT_EQ(t.size.samples, 2u);
  EXPECT_EQ(t.size.total, 500u);
  EXPECT_EQ(t.size.min, 200u);
  EXPECT_EQ(t.size.max, 300u);
  EXPECT_EQ(t.wait.samples, 2u);
  EXPECT_EQ(t.wait.min, 15u);
  EXPECT_EQ(t.wait.max, 40u);
  EXPECT_EQ(t.idle.min, 5u);
  EXPECT_EQ(t.idle.max, 58u);
  EXPECT_TRUE(p.timestamps);
  EXPECT_EQ(p.workers, 2u);
}

// A task begun while a strand of its thread is still open (clang's taskloop: a splitting task's
// strand while the thread runs the tasks it made) was not idle before it: that strand ends after
// it begins. One pass knows that end only when the strand closes (the build's one-pass checks
// compare the idle times with these).
TEST(TaskSamples, ATaskBegunWhileAStrandOfItsThreadIsOpenWasNotIdle) {
  using trace::EventKind;
  using namespace fixtures;  // model_team.hpp: the OMPT values and Region
  TraceBuilder tb(2);
  Region r{tb};
  const uint64_t S = id(0, 10), C1 = id(0, 11), C2 = id(0, 12), C3 = id(0, 13);
  r.begin();  // thread 1 waits in the barrier from 12
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, S, kExplicit, 0x2000});
  tb.ev(0, 25, EventKind::TaskSchedule, {r.A, kSwitch, S});  // S's strand: 25..300
  tb.ev(0, 30, EventKind::TaskCreate, {S, C1, kExplicit, 0x2100});
  tb.ev(0, 35, EventKind::TaskCreate, {S, C2, kExplicit, 0x2100});
  tb.ev(0, 36, EventKind::TaskCreate, {S, C3, kExplicit, 0x2100});
  tb.ev(0, 40, EventKind::TaskSchedule, {0, kSwitch, C1});     // S's strand stays open
  tb.ev(0, 140, EventKind::TaskSchedule, {C1, kComplete, S});  // C1: 100, idle 0
  tb.ev(0, 150, EventKind::TaskSchedule, {0, kSwitch, C2});
  tb.ev(0, 250, EventKind::TaskSchedule, {C2, kComplete, S});  // C2: 100, idle 0
  tb.ev(0, 300, EventKind::TaskSchedule, {S, kComplete, r.A});
  tb.ev(1, 320, EventKind::TaskSchedule, {r.B, kSwitch, C3});  // C3: on the other thread
  tb.ev(1, 420, EventKind::TaskSchedule, {C3, kComplete, r.B});
  r.end(350, 430);
  Model m = tb.build();
  fixtures::expect_invariants(m);
  size_t children = 0;
  for (const analysis::TaskSample& t : analysis::task_samples(m)) {
    if (m.sites[t.site].address != 0x2100) continue;
    ++children;
    if (m.strands[m.nodes[t.node].strand_begin].thread == 0)
      EXPECT_EQ(t.idle, 0u) << "a child run on thread 0 while S's strand was open";
    else
      EXPECT_EQ(t.idle, 320u - 12) << "C3, after the barrier's strand of thread 1";
  }
  EXPECT_EQ(children, 3u);
}

// ---- Statistics and histograms.

TEST(TaskStats, NearestRankPercentiles) {
  std::vector<uint64_t> v = {10, 9, 8, 7, 6, 5, 4, 3, 2, 1};
  analysis::Stats s = analysis::stats_of(v);
  EXPECT_EQ(s.samples, 10u);
  EXPECT_EQ(s.total, 55u);
  EXPECT_DOUBLE_EQ(s.mean, 5.5);
  EXPECT_EQ(s.min, 1u);
  EXPECT_EQ(s.median, 5u);  // rank ceil(5) = 5
  EXPECT_EQ(s.p90, 9u);     // rank ceil(9) = 9
  EXPECT_EQ(s.max, 10u);
  std::vector<uint64_t> one = {7};
  s = analysis::stats_of(one);
  EXPECT_EQ(s.median, 7u);
  EXPECT_EQ(s.p90, 7u);
  std::vector<uint64_t> two = {4, 2};
  EXPECT_EQ(analysis::stats_of(two).median, 2u);
  std::vector<uint64_t> none;
  EXPECT_EQ(analysis::stats_of(none).samples, 0u);
  std::vector<uint64_t> eleven = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};
  EXPECT_EQ(analysis::percentile(eleven, 50), 6u);   // rank ceil(5.5) = 6
  EXPECT_EQ(analysis::percentile(eleven, 90), 10u);  // rank ceil(9.9) = 10
}

TEST(TaskHistogram, Log2BinEdges) {
  std::vector<uint64_t> v = {0, 1, 2, 3, 4, 15, 16, 1000};
  auto h = analysis::log2_histograms({&v}, 12)[0];
  // Octaves 1 (value 1) to 10 (1000): 10 bins of one octave.
  ASSERT_EQ(h.counts.size(), 10u);
  EXPECT_EQ(h.width, 1);
  EXPECT_EQ(h.lower(0), 0.0);
  EXPECT_EQ(h.upper(0), 2.0);
  EXPECT_EQ(h.counts[0], 2u);  // 0 and 1
  EXPECT_EQ(h.lower(1), 2.0);
  EXPECT_EQ(h.counts[1], 2u);  // 2, 3
  EXPECT_EQ(h.counts[2], 1u);  // 4
  EXPECT_EQ(h.counts[3], 1u);  // [8, 16): 15
  EXPECT_EQ(h.lower(4), 16.0);
  EXPECT_EQ(h.counts[4], 1u);  // [16, 32): 16 (a lower edge is inclusive)
  EXPECT_EQ(h.counts[9], 1u);  // [512, 1024): 1000
  EXPECT_EQ(h.upper(9), 1024.0);

  // --bins 3: 10 octaves in bins of 4: [0, 16), [16, 256), [256, 4096).
  h = analysis::log2_histograms({&v}, 3)[0];
  ASSERT_EQ(h.counts.size(), 3u);
  EXPECT_EQ(h.width, 4);
  EXPECT_EQ(h.upper(0), 16.0);
  EXPECT_EQ(h.counts[0], 6u);  // 0 1 2 3 4 15
  EXPECT_EQ(h.lower(1), 16.0);
  EXPECT_EQ(h.counts[1], 1u);  // 16
  EXPECT_EQ(h.upper(2), 4096.0);
  EXPECT_EQ(h.counts[2], 1u);  // 1000

  h = analysis::log2_histograms({&v}, 1)[0];
  ASSERT_EQ(h.counts.size(), 1u);
  EXPECT_EQ(h.counts[0], v.size());
  EXPECT_GT(h.upper(0), 1000.0);

  std::vector<uint64_t> zeros = {0, 0}, empty;
  h = analysis::log2_histograms({&zeros}, 12)[0];
  ASSERT_EQ(h.counts.size(), 1u);
  EXPECT_EQ(h.counts[0], 2u);
  EXPECT_EQ(h.upper(0), 1.0);
  EXPECT_TRUE(analysis::log2_histograms({&empty}, 12)[0].counts.empty());

  // Shared bins: both sets over the union's range; an empty set gets zero counts.
  std::vector<uint64_t> small = {3}, large = {1u << 20};
  auto hs = analysis::log2_histograms({&small, &large, &empty}, 12);
  ASSERT_EQ(hs[0].counts.size(), hs[1].counts.size());
  ASSERT_EQ(hs[2].counts.size(), hs[0].counts.size());
  EXPECT_EQ(hs[0].lo, hs[1].lo);
  EXPECT_EQ(hs[0].counts.front(), 1u);
  EXPECT_EQ(hs[1].counts.back(), 1u);
  EXPECT_LE(hs[0].counts.size(), 12u);
  // Values at 2^64 - 1 (octave 64) do not overflow.
  std::vector<uint64_t> huge = {~uint64_t{0}, 1};
  h = analysis::log2_histograms({&huge}, 12)[0];
  EXPECT_EQ(h.counts.back(), 1u);
  EXPECT_GE(h.upper(h.counts.size() - 1), 1.8e19);
}

// ---- Findings.

TEST(TaskFindings, ManyTinyTasks) {
  std::vector<Spec> tiny(10, Spec{100, 50, 10});
  TaskProfile p = analysis::compute_tasks(tasks_model(tiny), options(1000));
  EXPECT_TRUE(has(p, FindingKind::ManyTinyTasks));
  EXPECT_EQ(p.types[0].tiny, 10u);
  // 4 tiny tasks of 10: 40% < 50%.
  std::vector<Spec> mixed(6, Spec{5000, 50, 10});
  mixed.insert(mixed.end(), 4, Spec{100, 50, 10});
  p = analysis::compute_tasks(tasks_model(mixed), options(1000));
  EXPECT_FALSE(has(p, FindingKind::ManyTinyTasks));
  EXPECT_EQ(p.types[0].tiny, 4u);
  // Too few tasks to say (fewer than min_tasks = 8), or no threshold.
  p = analysis::compute_tasks(tasks_model(std::vector<Spec>(5, Spec{100, 50, 10})), options(1000));
  EXPECT_FALSE(has(p, FindingKind::ManyTinyTasks));
  p = analysis::compute_tasks(tasks_model(tiny), options(0));
  EXPECT_FALSE(has(p, FindingKind::ManyTinyTasks));
}

TEST(TaskFindings, WaitingLongerThanRunning) {
  // Workers idle 500 before tasks of 100: not enough parallelism.
  TaskProfile p =
      analysis::compute_tasks(tasks_model(std::vector<Spec>(10, Spec{100, 600, 500})), options());
  EXPECT_TRUE(has(p, FindingKind::IdleLongerThanRunning));
  EXPECT_FALSE(has(p, FindingKind::QueuedLongerThanRunning));
  EXPECT_EQ(p.types[0].idle.median, 500u);
  EXPECT_EQ(p.types[0].wait.median, 600u);
  // Waiting 600 from ready while the workers were busy (idle 5): queued.
  p = analysis::compute_tasks(tasks_model(std::vector<Spec>(10, Spec{100, 600, 5})), options());
  EXPECT_FALSE(has(p, FindingKind::IdleLongerThanRunning));
  EXPECT_TRUE(has(p, FindingKind::QueuedLongerThanRunning));
  // Tasks longer than their waits: neither.
  p = analysis::compute_tasks(tasks_model(std::vector<Spec>(10, Spec{10000, 600, 500})), options());
  EXPECT_FALSE(has(p, FindingKind::IdleLongerThanRunning));
  EXPECT_FALSE(has(p, FindingKind::QueuedLongerThanRunning));
  // Tiny tasks: the tiny finding says it; the waiting ones would only restate the overhead.
  p = analysis::compute_tasks(tasks_model(std::vector<Spec>(10, Spec{100, 600, 500})),
                              options(1000));
  EXPECT_TRUE(has(p, FindingKind::ManyTinyTasks));
  EXPECT_FALSE(has(p, FindingKind::IdleLongerThanRunning));
  EXPECT_FALSE(has(p, FindingKind::QueuedLongerThanRunning));
  // Times compared in the metric's unit: 1 tick = 0.1 unit makes 600 ticks 60 < 100.
  TaskOptions o = options();
  o.ticks_to_work = 0.1;
  p = analysis::compute_tasks(tasks_model(std::vector<Spec>(10, Spec{100, 600, 500})), o);
  EXPECT_FALSE(has(p, FindingKind::IdleLongerThanRunning));
  EXPECT_FALSE(has(p, FindingKind::QueuedLongerThanRunning));
}

// A damaged trace can give waits near 2^64 ticks: 10 x their p90 is past uint64_t, and the
// threshold saturates instead of overflowing a cast (undefined behaviour, found by the fuzzer).
TEST(TaskFindings, HugeWaitsSaturateTheLongWaitThreshold) {
  TaskOptions o = options();
  const uint64_t huge = uint64_t{1} << 63;  // 10 x this is about 9.2e19 > 2^64
  std::vector<Spec> specs(10, Spec{100, huge, 0});
  TaskProfile p = analysis::compute_tasks(tasks_model(specs), o);
  ASSERT_EQ(p.types.size(), 1u);
  EXPECT_EQ(p.types[0].long_wait_threshold, ~uint64_t{0});
  EXPECT_EQ(p.types[0].long_waits, 0u);
}

TEST(TaskFindings, RareLongWaits) {
  // 200 tasks waiting 50 ticks, 2 of them 5000: more than 10 x the p90 (50) and the threshold
  // (1000 here), and 2 <= 1% of 200.
  TaskOptions o = options();
  o.long_wait_ticks = 1000;
  std::vector<Spec> specs(198, Spec{100, 50, 0});
  specs.push_back({100, 5000, 0});
  specs.push_back({100, 6000, 0});
  TaskProfile p = analysis::compute_tasks(tasks_model(specs), o);
  EXPECT_TRUE(has(p, FindingKind::RareLongWaits));
  EXPECT_EQ(p.types[0].long_waits, 2u);
  EXPECT_EQ(p.types[0].long_wait_threshold, 1000u);
  // A third one: 3 > 1% of 201 (2): no longer rare, the waits are the program's.
  specs.push_back({100, 7000, 0});
  p = analysis::compute_tasks(tasks_model(specs), o);
  EXPECT_FALSE(has(p, FindingKind::RareLongWaits));
  EXPECT_EQ(p.types[0].long_waits, 3u);
  // Under the absolute threshold: not long, whatever the ratio.
  o.long_wait_ticks = 10000;
  specs.pop_back();
  p = analysis::compute_tasks(tasks_model(specs), o);
  EXPECT_FALSE(has(p, FindingKind::RareLongWaits));
  EXPECT_EQ(p.types[0].long_waits, 0u);
  // 10 x the p90 decides when it is above the absolute threshold: p90 = 900 here.
  o.long_wait_ticks = 1;
  std::vector<Spec> wide(9, Spec{100, 900, 0});
  wide.push_back({100, 8000, 0});
  p = analysis::compute_tasks(tasks_model(wide), o);
  EXPECT_EQ(p.types[0].long_wait_threshold, 9000u);
  EXPECT_EQ(p.types[0].long_waits, 0u);
  wide.back().wait = 9001;
  p = analysis::compute_tasks(tasks_model(wide), o);
  EXPECT_EQ(p.types[0].long_waits, 1u);
  EXPECT_TRUE(has(p, FindingKind::RareLongWaits));  // one of 10 tasks: one is always allowed
}

TEST(TaskFindings, FewLargeTasksAndADominantTask) {
  // 3 equal large tasks on 2 workers (threads 1 and 2; the spawner's thread 0 is a third).
  std::vector<Spec> few = {{1000, 0, 0, 1}, {1000, 0, 0, 2}, {1000, 2000, 0, 1}};
  TaskProfile p = analysis::compute_tasks(tasks_model(few), options());
  EXPECT_EQ(p.workers, 3u);
  EXPECT_TRUE(has(p, FindingKind::FewLargeTasks));  // 3 < 4 x 3
  EXPECT_FALSE(has(p, FindingKind::DominantTask));  // 1000 x 3 = 3000, not more than 3000
  // One task of 10000 beside two of 100: it alone is more than the total / 3 workers.
  std::vector<Spec> skewed = {{10000, 0, 0, 1}, {100, 0, 0, 2}, {100, 200, 0, 2}};
  p = analysis::compute_tasks(tasks_model(skewed), options());
  EXPECT_TRUE(has(p, FindingKind::DominantTask));
  // Many tasks per worker: not few.
  std::vector<Spec> many;
  for (int i = 0; i < 12; ++i) many.push_back({1000, uint64_t(i) * 2000, 0, 1 + uint32_t(i % 2)});
  p = analysis::compute_tasks(tasks_model(many), options());
  EXPECT_FALSE(has(p, FindingKind::FewLargeTasks));
  EXPECT_FALSE(has(p, FindingKind::DominantTask));
  // One worker: nothing to balance.
  std::vector<Spec> alone = {{10000, 0, 0, 0}, {100, 20000, 0, 0}};
  Model m = tasks_model(alone);
  for (auto& s : m.strands) s.thread = 0;
  p = analysis::compute_tasks(m, options());
  EXPECT_EQ(p.workers, 1u);
  EXPECT_FALSE(has(p, FindingKind::FewLargeTasks));
  EXPECT_FALSE(has(p, FindingKind::DominantTask));
  // Few tasks holding a small share of the program's work: not worth a finding.
  ModelBuilder b;
  const uint32_t site = b.add_site(SiteKind::Task);
  const uint32_t s0 = b.strand(1'000'000);
  b.open(NodeKind::Task, site);
  const uint32_t t = b.strand(1000, {s0});
  b.close();
  m = b.finish();
  set_time(m, s0, 0, 1, 2);
  set_time(m, t, 1, 3, 4);
  p = analysis::compute_tasks(m, options());
  EXPECT_FALSE(has(p, FindingKind::FewLargeTasks));
}

// ---- Two recordings.

std::vector<std::string> keys(const Model& m, const std::string& name) {
  std::vector<std::string> k(m.sites.size(), "program");
  for (size_t i = 1; i < k.size(); ++i) k[i] = name;
  return k;
}

TEST(TaskComparison, SizeInflationAndItsAbsence) {
  std::vector<Spec> base, same, inflated, more;
  for (uint64_t i = 0; i < 20; ++i) {
    base.push_back({1000 + i, 10, 0});
    same.push_back({1000 + i, 10, 0});
    inflated.push_back({2000 + 2 * i, 10, 0});
  }
  for (uint64_t i = 0; i < 30; ++i) more.push_back({1000 + i, 10, 0});
  const Model mb = tasks_model(base), ms = tasks_model(same), mi = tasks_model(inflated),
              mm = tasks_model(more);
  TaskProfile pb = analysis::compute_tasks(mb, options()),
              ps = analysis::compute_tasks(ms, options()),
              pi = analysis::compute_tasks(mi, options()),
              pm = analysis::compute_tasks(mm, options());

  auto c = analysis::compare_tasks(pb, keys(mb, "f.c:3"), pi, keys(mi, "f.c:3"));
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_NEAR(c.rows[0].mean_ratio, 2.0, 1e-9);
  EXPECT_NEAR(c.rows[0].median_ratio, 2.0, 1e-9);
  EXPECT_EQ(c.rows[0].shape_distance, 1.0);  // every size moved up one octave
  ASSERT_GE(c.findings.size(), 1u);
  EXPECT_EQ(c.findings[0].kind, analysis::ComparisonKind::SizeInflation);

  c = analysis::compare_tasks(pb, keys(mb, "f.c:3"), ps, keys(ms, "f.c:3"));
  ASSERT_EQ(c.rows.size(), 1u);
  EXPECT_DOUBLE_EQ(c.rows[0].mean_ratio, 1.0);
  EXPECT_EQ(c.rows[0].shape_distance, 0.0);
  EXPECT_TRUE(c.findings.empty());

  // The other way round: smaller tasks.
  c = analysis::compare_tasks(pi, keys(mi, "f.c:3"), pb, keys(mb, "f.c:3"));
  ASSERT_FALSE(c.findings.empty());
  EXPECT_EQ(c.findings[0].kind, analysis::ComparisonKind::SizeDeflation);

  // 20 tasks against 30: the count changed, the sizes did not.
  c = analysis::compare_tasks(pb, keys(mb, "f.c:3"), pm, keys(mm, "f.c:3"));
  ASSERT_EQ(c.findings.size(), 1u);
  EXPECT_EQ(c.findings[0].kind, analysis::ComparisonKind::CountChanged);

  // Different programs: nothing in common.
  c = analysis::compare_tasks(pb, keys(mb, "f.c:3"), ps, keys(ms, "g.c:9"));
  EXPECT_TRUE(c.rows.empty());
  EXPECT_EQ(c.only_base.size(), 1u);
  EXPECT_EQ(c.only_other.size(), 1u);
}

TEST(TaskOptionsTest, DefaultsFollowTheMetric) {
  Model m;
  m.metric = "tsc";
  TaskOptions o = analysis::default_task_options(m, 2.5e9, 7);
  EXPECT_EQ(o.bins, 7u);
  EXPECT_EQ(o.tiny_size, 2500u);  // 1 us
  EXPECT_TRUE(o.same_unit);
  EXPECT_EQ(o.ticks_to_work, 1.0);
  m.metric = "task-clock";
  o = analysis::default_task_options(m, 2.5e9);
  EXPECT_EQ(o.tiny_size, 1000u);
  EXPECT_FALSE(o.same_unit);
  EXPECT_DOUBLE_EQ(o.ticks_to_work, 0.4);
  m.metric = "cycles";
  o = analysis::default_task_options(m, 0);
  EXPECT_EQ(o.tiny_size, 0u);
  m.metric = "instructions";
  o = analysis::default_task_options(m, 2.5e9);
  EXPECT_EQ(o.tiny_size, 2500u);
  EXPECT_EQ(o.ticks_to_work, 1.0);
  for (const char* count : {"cache-misses", "page-faults", "context-switches"}) {
    m.metric = count;
    o = analysis::default_task_options(m, 2.5e9);
    EXPECT_EQ(o.tiny_size, 0u) << count;
    EXPECT_EQ(o.ticks_to_work, 0.0) << count;
    EXPECT_FALSE(o.same_unit) << count;
  }
}

// The measured tasking overhead (Model::task_cost) decides what is tiny: 20 of them; a metric
// that counts events still has no tiny tasks, whatever the trace holds.
TEST(TaskOptionsTest, TinyIsTwentyTimesTheMeasuredTaskCost) {
  Model m;
  m.metric = "tsc";
  m.task_cost = 130;  // ticks: 52 ns at 2.5 GHz
  TaskOptions o = analysis::default_task_options(m, 2.5e9);
  EXPECT_EQ(o.tiny_size, 2600u);
  EXPECT_TRUE(o.tiny_from_task_cost);
  m.task_cost = 0;  // not measured: 1 us
  o = analysis::default_task_options(m, 2.5e9);
  EXPECT_EQ(o.tiny_size, 2500u);
  EXPECT_FALSE(o.tiny_from_task_cost);
  m.metric = "cache-misses";
  m.task_cost = 130;
  o = analysis::default_task_options(m, 2.5e9);
  EXPECT_EQ(o.tiny_size, 0u);
  EXPECT_FALSE(o.tiny_from_task_cost);
  // A task type whose tasks sit between 1 us and 20 task costs is tiny by the measure only.
  m = fixtures::fork_join_model(std::vector<uint64_t>(10, 2550));
  m.metric = "tsc";
  m.task_count = 10;
  EXPECT_EQ(analysis::compute_tasks(m, analysis::default_task_options(m, 2.5e9)).findings.size(),
            0u);
  m.task_cost = 130;
  const TaskProfile p = analysis::compute_tasks(m, analysis::default_task_options(m, 2.5e9));
  ASSERT_EQ(p.findings.size(), 1u);
  EXPECT_EQ(p.findings[0].kind, analysis::FindingKind::ManyTinyTasks);
  // The finding says what its threshold stands for.
  const std::vector<report::SiteLabel> labels(m.sites.size());
  report::TasksRun run;
  run.model = &m;
  run.profile = &p;
  run.labels = &labels;
  run.options = analysis::default_task_options(m, 2.5e9);
  run.tsc_hz = 2.5e9;
  m.ticks_per_second = 2.5e9;  // sizes in time
  const std::string text = report::finding_text(run, p.findings[0]);
  EXPECT_NE(text.find("run under 1.040 us (20 x the 52 ns one task costs)"), std::string::npos)
      << text;
}

TEST(TaskProfileTest, NoTasksAndNoTimestamps) {
  Model chain = fixtures::chain_model({1, 2, 3});
  TaskProfile p = analysis::compute_tasks(chain, options());
  EXPECT_EQ(p.tasks, 0u);
  EXPECT_TRUE(p.types.empty());
  Model fj = fixtures::fork_join_model({5, 6, 7});
  p = analysis::compute_tasks(fj, options());
  EXPECT_EQ(p.tasks, 3u);
  EXPECT_FALSE(p.timestamps);  // the fixtures carry no times
  EXPECT_EQ(p.types[0].wait.samples, 0u);
  EXPECT_EQ(p.types[0].size.total, 18u);
}

}  // namespace
}  // namespace tasklens
