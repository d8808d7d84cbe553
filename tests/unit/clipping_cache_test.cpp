// The robust span's clipping kept between commands (load/clipping_cache.hpp): what is kept comes
// back whole, for the same recording only, never from a damaged entry, and the cache stays
// bounded. (The readings that use it: tests/e2e/e2e_clipping_cache_test.cpp.)
#include "load/clipping_cache.hpp"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace tasklens::load {
namespace {
namespace fs = std::filesystem;

CachedClipping example() {
  CachedClipping c;
  c.robust = true;
  c.clipping.tested = true;
  c.clipping.floor = 4200;
  analysis::ClippedStrand s;
  s.strand = uint64_t{5} << 32;  // past 2^32: a recording of a billion tasks
  s.thread = 1;
  s.begin = 1000;
  s.end = 90000;
  s.work_raw = 89000;
  s.work_clipped = 120;
  s.fragment_quantile = 300;
  s.fragment_samples = 4000;
  s.simultaneous = true;
  c.clipping.strands.push_back(s);
  s.strand = (uint64_t{5} << 32) + 7;
  s.simultaneous = false;
  c.clipping.strands.push_back(s);
  c.clipping.clipped_work = 2 * (89000 - 120);
  c.fragments = {3, 17};
  c.has_measured = true;
  c.measured = {1000000, 3000, 1000000.0 / 3000};
  return c;
}

void expect_same(const CachedClipping& a, const CachedClipping& b) {
  EXPECT_EQ(a.robust, b.robust);
  EXPECT_EQ(a.clipping.tested, b.clipping.tested);
  EXPECT_EQ(a.clipping.floor, b.clipping.floor);
  EXPECT_EQ(a.clipping.clipped_work, b.clipping.clipped_work);
  ASSERT_EQ(a.clipping.strands.size(), b.clipping.strands.size());
  for (size_t i = 0; i < a.clipping.strands.size(); ++i) {
    const analysis::ClippedStrand &x = a.clipping.strands[i], &y = b.clipping.strands[i];
    EXPECT_EQ(x.strand, y.strand);
    EXPECT_EQ(x.thread, y.thread);
    EXPECT_EQ(x.begin, y.begin);
    EXPECT_EQ(x.end, y.end);
    EXPECT_EQ(x.work_raw, y.work_raw);
    EXPECT_EQ(x.work_clipped, y.work_clipped);
    EXPECT_EQ(x.fragment_quantile, y.fragment_quantile);
    EXPECT_EQ(x.fragment_samples, y.fragment_samples);
    EXPECT_EQ(x.simultaneous, y.simultaneous);
  }
  EXPECT_EQ(a.fragments, b.fragments);
  EXPECT_EQ(a.has_measured, b.has_measured);
  EXPECT_EQ(a.measured.work, b.measured.work);
  EXPECT_EQ(a.measured.span, b.measured.span);
  EXPECT_EQ(a.measured.parallelism, b.measured.parallelism);  // (computed again: the same)
}

TEST(ClippingCache, AnEntryComesBackWhole) {
  const CachedClipping c = example();
  const std::optional<CachedClipping> back = clipping_from_json(clipping_to_json(c));
  ASSERT_TRUE(back);
  expect_same(c, *back);
  CachedClipping without = c;
  without.has_measured = false;
  without.measured = {};
  const std::optional<CachedClipping> back2 = clipping_from_json(clipping_to_json(without));
  ASSERT_TRUE(back2);
  expect_same(without, *back2);
}

TEST(ClippingCache, ADamagedEntryIsNoEntry) {
  const std::string text = clipping_to_json(example());
  for (const std::string& bad :
       {text.substr(0, text.size() / 2), std::string("not json"), std::string("{}"),
        std::string("[1, 2]"), std::string("{\"format\": 2}")})
    EXPECT_FALSE(clipping_from_json(bad)) << bad;
  // As many fragments as clipped strands, or it is not one.
  CachedClipping c = example();
  c.fragments.pop_back();
  EXPECT_FALSE(clipping_from_json(clipping_to_json(c)));
}

class ClippingCacheDir : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (fs::temp_directory_path() / "tasklens-cc-XXXXXX").string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr);
    dir_ = templ;
    setenv("TASKLENS_CACHE_DIR", (dir_ / "cache").c_str(), 1);
    unsetenv("TASKLENS_CACHE");
    recording_ = (dir_ / "r.tlens").string();
    std::ofstream(recording_) << "a recording";
  }
  void TearDown() override {
    unsetenv("TASKLENS_CACHE_DIR");
    unsetenv("TASKLENS_CACHE");
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  size_t entries() const {
    size_t n = 0;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(dir_ / "cache" / "clipping", ec))
      n += !e.is_directory();
    return n;
  }
  fs::path dir_;
  std::string recording_;
};

