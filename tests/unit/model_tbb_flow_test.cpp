// The model builder on synthetic oneTBB flow graph traces (src/model/builder_tbb.cpp): the
// bodies of a node of limited concurrency (TbbNodeBody) stay in the order they ran, whichever
// task spawned them. Exact work and span (1 tick = 1 ns); "A1a: 200" means the strand that ends
// at that event did 200 of work.
//
// The graphs are A -> B: A unlimited, B serial or limited (its bodies announced by TbbNodeBody
// before their spawn, as the recorder does). oneTBB starts B's next body from the body that
// ends only if a message waits in B's queue; otherwise whichever A puts the next message starts
// it, and an A that ran late (put off, or preempted: no work) logically ended long before the
// body before it did.
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "analysis/profile.hpp"
#include "model/builder.hpp"
#include "trace/format.hpp"
#include "trace_builder.hpp"

namespace tasklens {
namespace {

using fixtures::expect_invariants;
using fixtures::id;
using fixtures::TraceBuilder;
using model::NodeKind;
using model::SiteKind;
using trace::EventKind;

constexpr uint64_t kSwitch = 7, kComplete = 1;    // TaskSchedule statuses
constexpr uint64_t kOther = 7, kArena = 8;        // trace::TbbKind (a flow graph's tasks: Other)
constexpr uint64_t kRoot = 0x80, kBypass = 0x40;  // TbbSpawn kind flags
constexpr uint64_t kPut = 0x1000;                 // where main put the messages
constexpr uint64_t G = 0x7f0000001000;            // the graph's task_group_context
constexpr uint64_t kNodeB = 0x7f0000005000;       // node B

// A oneTBB trace: thread 0 runs main() in the root task R, the others are idle workers.
struct Flow {
  TraceBuilder tb;
  uint64_t R = id(0, 1);
  bool announce = true;  // false: a trace of before TbbNodeBody (minor 6)
  explicit Flow(uint32_t threads, bool announce_bodies) : tb(threads, false) {
    announce = announce_bodies;
    tb.runtime(trace::kRuntimeTbb, "oneTBB 2021.8.0 (interface 12080)");
    tb.ev(0, 0, EventKind::ThreadBegin, {1});
    tb.ev(0, 0, EventKind::ImplicitBegin, {0, R, 1, 0, 1});
    tb.ev(0, 0, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::MainStart)});
    for (uint32_t t = 1; t < threads; ++t) tb.ev(t, 0, EventKind::ThreadBegin, {2});
  }
  // main puts a message into A: A's body task, submitted to the graph's arena.
  void put(uint64_t time, uint64_t a) {
    tb.ev(0, time, EventKind::TbbSpawn, {R, a, G, kOther, kPut});
  }
  // A body of `node` (limited to `limit`) spawned by `parent`: returned by it to the
  // scheduler (bypass: a node's put of its output), or submitted (`group` G: from its queue).
  void body(uint32_t t, uint64_t time, uint64_t parent, uint64_t task, uint64_t limit,
            bool bypass = true, uint64_t node = kNodeB) {
    if (announce) tb.ev(t, time, EventKind::TbbNodeBody, {task, node, limit});
    tb.ev(t, time, EventKind::TbbSpawn,
          {parent, task, bypass ? 0 : G, kOther | (bypass ? kBypass : 0), bypass ? 0 : kPut});
  }
  void begin(uint32_t t, uint64_t time, uint64_t prior, uint64_t task) {
    tb.ev(t, time, EventKind::TaskSchedule, {prior, kSwitch, task});
  }
  void end(uint32_t t, uint64_t time, uint64_t task, uint64_t prior) {
    tb.ev(t, time, EventKind::TaskSchedule, {task, kComplete, prior});
  }
  void wait_begin(uint64_t time) { tb.ev(0, time, EventKind::TbbWaitBegin, {R, G, 0x1100}); }
  void wait_end(uint64_t time) { tb.ev(0, time, EventKind::TbbWaitEnd, {R, G, 0x1100}); }
  void program_end(uint64_t time) {
    tb.ev(0, time, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::ProgramEnd)});
  }
};

// The profile row of the site at `address`; a zero row if none.
analysis::SiteRow row_at(const model::Model& m, const analysis::Profile& p, uint64_t address) {
  for (const analysis::SiteRow& row : p.sites)
    if (m.sites[row.site].address == address) return row;
  ADD_FAILURE() << "no profile row for the site at 0x" << std::hex << address;
  return {};
}

