// `sched` in one pass (analysis/stream_sched.hpp): the event sort against a sort in memory, the
// sampled step function against its definition tick by tick, and StreamSchedule against
// compute_schedule on random timed DAGs fed in other topological orders, with joins, ties and
// everything spilled to disk. (Every trace of the model tests goes through the same comparison:
// tests/support/one_pass_mismatch.hpp.)
#include "analysis/stream_sched.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <tuple>
#include <vector>

#include "model_fixtures.hpp"

namespace tasklens {
namespace {

using analysis::SchedEvent;
using analysis::SchedEventSort;
using analysis::SchedPoint;
using analysis::SchedStep;
using analysis::Schedule;
using analysis::StreamSchedule;
using model::kNone;
using model::Model;

auto key(const SchedEvent& e) { return std::make_tuple(e.time, e.kind, e.arg); }

TEST(StreamSched, EventsComeOutInTimeOrderWhateverTheRunsAndBlocks) {
  std::mt19937_64 rng(7);
  for (const auto& [run, block] : {std::pair<size_t, size_t>{1, 1},
                                   {5, 2},
                                   {64, 7},
                                   {1000, 64},
                                   {size_t{1} << 22, size_t{1} << 12}}) {
    for (const size_t count : {size_t{0}, size_t{1}, size_t{2}, size_t{999}}) {
      SchedEventSort sort(run, block);
      std::vector<SchedEvent> pushed;
      for (size_t i = 0; i < count; ++i) {
        // Times in a narrow range (many equal) with a few far out.
        const uint64_t time = rng() % 16 == 0 ? rng() : 1000000 + rng() % 300;
        pushed.push_back({time, static_cast<uint32_t>(rng() % 5), static_cast<uint8_t>(rng() % 4)});
        sort.push(pushed.back());
      }
      std::vector<SchedEvent> drained;
      sort.drain([&](const SchedEvent& e) { drained.push_back(e); });
      SCOPED_TRACE("runs of " + std::to_string(run) + ", blocks of " + std::to_string(block) +
                   ", " + std::to_string(count) + " events");
      ASSERT_EQ(drained.size(), pushed.size());
      // Exactly a stable sort by time and kind: equal events in the order they were pushed
      // (each run keeps them so, and the merge takes the earlier run's first), so that the
      // sweep, where the last path event at a time wins, is the same on every reading.
      std::stable_sort(pushed.begin(), pushed.end(), [](const SchedEvent& a, const SchedEvent& b) {
        return std::make_pair(a.time, a.kind) < std::make_pair(b.time, b.kind);
      });
      for (size_t i = 0; i < pushed.size(); ++i) {
        ASSERT_EQ(key(drained[i]), key(pushed[i])) << "at " << i;
      }
      EXPECT_EQ(sort.events(), count);
      if (count > run) {
        EXPECT_GT(sort.file_bytes(), 0u);
      }
    }
  }
}

// The sampled step function against its definition: each interval's integrals and maxima taken
// tick by tick.
// The ready path's links go to disk as varints of differences: any times come back, the
// clock's ends, ends before starts (a damaged trace) and distances of any size included, read
// backwards as finish() does and in any order.
TEST(StreamSched, PathLinksComeBackFromTheirBlocksWhateverTheirValues) {
  std::mt19937_64 rng(11);
  const uint64_t top = ~uint64_t{0};
  std::vector<StreamSchedule::PathLink> links;
  uint64_t t = 1000;
  for (int i = 0; i < 500; ++i) {
    StreamSchedule::PathLink l{};
    switch (i % 5) {
      case 0:  // near in time, as a pass meets them
        l = {uint64_t(i % 3), t, t + rng() % 5000};
        t += rng() % 2000;
        break;
      case 1:  // the clock's ends
        l = {top, top - rng() % 3, rng() % 3};
        break;
      case 2:  // an end before its start
        l = {rng(), t + 100, t};
        break;
      default:
        l = {rng() >> (rng() % 64), rng(), rng()};
    }
    links.push_back(l);
  }
  for (uint64_t block : {1, 7, 64, 1000}) {
    analysis::BlockLog<StreamSchedule::PathLink, StreamSchedule::PathLinkCodec> log("links", block);
    for (const auto& l : links) log.push(l);
    std::vector<size_t> order(links.size());
    std::iota(order.rbegin(), order.rend(), size_t{0});  // backwards, then shuffled
    for (int pass = 0; pass < 2; ++pass) {
      for (size_t i : order) {
        const StreamSchedule::PathLink& got = log.at(i);
        ASSERT_EQ(std::make_tuple(got.back, got.start, got.end),
                  std::make_tuple(links[i].back, links[i].start, links[i].end))
            << "link " << i << ", blocks of " << block;
      }
      std::shuffle(order.begin(), order.end(), rng);
    }
    if (block < links.size()) {
      EXPECT_GT(log.file_bytes(), 0u);
    }
  }
}

TEST(StreamSched, SampledStepsAreTheStepFunctionTickByTick) {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 200; ++iter) {
    const uint64_t first = 100 + rng() % 10, last = first + 1 + rng() % 120;
    std::vector<SchedStep> steps;
    for (uint64_t t = first; t < last + 3; t += 1 + rng() % 9)
      steps.push_back({t, static_cast<uint32_t>(rng() % 6), static_cast<uint32_t>(rng() % 6)});
    const size_t points = 1 + rng() % 40;
    const std::vector<SchedPoint> got = analysis::downsample(steps, first, last, points);
    ASSERT_EQ(got.size(), std::min<uint64_t>(points, last - first));
    for (const SchedPoint& p : got) {
      uint64_t running = 0, ready = 0;
      uint32_t running_max = 0, ready_max = 0;
      for (uint64_t t = p.begin; t < p.end; ++t) {
        size_t k = 0;
        while (k + 1 < steps.size() && steps[k + 1].time <= t) ++k;
        running += steps[k].running;
        ready += steps[k].ready;
        running_max = std::max(running_max, steps[k].running);
        ready_max = std::max(ready_max, steps[k].ready);
      }
      ASSERT_EQ(p.running_ticks, running) << "iteration " << iter;
      ASSERT_EQ(p.ready_ticks, ready) << "iteration " << iter;
      ASSERT_EQ(p.running_max, running_max) << "iteration " << iter;
      ASSERT_EQ(p.ready_max, ready_max) << "iteration " << iter;
    }
  }
}

// Feeds `m` to `sink` in `order` (a topological order of its strands), each strand's
// predecessors listed or, for some, folded into a join first.
void feed(std::mt19937_64& rng, const Model& m, const std::vector<uint32_t>& order,
          model::StrandSink& sink) {
  std::vector<uint32_t> handle(m.strands.size(), kNone), preds;
  for (uint32_t s : order) {
    preds.clear();
    for (uint32_t p : m.preds_of(s)) preds.push_back(handle[p]);
    if (preds.size() >= 2 && rng() % 2) {
      const uint32_t join = sink.open_join();
      for (size_t k = 1; k < preds.size(); ++k) sink.fold(join, preds[k]);
      preds.resize(1);
      preds.push_back(join);
    }
    const model::Strand& st = m.strands[s];
    sink.times(st.start, st.end, st.thread);
    handle[s] =
        sink.strand(st.work, st.work, st.site, preds.data(), static_cast<uint32_t>(preds.size()),
                    nullptr, 0, 1, 0, m.strand_order.empty() ? s : m.strand_order[s]);
  }
}

// A random topological order of m's strands (Kahn's, taking a random ready strand each time).
std::vector<uint32_t> random_topological_order(std::mt19937_64& rng, const Model& m) {
  const uint32_t n = static_cast<uint32_t>(m.strands.size());
  std::vector<uint32_t> missing(n, 0), ready, order;
  std::vector<std::vector<uint32_t>> succs(n);
  for (uint32_t s = 0; s < n; ++s)
    for (uint32_t p : m.preds_of(s)) {
      ++missing[s];
      succs[p].push_back(s);
    }
  for (uint32_t s = 0; s < n; ++s)
    if (missing[s] == 0) ready.push_back(s);
  while (!ready.empty()) {
    std::swap(ready[rng() % ready.size()], ready.back());
    const uint32_t s = ready.back();
    ready.pop_back();
    order.push_back(s);
    for (uint32_t u : succs[s])
      if (--missing[u] == 0) ready.push_back(u);
  }
  return order;
}

TEST(StreamSched, RandomTimedDagsGiveComputeSchedulesFiguresInAnyOrder) {
  std::mt19937_64 rng(5);
  int compared = 0;
  for (int iter = 0; iter < 400; ++iter) {
    fixtures::RandomModelOptions opt;
    opt.max_strands = 60;
    Model m = fixtures::random_model(rng, opt);
    fixtures::time_randomly(rng, m, iter % 2 ? 3 : 20);  // spread 3: many ties
    if (iter % 3 == 0) {  // the order strands were met in, other than their ids
      m.strand_order.resize(m.strands.size());
      std::iota(m.strand_order.begin(), m.strand_order.end(), 0u);
      std::shuffle(m.strand_order.begin(), m.strand_order.end(), rng);
    }
    const Schedule a = analysis::compute_schedule(m);
    if (!a.timestamps) continue;
    ++compared;
    SCOPED_TRACE("iteration " + std::to_string(iter));
    std::vector<uint32_t> order(m.strands.size());
    std::iota(order.begin(), order.end(), 0u);
    if (iter % 2) order = random_topological_order(rng, m);
    StreamSchedule sink(1 + rng() % 4, 1 + rng() % 8, 1 + rng() % 3);
    feed(rng, m, order, sink);
    const std::vector<size_t> counts = {1, 5, 50};
    const StreamSchedule::Result r = sink.finish(counts);
    const Schedule& b = r.schedule;
    EXPECT_EQ(b.workers, a.workers);
    EXPECT_EQ(b.timed_strands, a.timed_strands);
    EXPECT_EQ(b.first, a.first);
    EXPECT_EQ(b.last, a.last);
    EXPECT_EQ(b.total.work, a.total.work);
    EXPECT_EQ(b.total.delay, a.total.delay);
    EXPECT_EQ(b.total.no_work_sched, a.total.no_work_sched);
    EXPECT_EQ(b.total.no_work_app, a.total.no_work_app);
    EXPECT_EQ(b.running_ticks, a.running_ticks);
    EXPECT_EQ(b.ready_ticks, a.ready_ticks);
    EXPECT_EQ(b.max_running, a.max_running);
    EXPECT_EQ(b.max_ready, a.max_ready);
    EXPECT_EQ(b.path.length, a.path.strands.size());
    EXPECT_EQ(b.path.work, a.path.work);
    EXPECT_EQ(b.path.scheduler_delay, a.path.scheduler_delay);
    EXPECT_EQ(b.path.busy_delay, a.path.busy_delay);
    EXPECT_EQ(b.path.before, a.path.before);
    ASSERT_EQ(b.per_worker.size(), a.per_worker.size());
    for (size_t w = 0; w < a.per_worker.size(); ++w) {
      EXPECT_EQ(b.per_worker[w].thread, a.per_worker[w].thread);
      EXPECT_EQ(b.per_worker[w].strands, a.per_worker[w].strands);
      EXPECT_EQ(b.per_worker[w].time.delay, a.per_worker[w].time.delay);
      EXPECT_EQ(b.per_worker[w].time.no_work_sched, a.per_worker[w].time.no_work_sched);
    }
    for (size_t c : counts) {
      const std::vector<SchedPoint> x = analysis::points(a, c), y = analysis::points(b, c);
      ASSERT_EQ(x.size(), y.size());
      for (size_t k = 0; k < x.size(); ++k) {
        EXPECT_EQ(y[k].running_ticks, x[k].running_ticks);
        EXPECT_EQ(y[k].ready_ticks, x[k].ready_ticks);
        EXPECT_EQ(y[k].ready_max, x[k].ready_max);
      }
    }
    if (HasFailure()) break;
  }
  EXPECT_GT(compared, 300);
}

}  // namespace
}  // namespace tasklens
