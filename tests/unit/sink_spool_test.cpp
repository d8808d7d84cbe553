// load::SinkSpool (load/sink_spool.hpp): the calls a pass made through model::SinkThread, played
// back from the spool, give the target the same calls in the same order (the same profile); the
// calls it did not keep are not asked for; a spool past its budget gives up, and says so.
#include "load/sink_spool.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/stream_profile.hpp"
#include "analyze_all.hpp"
#include "random_sink_calls.hpp"

namespace tasklens {
namespace {

using analysis::Profile;
using analysis::StreamProfile;
using load::SinkSpool;
using model::StrandSink;

TEST(SinkSpool, TheReplayGivesTheSameProfile) {
  for (uint64_t seed = 1; seed <= 100; ++seed) {
    StreamProfile direct(3);
    fixtures::play_random_calls(direct, seed);
    const Profile expected = direct.finish();
    for (const size_t chunk : {size_t{1}, size_t{13}, size_t{1} << 15}) {
      SinkSpool spool;
      StreamProfile first(3);
      {
        model::SinkThread threaded(first, chunk, 4, &spool);
        fixtures::play_random_calls(threaded, seed);
        threaded.drain();
      }
      ASSERT_TRUE(spool.complete());
      StreamProfile again(3);
      spool.replay(again);
      EXPECT_EQ(fixtures::profile_mismatch(again.finish(), expected), "")
          << "seed " << seed << ", chunks of " << chunk << " words";
    }
  }
}

// Every call it is given, as text, in order; `extras`: whether it wants the calls beyond the
// profile's.
class Log final : public StrandSink {
 public:
  explicit Log(bool extras) : extras_(extras) {}
  Instance open_instance(uint32_t site) override {
    add("open " + std::to_string(site) + " -> " + std::to_string(instances_));
    return instances_++;
  }
  void not_outermost(Instance i) override { add("not_outermost " + std::to_string(i)); }
  void close_instance(Instance i) override { add("close " + std::to_string(i)); }
  Strand strand(uint64_t work, uint64_t span, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override {
    std::string s = "strand " + std::to_string(work) + " " + std::to_string(span) + " " +
                    std::to_string(site) + " " + std::to_string(iterations) + " " +
                    std::to_string(fragment) + " " + std::to_string(order) + " preds";
    for (uint32_t k = 0; k < pred_count; ++k) s += " " + std::to_string(preds[k]);
    s += " in";
    for (uint32_t k = 0; k < instance_count; ++k) s += " " + std::to_string(instances[k]);
    add(s + " -> " + std::to_string(strands_));
    return strands_++;
  }
  Strand open_join() override {
    add("join -> " + std::to_string(strands_));
    return strands_++;
  }
  void fold(Strand join, Strand pred) override {
    add("fold " + std::to_string(join) + " " + std::to_string(pred));
  }
  void release(Strand s) override { add("release " + std::to_string(s)); }
  bool wants_tasks() const override { return extras_; }
  void task(const Task& t) override {
    add("task " + std::to_string(t.site) + " " + std::to_string(t.chunk) + " " +
        std::to_string(t.size) + " " + std::to_string(t.wait) + " " + std::to_string(t.idle));
  }
  bool wants_task_starts() const override { return extras_; }
  void task_start() override { add("task_start"); }
  bool wants_times() const override { return extras_; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override {
    add("times " + std::to_string(start) + " " + std::to_string(end) + " " +
        std::to_string(thread));
  }
  bool wants_task_keys() const override { return extras_; }
  void task_key(uint64_t key) override { add("task_key " + std::to_string(key)); }
  bool wants_regions() const override { return extras_; }
  void region_work(uint32_t region, uint64_t work) override {
    add("region " + std::to_string(region) + " " + std::to_string(work));
  }
  bool wants_nodes() const override { return extras_; }
  void node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site,
            uint32_t instance) override {
    add("node " + std::to_string(key) + " " + std::to_string(parent) + " " + std::to_string(kind) +
        " " + std::to_string(site) + " " + std::to_string(instance));
  }
  void strand_node(uint64_t key) override { add("strand_node " + std::to_string(key)); }
  void node_done(uint64_t key) override { add("node_done " + std::to_string(key)); }

  std::vector<std::string> calls, core_calls;  // core: those a profile takes

 private:
  void add(const std::string& call) {
    calls.push_back(call);
    const std::string kind = call.substr(0, call.find(' '));
    if (kind == "open" || kind == "not_outermost" || kind == "close" || kind == "strand" ||
        kind == "join" || kind == "fold" || kind == "release")
      core_calls.push_back(call);
  }
  bool extras_;
  uint32_t instances_ = 0, strands_ = 0;
};

// A Log that wants only the strands' times beyond a profile's calls.
class TimesLog final : public StrandSink {
 public:
  Instance open_instance(uint32_t) override { return instances_++; }
  void not_outermost(Instance) override {}
  void close_instance(Instance) override {}
  Strand strand(uint64_t, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*, uint32_t,
                uint64_t, uint32_t, uint64_t) override {
    return strands_++;
  }
  Strand open_join() override { return strands_++; }
  void fold(Strand, Strand) override {}
  void release(Strand) override {}
  bool wants_times() const override { return true; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override {
    seen.push_back(std::to_string(start) + " " + std::to_string(end) + " " +
                   std::to_string(thread));
  }
  std::vector<std::string> seen;

 private:
  uint32_t instances_ = 0, strands_ = 0;
};

// Calls of every kind, with values at their fields' limits (an order of kArrival, sites and
// fragments of 32 bits, works of 64).
void play_every_kind(StrandSink& sink) {
  const StrandSink::Instance outer = sink.open_instance(0xfffffffeu);
  const StrandSink::Instance inner = sink.open_instance(7);
  sink.not_outermost(inner);
  std::vector<StrandSink::Strand> live;
  for (uint32_t s = 0; s < 300; ++s) {
    if (s % 5 == 0) sink.task_start();
    if (s % 7 == 0) sink.times(uint64_t{1} << 40 | s, (uint64_t{1} << 40) + 2 * s, s % 3);
    if (s % 11 == 0) sink.task_key(~uint64_t{0} - s);
    if (s % 13 == 0) sink.region_work(s % 4, 1000 + s);
    if (s % 17 == 0) sink.node(s, s / 2, static_cast<uint8_t>(s % 256), 0xffffffffu, s);
    if (s % 19 == 0) sink.strand_node(s);
    const StrandSink::Strand preds[2] = {live.empty() ? 0 : live.back(),
                                         live.size() < 2 ? 0 : live[live.size() - 2]};
    const StrandSink::Instance around[2] = {outer, inner};
    const uint64_t work = s % 3 == 0 ? ~uint64_t{0} >> (s % 64) : s;
    const uint64_t span = s % 4 == 0 ? work / 3 : work;
    const uint64_t order = s % 6 == 0 ? StreamProfile::kArrival : uint64_t{s} * 1000003;
    live.push_back(sink.strand(work, span, s % 2 ? 0xffffffffu : s, preds,
                               static_cast<uint32_t>(std::min<size_t>(live.size(), 2)), around,
                               s % 2 ? 2 : 1, 1 + s % 5, s % 2 ? 0xfffffffeu : s, order));
    if (s % 23 == 0) {
      StrandSink::Task t;
      t.site = s;
      t.chunk = s % 2 == 0;
      t.size = s * 10;
      t.wait = s * 20;
      t.idle = s * 30;
      sink.task(t);
    }
    if (s % 9 == 0) {
      const StrandSink::Strand j = sink.open_join();
      sink.fold(j, live.back());
      sink.release(j);
    }
    if (s % 19 == 0) sink.node_done(s);
    if (live.size() > 4) {
      sink.release(live.front());
      live.erase(live.begin());
    }
  }
  for (StrandSink::Strand s : live) sink.release(s);
  sink.close_instance(inner);
  sink.close_instance(outer);
}

TEST(SinkSpool, EveryCallComesBackAsItWasMade) {
  for (const size_t chunk : {size_t{1}, size_t{29}, size_t{1} << 15}) {
    Log first(true);
    SinkSpool spool;
    spool.keep_for(first);
    {
      model::SinkThread threaded(first, chunk, 3, &spool);
      play_every_kind(threaded);
      threaded.drain();
    }
    ASSERT_TRUE(spool.complete());
    Log again(true);
    spool.replay(again);
    EXPECT_EQ(again.calls, first.calls) << "chunks of " << chunk << " words";
    EXPECT_GT(first.calls.size(), first.core_calls.size());  // (the extras were made)
  }
}

TEST(SinkSpool, WithoutItsExtrasItPlaysOnlyAProfilesCalls) {
  Log first(true);
  SinkSpool spool;  // (keeps no extras: no keep_for)
  {
    model::SinkThread threaded(first, 64, 3, &spool);
    play_every_kind(threaded);
    threaded.drain();
  }
  Log wants_all(true);
  EXPECT_THROW(spool.replay(wants_all), std::logic_error);
  Log profile_only(false);
  spool.replay(profile_only);
  EXPECT_EQ(profile_only.calls, first.core_calls);
}

TEST(SinkSpool, ItKeepsTheCallsItsPassesSinkWants) {
  Log first(true);
  SinkSpool spool;
  spool.keep_for(TimesLog());
  {
    model::SinkThread threaded(first, 64, 3, &spool);
    play_every_kind(threaded);
    threaded.drain();
  }
  TimesLog times;
  spool.replay(times);
  std::vector<std::string> made;
  for (const std::string& call : first.calls)
    if (call.rfind("times ", 0) == 0) made.push_back(call.substr(6));
  EXPECT_FALSE(made.empty());
  EXPECT_EQ(times.seen, made);
  Log wants_all(true);
  EXPECT_THROW(spool.replay(wants_all), std::logic_error);  // (the tasks, nodes... are not kept)
}

TEST(SinkSpool, PastItsBudgetItGivesUp) {
  SinkSpool spool(/*budget_bytes=*/512);
  StreamProfile first(3);
  {
    model::SinkThread threaded(first, 64, 3, &spool);
    fixtures::play_random_calls(threaded, 5);
    threaded.drain();
  }
  EXPECT_FALSE(spool.complete());
  EXPECT_EQ(spool.file_bytes(), 0u);  // (its file is gone)
  StreamProfile again(3);
  EXPECT_THROW(spool.replay(again), std::logic_error);
}

}  // namespace
}  // namespace tasklens
