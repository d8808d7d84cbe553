// model::SinkThread (model/sink_thread.hpp): the calls reach the target in order, with handles
// mapped and reused as the target reuses its own, through chunks as small as one call and a
// queue of one chunk; what the target throws comes back to the caller. (Every trace the model
// tests build is also read in one pass through it: trace_builder.hpp.) Runs under TSan too.
#include "model/sink_thread.hpp"

#include <gtest/gtest.h>

#include <random>
#include <stdexcept>
#include <string>
#include <tuple>
#include <vector>

#include "analysis/stream_profile.hpp"
#include "analyze_all.hpp"
#include "random_sink_calls.hpp"

namespace tasklens {
namespace {

using analysis::Profile;
using analysis::StreamProfile;
using model::StrandSink;

TEST(SinkThread, TheTargetGetsTheSameCallsInOrder) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    StreamProfile direct(3);
    fixtures::play_random_calls(direct, seed);
    const Profile expected = direct.finish();
    for (const size_t chunk : {size_t{1}, size_t{13}, size_t{1} << 16}) {
      StreamProfile target(3);
      {
        model::SinkThread threaded(target, chunk, chunk == 1 ? 1 : 4);
        fixtures::play_random_calls(threaded, seed);
        threaded.drain();
      }
      EXPECT_EQ(fixtures::profile_mismatch(target.finish(), expected), "")
          << "seed " << seed << ", chunks of " << chunk << " words";
    }
  }
}

// A target whose calls but strand() do nothing, for the targets below.
class Stub : public StrandSink {
 public:
  Instance open_instance(uint32_t) override { return 0; }
  void not_outermost(Instance) override {}
  void close_instance(Instance) override {}
  Strand open_join() override { return 0; }
  void fold(Strand, Strand) override {}
  void release(Strand) override {}
};

// A target that fails at its 50th strand, as a path log that cannot write its file would.
class Failing final : public Stub {
 public:
  Strand strand(uint64_t, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*, uint32_t,
                uint64_t, uint32_t, uint64_t) override {
    if (++strands == 50) throw std::runtime_error("the disk is full");
    return 0;
  }
  int strands = 0;
};

TEST(SinkThread, WhatTheTargetThrowsComesBackToTheCaller) {
  Failing target;
  model::SinkThread threaded(target, 8, 2);
  try {
    for (uint32_t s = 0; s < 100000; ++s) threaded.strand(1, 1, 0, nullptr, 0, nullptr, 0, 1, 0, s);
    threaded.drain();
    FAIL() << "no error";
  } catch (const std::runtime_error& e) {
    EXPECT_EQ(std::string(e.what()), "the disk is full");
  }
  EXPECT_EQ(target.strands, 50);  // nothing was played after it
}

// Stopped before its calls were drained (the builder threw): the thread ends, nothing hangs.
TEST(SinkThread, DroppedBeforeDrainingEndsCleanly) {
  StreamProfile target(3);
  {
    model::SinkThread threaded(target, 4, 1);
    fixtures::play_random_calls(threaded, 7);
  }
  SUCCEED();
}

// A target that wants task starts and notes, per strand, whether one came just before it.
class TaskStarts final : public Stub {
 public:
  Strand strand(uint64_t, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*, uint32_t,
                uint64_t, uint32_t, uint64_t) override {
    starts.push_back(pending);
    pending = false;
    return static_cast<Strand>(starts.size() - 1);
  }
  bool wants_task_starts() const override { return true; }
  void task_start() override { pending = true; }
  std::vector<bool> starts;
  bool pending = false;
};

TEST(SinkThread, ATaskStartReachesTheTargetBeforeItsStrand) {
  TaskStarts target;
  {
    model::SinkThread threaded(target, 5, 2);
    EXPECT_TRUE(threaded.wants_task_starts());
    for (uint32_t s = 0; s < 1000; ++s) {
      if (s % 3 == 1) threaded.task_start();
      threaded.strand(1, 1, 0, nullptr, 0, nullptr, 0, 1, 0, s);
    }
    threaded.drain();
  }
  ASSERT_EQ(target.starts.size(), 1000u);
  for (uint32_t s = 0; s < 1000; ++s) EXPECT_EQ(target.starts[s], s % 3 == 1) << "strand " << s;
  StreamProfile plain(3);
  EXPECT_FALSE(model::SinkThread(plain).wants_task_starts());
}

