// Synthetic OpenMP teams for the model builder's tests (model_test.cpp, model_loops_test.cpp):
// the OMPT values their events use and a parallel region of two threads.
#pragma once

#include <cstdint>

#include "trace/format.hpp"
#include "trace_builder.hpp"

namespace tasklens::fixtures {

using trace::EventKind;

// OMPT values used below.
constexpr uint64_t kInitial = 1, kImplicit = 2, kExplicit = 4, kUndeferred = 0x08000000;
constexpr uint64_t kSwitch = 7, kComplete = 1;
constexpr uint64_t kBarrier = 2, kTaskwait = 5, kTaskgroup = 6;
constexpr uint64_t kLoop = 1, kChunk = 3;

// A parallel region of two threads around `body`: thread 0 runs the initial task I and implicit
// task A (id(0,4)), thread 1 implicit task B (id(1,1)) which waits in the final barrier from
// time 6 and runs what `body` schedules on it. Ends with the barrier at `end`.
struct Region {
  TraceBuilder& tb;
  uint64_t I = id(0, 2), P = id(0, 3), A = id(0, 4), B = id(1, 1);
  void begin() {
    tb.ev(0, 0, EventKind::ImplicitBegin, {id(0, 1), I, 1, 1, kInitial});
    tb.ev(0, 10, EventKind::ParallelBegin, {I, P, 2, 0, 0x1000});
    tb.ev(0, 10, EventKind::ImplicitBegin, {P, A, 2, 0, kImplicit});
    tb.ev(1, 11, EventKind::ImplicitBegin, {P, B, 2, 1, kImplicit});
    tb.ev(1, 12, EventKind::SyncBegin, {kBarrier, B, 0});
  }
  // Both implicit tasks start at 10 and keep working (no barrier wait for B).
  void open_team() {
    tb.ev(0, 0, EventKind::ImplicitBegin, {id(0, 1), I, 1, 1, kInitial});
    tb.ev(0, 10, EventKind::ParallelBegin, {I, P, 2, 0, 0x1000});
    tb.ev(0, 10, EventKind::ImplicitBegin, {P, A, 2, 0, kImplicit});
    tb.ev(1, 10, EventKind::ImplicitBegin, {P, B, 2, 1, kImplicit});
  }
  void end(uint64_t a_arrives, uint64_t end) {
    tb.ev(0, a_arrives, EventKind::SyncBegin, {kBarrier, A, 0x1000});
    tb.ev(0, end, EventKind::SyncEnd, {kBarrier, A, 0x1000});
    tb.ev(0, end, EventKind::ImplicitEnd, {A, 0, kImplicit});
    tb.ev(0, end, EventKind::ParallelEnd, {P, I, 0, 0x1000});
    tb.ev(1, end + 1, EventKind::SyncEnd, {kBarrier, B, 0});  // late, as libomp does
    tb.ev(1, end + 1, EventKind::ImplicitEnd, {B, 1, kImplicit});
  }
};

}  // namespace tasklens::fixtures