// (Each thread's events are written in time order; the builder merges the threads by time.)

// The race: A1 puts B1 (B free); A2, spawned before it but run late, finds B free again once B1
// ended and starts B2 from its own context. B2 still runs after B1: a chain of 2 x 400.
TEST(ModelTbbFlow, ASerialNodesBodyStartedByALatePutFollowsTheBodyBefore) {
  for (bool announce : {true, false}) {
    Flow f(2, announce);
    uint64_t A1 = id(0, 2), A2 = id(0, 3), B1 = id(1, 1), B2 = id(0, 4);
    f.put(10, A1);  // S0: 10
    f.put(20, A2);  // S1: 10
    f.begin(1, 40, 0, A1);
    f.body(1, 240, A1, B1, 1);  // A1a: 200
    f.end(1, 250, A1, 0);       // A1b: 10
    f.begin(1, 250, 0, B1);
    f.end(1, 650, B1, 0);       // B1: 400
    f.wait_begin(30);           // S2: 10
    f.begin(0, 700, f.R, A2);   // A2 was put off
    f.body(0, 900, A2, B2, 1);  // A2a: 200
    f.end(0, 910, A2, f.R);     // A2b: 10
    f.begin(0, 910, f.R, B2);
    f.end(0, 1310, B2, f.R);  // B2: 400
    f.wait_end(1320);
    f.program_end(1420);  // S3: 100
    model::Model m = f.tb.build();
    expect_invariants(m);
    analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 10u + 10 + 10 + 200 + 10 + 400 + 200 + 10 + 400 + 100);
    if (announce) {
      // S0 A1a B1 B2 S3; the messages' path S0 S1 A2a B2 S3 is 720.
      EXPECT_EQ(p.span, 10u + 200 + 400 + 400 + 100);
      // The graph's tasks are one instance of the put's construct, chain included.
      analysis::SiteRow row = row_at(m, p, kPut);
      EXPECT_EQ(row.count, 1u);
      EXPECT_EQ(row.work, 200u + 10 + 200 + 10 + 400 + 400);
      EXPECT_EQ(row.span, 200u + 400 + 400);
    } else {
      // Without TbbNodeBody (older traces): B2 follows A2a only, beside B1.
      EXPECT_EQ(p.span, 10u + 10 + 200 + 400 + 100);
    }
  }
}

// The same race the other way round: B1 comes from A2 (spawned second), B2 from A1 (spawned
// first, run late). In the spawn tree A1's subtree comes before A2's, so an edge from B1 to B2
// where their spawners put them would run backward: the chain holds them in the order they ran.
TEST(ModelTbbFlow, TheChainKeepsTheOrderTheBodiesRanNotTheOrderOfTheirPuts) {
  Flow f(2, true);
  uint64_t A1 = id(0, 2), A2 = id(0, 3), B1 = id(1, 1), B2 = id(0, 4);
  f.put(10, A1);  // S0: 10
  f.put(20, A2);  // S1: 10
  f.begin(1, 40, 0, A2);
  f.body(1, 240, A2, B1, 1);  // A2a: 200
  f.end(1, 250, A2, 0);       // A2b: 10
  f.begin(1, 250, 0, B1);
  f.end(1, 650, B1, 0);  // B1: 400
  f.wait_begin(30);      // S2: 10
  f.begin(0, 700, f.R, A1);
  f.body(0, 900, A1, B2, 1);  // A1a: 200
  f.end(0, 910, A1, f.R);     // A1b: 10
  f.begin(0, 910, f.R, B2);
  f.end(0, 1310, B2, f.R);  // B2: 400
  f.wait_end(1320);
  f.program_end(1420);  // S3: 100
  model::Model m = f.tb.build();
  expect_invariants(m);  // (a backward edge is dropped with a warning)
  analysis::Profile p = analysis::compute_profile(m);
  // S0 S1 A2a B1 B2 S3
  EXPECT_EQ(p.span, 10u + 10 + 200 + 400 + 400 + 100);
}

