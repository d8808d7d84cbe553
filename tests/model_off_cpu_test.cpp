// Time a thread spent off its CPU (src/model/builder_off_cpu.cpp), on synthetic traces: an
// interval is taken out of each strand it overlaps, only the overlapping part, and the part that
// falls in a wait (which is no work anyway) is counted under no cause. (model_test.cpp checks
// each cause inside one strand: preemption, blocking, recorder stalls, slow page faults.)
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "analysis/profile.hpp"
#include "model/builder.hpp"
#include "model_team.hpp"
#include "trace/format.hpp"
#include "trace_builder.hpp"

namespace tasklens {
namespace {

using fixtures::expect_invariants;
using fixtures::id;
using fixtures::TraceBuilder;
using namespace fixtures;  // model_team.hpp: the OMPT values and Region
using trace::EventKind;

// A creates C at 20 and works to 520; B runs C from 21 to 41, then waits in its barrier.
//  - thread 0 preempted 15..25: 5 out of A's strand before the creation, 5 out of the next;
//  - thread 1 preempted 30..60: 11 out of C, the other 19 in B's barrier wait (no strand);
//  - thread 0 blocked 510..530: 10 out of A's last strand, 10 in its barrier wait.
TEST(ModelOffCpu, AnIntervalIsSplitAtTheEventsItSpansAndAWaitKeepsItsPart) {
  TraceBuilder tb(2);
  tb.preempt(0, 15, 25);
  tb.preempt(1, 30, 60);
  tb.blocked(0, 510, 530);
  Region r{tb};
  r.begin();
  const uint64_t C = id(0, 5);
  tb.ev(0, 20, EventKind::TaskCreate, {r.A, C, kExplicit, 0x2000});  // A: 10 - 5
  tb.ev(1, 21, EventKind::TaskSchedule, {r.B, kSwitch, C});
  tb.ev(1, 41, EventKind::TaskSchedule, {C, kComplete, r.B});  // C: 20 - 11
  r.end(520, 540);                                             // A: 500 - 5 - 10
  const model::Model m = tb.build();
  expect_invariants(m);
  std::vector<uint64_t> works;
  for (const model::Strand& s : m.strands)
    if (s.work) works.push_back(s.work);
  std::sort(works.begin(), works.end());
  EXPECT_EQ(works, (std::vector<uint64_t>{1, 5, 9, 485}));  // B's 11..12 is the 1
  EXPECT_EQ(m.preempted, 5u + 5 + 11);
  EXPECT_EQ(m.blocked, 10u);
  ASSERT_EQ(m.blocked_work.size(), 1u);
  EXPECT_EQ(m.strands[m.blocked_work[0].strand].work, 485u);
  EXPECT_EQ(m.blocked_work[0].ticks, 10u);
  const analysis::Profile p = analysis::compute_profile(m);
  EXPECT_EQ(p.work, 500u);
  EXPECT_EQ(p.span, 5u + 485);
}

}  // namespace
}  // namespace tasklens
