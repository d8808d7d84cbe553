// analysis/stream_advise.hpp fed strands directly: the fragments' work and strands on the critical
// path, the chosen fragments' weights, and the burdened path's charges. (Every trace the model
// tests build is also advised in one pass per step and compared with advise on its DAG:
// tests/support/one_pass_mismatch.hpp.)
#include "analysis/stream_advise.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "model/model.hpp"

namespace tasklens::analysis {
namespace {

// A fork and its join: a (10, fragment 0) spawns a task b (100, fragment 1, its first strand) and
// goes on with c (30, fragment 2); d (5, fragment 0) joins both.
StreamAdvisePass::Result play(std::vector<uint8_t> chosen, double factor, WhatIfMode mode,
                              uint64_t per_task) {
  StreamAdvisePass sink(std::move(chosen), factor, mode, per_task);
  using S = model::StrandSink::Strand;
  const S a = sink.strand(10, 10, 0, nullptr, 0, nullptr, 0, 1, 0, 0);
  sink.task_start();
  const S b = sink.strand(100, 100, 0, &a, 1, nullptr, 0, 1, 1, 1);
  const S c = sink.strand(30, 30, 0, &a, 1, nullptr, 0, 1, 2, 2);
  sink.release(a);
  const S bc[] = {b, c};
  sink.strand(5, 5, 0, bc, 2, nullptr, 0, 1, 0, 3);
  return sink.finish();
}

TEST(StreamAdvise, TheGroupsOnTheCriticalPathAndTheBurden) {
  const StreamAdvisePass::Result r = play({}, 4, WhatIfMode::Parallelize, 7);
  EXPECT_EQ(r.evaluation.work, 145u);
  EXPECT_EQ(r.evaluation.span, 115u);  // a, b, d
  EXPECT_EQ(r.evaluation.critical, (std::vector<uint64_t>{15, 100, 0}));
  EXPECT_EQ(r.evaluation.on_path, (std::vector<uint64_t>{2, 1, 0}));
  EXPECT_EQ(r.burdened.span, 122u);  // b's start charged
  EXPECT_EQ(r.burdened.overhead_on_path, 7u);
  EXPECT_DOUBLE_EQ(r.burdened.parallelism, 145.0 / 122.0);
  EXPECT_DOUBLE_EQ(r.burdened.overhead_percent, 100.0 * 7 / 122);
}

TEST(StreamAdvise, AChosenGroupIsDividedAndThePathMoves) {
  // b divided 4 ways weighs 25: a, c, d is now the longest (45).
  StreamAdvisePass::Result r = play({0, 1}, 4, WhatIfMode::Parallelize, 7);
  EXPECT_EQ(r.evaluation.work, 145u);  // parallelized: the work stays
  EXPECT_EQ(r.evaluation.span, 45u);
  EXPECT_EQ(r.evaluation.critical, (std::vector<uint64_t>{15, 0, 30}));
  EXPECT_EQ(r.evaluation.on_path, (std::vector<uint64_t>{2, 0, 1}));
  EXPECT_EQ(r.burdened.span, 47u);  // b's 25 + 7 is longer than c's 30 again
  EXPECT_EQ(r.burdened.overhead_on_path, 7u);
  // Sped up, b's work goes down too; removed, it weighs nothing.
  r = play({0, 1}, 4, WhatIfMode::Speedup, 0);
  EXPECT_EQ(r.evaluation.work, 70u);
  r = play({0, 1}, kInfiniteFactor, WhatIfMode::Speedup, 0);
  EXPECT_EQ(r.evaluation.work, 45u);
  EXPECT_EQ(r.evaluation.span, 45u);
}

}  // namespace
}  // namespace tasklens::analysis