// B1 ends with a message in its queue: it spawns B2 itself (oneTBB's hand-over), then puts its
// output (50 more). B2 follows B1's body through that spawn, not B1's end: B1's put runs beside.
TEST(ModelTbbFlow, ABodyHandedOverFromTheQueueFollowsTheSpawnNotTheEnd) {
  Flow f(2, true);
  uint64_t A1 = id(0, 2), A2 = id(0, 3), B1 = id(1, 1), B2 = id(1, 2);
  f.put(10, A1);     // S0: 10
  f.put(20, A2);     // S1: 10
  f.wait_begin(30);  // S2: 10
  f.begin(1, 40, 0, A1);
  f.body(1, 240, A1, B1, 1);  // A1a: 200
  f.end(1, 250, A1, 0);       // A1b: 10
  f.begin(0, 245, f.R, A2);
  f.end(0, 445, A2, f.R);  // A2: 200 (B busy since 240: its message waits in B's queue)
  f.begin(1, 250, 0, B1);
  f.body(1, 650, B1, B2, 1, false);  // B1a: 400
  f.end(1, 700, B1, 0);              // B1b: 50
  f.begin(0, 660, f.R, B2);
  f.end(0, 1060, B2, f.R);  // B2: 400
  f.wait_end(1070);
  f.program_end(1170);  // S3: 100
  model::Model m = f.tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 10 + 200 + 10 + 200 + 400 + 50 + 400 + 100);
  // S0 A1a B1a B2 S3 (1160 had B2 waited for B1b).
  EXPECT_EQ(p.span, 10u + 200 + 400 + 400 + 100);
}

// B limited to 2: B1 and B2 run together; A3 and A4, run late, start B3 and B4 once both ended.
// Each takes one of the two slots (the one taken first goes first): two chains, not one (a
// serial node's 4 x 400), nor four independent bodies.
TEST(ModelTbbFlow, ANodeLimitedToTwoRunsTwoChains) {
  for (bool announce : {true, false}) {
    Flow f(3, announce);
    uint64_t A1 = id(0, 2), A2 = id(0, 3), A3 = id(0, 4), A4 = id(0, 5);
    uint64_t B1 = id(1, 1), B2 = id(2, 1), B3 = id(0, 6), B4 = id(1, 2);
    f.put(10, A1);     // S0: 10
    f.put(20, A2);     // S1: 10
    f.put(30, A3);     // S2: 10
    f.put(40, A4);     // S3: 10
    f.wait_begin(50);  // S4: 10
    f.begin(1, 60, 0, A1);
    f.body(1, 260, A1, B1, 2);  // A1a: 200
    f.end(1, 270, A1, 0);       // A1b: 10
    f.begin(1, 270, 0, B1);
    f.end(1, 670, B1, 0);  // B1: 400
    f.begin(2, 60, 0, A2);
    f.body(2, 260, A2, B2, 2);  // A2a: 200
    f.end(2, 270, A2, 0);       // A2b: 10
    f.begin(2, 270, 0, B2);
    f.end(2, 670, B2, 0);  // B2: 400
    f.begin(0, 700, f.R, A3);
    f.body(0, 900, A3, B3, 2);  // A3a: 200
    f.end(0, 910, A3, f.R);     // A3b: 10
    f.begin(0, 910, f.R, B3);
    f.end(0, 1310, B3, f.R);  // B3: 400
    f.begin(1, 700, 0, A4);
    f.body(1, 901, A4, B4, 2);  // A4a: 201
    f.end(1, 911, A4, 0);       // A4b: 10
    f.begin(1, 911, 0, B4);
    f.end(1, 1311, B4, 0);  // B4: 400
    f.wait_end(1320);
    f.program_end(1420);  // S5: 100
    model::Model m = f.tb.build();
    expect_invariants(m);
    analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 5 * 10u + 200 + 200 + 200 + 201 + 4 * 10 + 4 * 400 + 100);
    if (announce) {
      // B3 after B1, B4 after B2: S0 S1 A2a B2 B4 S5 (S0 A1a B1 B3 S5 is 1110).
      EXPECT_EQ(p.span, 10u + 10 + 200 + 400 + 400 + 100);
    } else {
      // Independent bodies: S0 S1 S2 S3 A4a B4 S5.
      EXPECT_EQ(p.span, 4 * 10u + 201 + 400 + 100);
    }
  }
}

