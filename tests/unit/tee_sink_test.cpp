// model::TeeSink (model/tee_sink.hpp): each target gets every call with its own handles, as if it
// were alone, and only the optional calls it wants. (Every trace the model tests build is also
// read through one into a StreamProfile: support/one_pass_mismatch.hpp's structure check.)
#include "model/tee_sink.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "analysis/stream_profile.hpp"
#include "analyze_all.hpp"
#include "random_sink_calls.hpp"

namespace tasklens {
namespace {

using analysis::StreamProfile;
using model::StrandSink;

TEST(TeeSink, EachTargetGetsTheCallsAsIfAlone) {
  for (uint64_t seed = 1; seed <= 200; ++seed) {
    StreamProfile direct(3);
    fixtures::play_random_calls(direct, seed);
    const analysis::Profile expected = direct.finish();
    // A target that started with handles of its own already taken maps them apart.
    StreamProfile first(3), second(3);
    second.open_instance(0);
    second.strand(5, 5, 0, nullptr, 0, nullptr, 0, 1, 0, StreamProfile::kArrival);
    model::TeeSink tee({&first, &second});
    fixtures::play_random_calls(tee, seed);
    EXPECT_EQ(fixtures::profile_mismatch(first.finish(), expected), "") << "seed " << seed;
    const analysis::Profile two = second.finish();
    EXPECT_EQ(two.work, expected.work + 5) << "seed " << seed;
  }
}

// A target that counts the optional calls it gets.
class Counting final : public StrandSink {
 public:
  explicit Counting(bool wants) : wants_(wants) {}
  Instance open_instance(uint32_t) override { return 0; }
  void not_outermost(Instance) override {}
  void close_instance(Instance) override {}
  Strand strand(uint64_t, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*, uint32_t,
                uint64_t, uint32_t, uint64_t) override {
    return strands++;
  }
  Strand open_join() override { return 0; }
  void fold(Strand, Strand) override {}
  void release(Strand) override {}
  bool wants_times() const override { return wants_; }
  void times(uint64_t, uint64_t, uint32_t) override { ++calls; }
  bool wants_nodes() const override { return wants_; }
  void node(uint64_t, uint64_t, uint8_t, uint32_t, uint32_t) override { ++calls; }
  void strand_node(uint64_t) override { ++calls; }
  void node_done(uint64_t) override { ++calls; }
  bool wants_;
  uint32_t strands = 0;
  int calls = 0;
};

TEST(TeeSink, OnlyTheTargetsThatWantACallGetIt) {
  Counting yes(true), no(false);
  model::TeeSink tee({&no, &yes});
  EXPECT_TRUE(tee.wants_times());
  EXPECT_TRUE(tee.wants_nodes());
  EXPECT_FALSE(tee.wants_tasks());
  tee.node(0, StrandSink::kNoNode, 0, StrandSink::kNoSite, StrandSink::kNoInstance);
  tee.times(1, 2, 0);
  tee.strand_node(0);
  tee.strand(1, 1, 0, nullptr, 0, nullptr, 0, 1, 0, 0);
  tee.node_done(0);
  EXPECT_EQ(yes.calls, 4);
  EXPECT_EQ(no.calls, 0);
  EXPECT_EQ(yes.strands, 1u);
  EXPECT_EQ(no.strands, 1u);
  model::TeeSink none({&no});
  EXPECT_FALSE(none.wants_times());
  EXPECT_FALSE(none.wants_nodes());
}

}  // namespace
}  // namespace tasklens