// A target that wants each strand's times and notes those that came just before it.
class Times final : public Stub {
 public:
  Strand strand(uint64_t, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*, uint32_t,
                uint64_t, uint32_t, uint64_t) override {
    seen.push_back(pending);
    return static_cast<Strand>(seen.size() - 1);
  }
  bool wants_times() const override { return true; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override {
    pending = {start, end, thread};
  }
  std::vector<std::tuple<uint64_t, uint64_t, uint32_t>> seen;
  std::tuple<uint64_t, uint64_t, uint32_t> pending;
};

TEST(SinkThread, AStrandsTimesReachTheTargetBeforeIt) {
  Times target;
  {
    model::SinkThread threaded(target, 5, 2);
    EXPECT_TRUE(threaded.wants_times());
    for (uint32_t s = 0; s < 1000; ++s) {
      threaded.times(uint64_t{1} << 40 | s, ~uint64_t{0} - s, s % 3 ? s : model::kNone);
      threaded.strand(1, 1, 0, nullptr, 0, nullptr, 0, 1, 0, s);
    }
    threaded.drain();
  }
  ASSERT_EQ(target.seen.size(), 1000u);
  for (uint32_t s = 0; s < 1000; ++s)
    EXPECT_EQ(target.seen[s],
              std::make_tuple(uint64_t{1} << 40 | s, ~uint64_t{0} - s, s % 3 ? s : model::kNone))
        << "strand " << s;
  StreamProfile plain(3);
  EXPECT_FALSE(model::SinkThread(plain).wants_times());
}

// A target that wants the strands' work in user regions and notes those that came before each.
class Regions final : public Stub {
 public:
  Strand strand(uint64_t, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*, uint32_t,
                uint64_t, uint32_t, uint64_t) override {
    seen.push_back(std::move(pending));
    pending.clear();
    return static_cast<Strand>(seen.size() - 1);
  }
  bool wants_regions() const override { return true; }
  void region_work(uint32_t region, uint64_t work) override { pending.emplace_back(region, work); }
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> seen;
  std::vector<std::pair<uint32_t, uint64_t>> pending;
};

// None, one or several (the third in the first one's region again) before a strand, in their order,
// with ids and work of every width.
TEST(SinkThread, AStrandsRegionWorkReachesTheTargetBeforeIt) {
  auto parts_of = [](uint32_t s) {
    std::vector<std::pair<uint32_t, uint64_t>> parts;
    for (uint32_t k = 0; k < s % 4; ++k)
      parts.emplace_back((s * 31 + k % 2) % 1000003, (uint64_t{1} << 50) + s * k);
    return parts;
  };
  Regions target;
  {
    model::SinkThread threaded(target, 5, 2);
    EXPECT_TRUE(threaded.wants_regions());
    for (uint32_t s = 0; s < 1000; ++s) {
      for (const auto& [region, work] : parts_of(s)) threaded.region_work(region, work);
      threaded.strand(1, 1, 0, nullptr, 0, nullptr, 0, 1, 0, s);
    }
    threaded.drain();
  }
  ASSERT_EQ(target.seen.size(), 1000u);
  for (uint32_t s = 0; s < 1000; ++s) EXPECT_EQ(target.seen[s], parts_of(s)) << "strand " << s;
  StreamProfile plain(3);
  EXPECT_FALSE(model::SinkThread(plain).wants_regions());
}

// A target that notes each strand's predecessors and instances, as handles it gave.
class Lists final : public Stub {
 public:
  Instance open_instance(uint32_t) override { return instances++; }
  Strand strand(uint64_t, uint64_t, uint32_t, const Strand* preds, uint32_t pred_count,
                const Instance* around, uint32_t instance_count, uint64_t, uint32_t,
                uint64_t) override {
    seen.emplace_back(std::vector<Strand>(preds, preds + pred_count),
                      std::vector<Instance>(around, around + instance_count));
    return static_cast<Strand>(seen.size() - 1);
  }
  std::vector<std::pair<std::vector<Strand>, std::vector<Instance>>> seen;
  Instance instances = 0;
};

// A call longer than a chunk's room (its words are written in place: the chunk grows for it)
// reaches the target whole, before and after chunks of ordinary calls.
TEST(SinkThread, ACallLongerThanAChunkReachesTheTargetWhole) {
  Lists target;
  std::vector<StrandSink::Instance> around;
  std::vector<StrandSink::Strand> made;
  {
    model::SinkThread threaded(target, 13, 2);
    for (uint32_t i = 0; i < 90; ++i) around.push_back(threaded.open_instance(i));
    for (uint32_t s = 0; s < 400; ++s) {
      // Every 50th strand: 300 predecessors and 90 instances (398 words); else one of each.
      const bool long_one = s % 50 == 49;
      std::vector<StrandSink::Strand> preds;
      for (uint32_t k = 0; k < (long_one ? 300u : 1u) && k < made.size(); ++k)
        preds.push_back(made[made.size() - 1 - k]);
      made.push_back(threaded.strand(1, 1, 0, preds.data(), static_cast<uint32_t>(preds.size()),
                                     around.data(), long_one ? 90u : 1u, 1, 0, s));
    }
    threaded.drain();
  }
  ASSERT_EQ(target.seen.size(), 400u);
  for (uint32_t s = 0; s < 400; ++s) {
    const bool long_one = s % 50 == 49;
    const auto& [preds, instances] = target.seen[s];
    ASSERT_EQ(preds.size(), std::min<size_t>(long_one ? 300 : 1, s)) << "strand " << s;
    for (size_t k = 0; k < preds.size(); ++k)  // (the target's handles are its strands' order)
      EXPECT_EQ(preds[k], s - 1 - k) << "strand " << s << ", predecessor " << k;
    ASSERT_EQ(instances.size(), long_one ? 90u : 1u) << "strand " << s;
    for (size_t k = 0; k < instances.size(); ++k) EXPECT_EQ(instances[k], k);
  }
}

}  // namespace
}  // namespace tasklens