// graph::wait_for_all waits inside a task_arena::execute of its own (an ArenaExecute task X),
// which main makes after the messages are put, here after B's first body was spawned. The
// chain goes before X, between the puts and the wait: not inside X (whose row would take B's
// work), and after every put.
TEST(ModelTbbFlow, AChainMadeBeforeTheWaitingTaskGoesBeforeIt) {
  for (bool announce : {true, false}) {
    Flow f(2, announce);
    uint64_t A1 = id(0, 2), A2 = id(0, 3), X = id(0, 4), B2 = id(0, 5), B1 = id(1, 1);
    const uint64_t D = 0x7ffd00000100;  // the execute's delegate: main waits for X on it
    f.put(10, A1);                      // S0: 10
    f.put(20, A2);                      // S1: 10
    f.begin(1, 21, 0, A1);
    f.body(1, 121, A1, B1, 1);  // A1a: 100
    f.end(1, 122, A1, 0);       // A1b: 1
    f.begin(1, 122, 0, B1);
    f.end(1, 522, B1, 0);                                                       // B1: 400
    f.tb.ev(0, 150, EventKind::TbbSpawn, {f.R, X, D, kArena | kRoot, 0x3000});  // S2: 130
    f.tb.ev(0, 150, EventKind::TbbWaitBegin, {f.R, D, 0x3000});                 // S3: 0
    f.begin(0, 150, f.R, X);
    f.tb.ev(0, 160, EventKind::TbbWaitBegin, {X, G, 0x1100});  // X1: 10
    f.begin(0, 530, X, A2);                                    // once B1 ended
    f.body(0, 630, A2, B2, 1);                                 // A2a: 100
    f.end(0, 640, A2, X);                                      // A2b: 10
    f.begin(0, 640, X, B2);
    f.end(0, 1040, B2, X);  // B2: 400
    f.tb.ev(0, 1050, EventKind::TbbWaitEnd, {X, G, 0x1100});
    f.end(0, 1060, X, f.R);  // X2: 10
    f.tb.ev(0, 1060, EventKind::TbbWaitEnd, {f.R, D, 0x3000});
    f.program_end(1160);  // S4: 100
    model::Model m = f.tb.build();
    expect_invariants(m);
    analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 10u + 10 + 130 + 100 + 1 + 400 + 10 + 100 + 10 + 400 + 10 + 100);
    if (!announce) {
      // S0 S1 A2a B2 X2 S4 (S0 A1a B1 X2 S4 is 620).
      EXPECT_EQ(p.span, 10u + 10 + 100 + 400 + 10 + 100);
      continue;
    }
    // S0 A1a B1 B2 X2 S4
    EXPECT_EQ(p.span, 10u + 100 + 400 + 400 + 10 + 100);
    EXPECT_EQ(row_at(m, p, 0x3000).work, 10u + 10);  // X's own strands only
    uint32_t chain = model::kNone, x = model::kNone;
    for (uint32_t v = 0; v < m.nodes.size(); ++v) {
      if (m.nodes[v].kind == NodeKind::Taskgroup) chain = v;
      if (m.nodes[v].site != model::kNone &&
          m.sites[m.nodes[v].site].kind == SiteKind::ArenaExecute)
        x = v;
    }
    ASSERT_NE(chain, model::kNone);
    ASSERT_NE(x, model::kNone);
    EXPECT_EQ(m.nodes[chain].parent, 0u);
    EXPECT_EQ(m.nodes[chain].subtree_size, 3u);  // B1 and B2
    EXPECT_LT(chain, x);
  }
}

