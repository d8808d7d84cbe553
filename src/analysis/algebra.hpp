// Small work/span arithmetic shared by the analyses, so that every report divides the same way
// (in particular: a zero span gives 0, never NaN or infinity, because a run can legitimately have
// zero work in a metric such as instructions when nothing was counted).
#pragma once

#include <algorithm>
#include <cstdint>

namespace tasklens::analysis {

// work / span; 0 when span is 0 (no work at all: there is no parallelism to speak of).
inline double parallelism_of(uint64_t work, uint64_t span) {
  return span == 0 ? 0.0 : static_cast<double>(work) / static_cast<double>(span);
}

// 100 * part / whole; 0 when whole is 0.
inline double percent_of(uint64_t part, uint64_t whole) {
  return whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole);
}

// Series composition: spans add. Parallel composition: the span is the larger one.
inline uint64_t series_span(uint64_t a, uint64_t b) { return a + b; }
inline uint64_t parallel_span(uint64_t a, uint64_t b) { return std::max(a, b); }

// A strand of `iterations` independent loop iterations seen only as a whole (a thread's static
// share, a chunk): they could run side by side, so on a path it weighs one iteration's share of
// its weight, spread evenly and rounded up (the longest of them when they are split as evenly as
// whole ticks allow). 0 or 1 iterations: the weight itself.
inline uint64_t iteration_span(uint64_t weight, uint64_t iterations) {
  return iterations <= 1 ? weight : weight / iterations + (weight % iterations != 0);
}

// Where paths of equal length meet, the critical path must still take one of them, and the
// sites' shares of it depend on which. It takes the one through the strand the builder met first
// (`order`: Model::strand_order, the order both readings of a trace meet strands in). Does the
// path ending at a strand (length a, met at order_a) win over one at (b, order_b)? Being a strict
// total order on distinct strands, it picks the same winner whatever order the candidates come
// in, and in whatever groups (a one-pass join folds some of them first): the DAG in memory and
// the one pass, which visit strands in different orders, follow the same critical path.
inline bool longer_path(uint64_t a, uint64_t order_a, uint64_t b, uint64_t order_b) {
  return a != b ? a > b : order_a < order_b;
}

}  // namespace tasklens::analysis