TEST_F(ClippingCacheDir, KeptForTheSameRecordingOnly) {
  EXPECT_FALSE(cached_clipping(recording_));
  keep_clipping(recording_, example());
  std::optional<CachedClipping> back = cached_clipping(recording_);
  ASSERT_TRUE(back);
  expect_same(example(), *back);
  // The same file by another path: the same recording.
  EXPECT_TRUE(cached_clipping((dir_ / "." / "r.tlens").string()));
  // Another recording has none; the recording written again has none.
  const std::string other = (dir_ / "other.tlens").string();
  std::ofstream(other) << "a recording";
  EXPECT_FALSE(cached_clipping(other));
  std::ofstream(recording_, std::ios::app) << " and more";
  EXPECT_FALSE(cached_clipping(recording_));
  keep_clipping(recording_, example());
  EXPECT_TRUE(cached_clipping(recording_));
  forget_clipping(recording_);
  EXPECT_FALSE(cached_clipping(recording_));
}

TEST_F(ClippingCacheDir, OffKeepsNothingAndReadsNothing) {
  keep_clipping(recording_, example());
  ASSERT_TRUE(cached_clipping(recording_));
  setenv("TASKLENS_CACHE", "off", 1);
  EXPECT_FALSE(cached_clipping(recording_));
  forget_clipping(recording_);  // (nothing done)
  const std::string other = (dir_ / "other.tlens").string();
  std::ofstream(other) << "another recording";
  keep_clipping(other, example());
  unsetenv("TASKLENS_CACHE");
  EXPECT_FALSE(cached_clipping(other));
  EXPECT_TRUE(cached_clipping(recording_));
  EXPECT_EQ(entries(), 1u);
}

TEST_F(ClippingCacheDir, APipeKeepsNothing) {
  const std::string fifo = (dir_ / "pipe.tlens").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  keep_clipping(fifo, example());
  EXPECT_FALSE(cached_clipping(fifo));
  EXPECT_EQ(entries(), 0u);
}

TEST_F(ClippingCacheDir, AtMostSoManyEntriesTheOldestDroppedFirst) {
  std::vector<std::string> paths;
  for (size_t i = 0; i < kClippingEntries + 5; ++i) {
    paths.push_back((dir_ / ("r" + std::to_string(i) + ".tlens")).string());
    std::ofstream(paths.back()) << i;
    keep_clipping(paths.back(), example());
    // (Entries a second apart in their times: the order does not rest on the clock's grain.)
    const fs::path entry_dir = dir_ / "cache" / "clipping";
    for (const auto& e : fs::directory_iterator(entry_dir))
      fs::last_write_time(e.path(), fs::last_write_time(e.path()) - std::chrono::seconds(1));
  }
  EXPECT_EQ(entries(), kClippingEntries);
  for (size_t i = 0; i < 5; ++i) EXPECT_FALSE(cached_clipping(paths[i])) << i;
  for (size_t i = 5; i < paths.size(); ++i) EXPECT_TRUE(cached_clipping(paths[i])) << i;
}

}  // namespace
}  // namespace tasklens::load