// A -> B -> D, B and D serial, and both races: A2 (late) starts B2 once B1 ended, and B2 starts
// D2 once D1 ended. Both chains go before the waiting task X, B's first (D's bodies are
// spawned from inside B's chain): D2 follows D1, which follows B1.
TEST(ModelTbbFlow, TwoSerialNodesInARowKeepBothChains) {
  for (bool announce : {true, false}) {
    Flow f(2, announce);
    const uint64_t kNodeD = 0x7f0000006000, D = 0x7ffd00000100;
    uint64_t A1 = id(0, 2), A2 = id(0, 3), X = id(0, 4), B2 = id(0, 5), D2 = id(0, 6);
    uint64_t B1 = id(1, 1), D1 = id(1, 2);
    f.put(10, A1);                                                             // S0: 10
    f.put(20, A2);                                                             // S1: 10
    f.tb.ev(0, 30, EventKind::TbbSpawn, {f.R, X, D, kArena | kRoot, 0x3000});  // S2: 10
    f.tb.ev(0, 30, EventKind::TbbWaitBegin, {f.R, D, 0x3000});                 // S3: 0
    f.begin(0, 30, f.R, X);
    f.tb.ev(0, 40, EventKind::TbbWaitBegin, {X, G, 0x1100});  // X1: 10
    f.begin(1, 50, 0, A1);
    f.body(1, 150, A1, B1, 1);  // A1a: 100
    f.end(1, 151, A1, 0);       // A1b: 1
    f.begin(1, 151, 0, B1);
    f.body(1, 351, B1, D1, 1, true, kNodeD);  // B1a: 200
    f.end(1, 352, B1, 0);                     // B1b: 1
    f.begin(1, 352, 0, D1);
    f.end(1, 652, D1, 0);  // D1: 300
    f.begin(0, 360, X, A2);
    f.body(0, 460, A2, B2, 1);  // A2a: 100
    f.end(0, 461, A2, X);       // A2b: 1
    f.begin(0, 461, X, B2);
    f.body(0, 661, B2, D2, 1, true, kNodeD);  // B2a: 200
    f.end(0, 662, B2, X);                     // B2b: 1
    f.begin(0, 662, X, D2);
    f.end(0, 962, D2, X);  // D2: 300
    f.tb.ev(0, 970, EventKind::TbbWaitEnd, {X, G, 0x1100});
    f.end(0, 980, X, f.R);  // X2: 10
    f.tb.ev(0, 980, EventKind::TbbWaitEnd, {f.R, D, 0x3000});
    f.program_end(1080);  // S4: 100
    model::Model m = f.tb.build();
    expect_invariants(m);
    analysis::Profile p = analysis::compute_profile(m);
    EXPECT_EQ(p.work, 3 * 10u + 10 + 2 * (100 + 1) + 2 * (200 + 1) + 2 * 300 + 10 + 100);
    if (!announce) {
      // S0 S1 A2a B2a D2 X2 S4
      EXPECT_EQ(p.span, 10u + 10 + 100 + 200 + 300 + 10 + 100);
      continue;
    }
    // S0 A1a B1a D1 D2 X2 S4 (through B's chain, S0 A1a B1a B1b B2a D2 X2 S4, 921)
    EXPECT_EQ(p.span, 10u + 100 + 200 + 300 + 300 + 10 + 100);
    std::vector<uint32_t> chains;
    for (uint32_t v = 0; v < m.nodes.size(); ++v)
      if (m.nodes[v].kind == NodeKind::Taskgroup) chains.push_back(v);
    ASSERT_EQ(chains.size(), 2u);
    for (uint32_t c : chains) {
      EXPECT_EQ(m.nodes[c].parent, 0u);
      EXPECT_EQ(m.nodes[c].subtree_size, 3u);
    }
    EXPECT_LT(m.nodes[chains[0]].strand_end, m.nodes[chains[1]].strand_end);
  }
}

// No wait joins the graph (a program that ended without one): the chain still holds its bodies
// in order, after the tasks that spawned them, and their work stays in the model.
TEST(ModelTbbFlow, AChainWhoseGroupIsNeverWaitedForStaysInTheModel) {
  Flow f(2, true);
  uint64_t A1 = id(0, 2), A2 = id(0, 3), B1 = id(1, 1), B2 = id(1, 2);
  f.put(10, A1);  // S0: 10
  f.put(20, A2);  // S1: 10
  f.begin(1, 40, 0, A2);
  f.body(1, 240, A2, B1, 1);  // A2a: 200
  f.end(1, 250, A2, 0);       // A2b: 10
  f.begin(1, 250, 0, B1);
  f.end(1, 650, B1, 0);  // B1: 400
  f.begin(1, 700, 0, A1);
  f.body(1, 900, A1, B2, 1);  // A1a: 200
  f.end(1, 910, A1, 0);       // A1b: 10
  f.begin(1, 910, 0, B2);
  f.end(1, 1310, B2, 0);  // B2: 400
  f.program_end(320);     // S2: 300
  model::Model m = f.tb.build();
  expect_invariants(m);
  analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 10u + 10 + 300 + 200 + 10 + 400 + 200 + 10 + 400);
  EXPECT_EQ(p.span, 10u + 10 + 200 + 400 + 400);  // S0 S1 A2a B1 B2
}

}  // namespace
}  // namespace tasklens
