// The recorder's interning of user region names (src/recorder/regions.hpp): threads with caches
// of their own intern names concurrently; equal text must give one id and different text
// different ids, dense from 0, whatever the addresses, and every id must reach the trace file in
// a RegionNames record that the reader finds. Runs under TSan in scripts/test.sh.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "recorder/buffer.hpp"
#include "recorder/regions.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"

namespace tasklens {
namespace {

// The trace file the records go to: a header and schema first, the launcher's status last, so
// that TraceFile reads it back.
class RegionsFile {
 public:
  RegionsFile() {
    int fd = mkstemp(path_);
    EXPECT_GE(fd, 0);
    recorder::WriterConfig config;
    config.fd = fd;
    recorder::writer_configure(config);
    std::vector<uint8_t> head;
    trace::FileHeader h = trace::make_file_header(1, 0, 0, trace::Metric::Tsc);
    head.insert(head.end(), reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h + 1));
    std::vector<uint8_t> schema = trace::make_schema_payload();
    trace::append_record(head, trace::RecordType::EventSchema, schema.data(), schema.size());
    recorder::writer_append(head.data(), head.size());
  }
  ~RegionsFile() { unlink(path_); }
  trace::TraceFile read() {
    std::vector<uint8_t> tail;
    trace::LaunchStatus ls{0, 0, 1};
    trace::append_record(tail, trace::RecordType::LaunchStatus, &ls, sizeof ls);
    recorder::writer_append(tail.data(), tail.size());
    return trace::TraceFile::open(path_);
  }

 private:
  char path_[64] = "/tmp/tasklens_regions_testXXXXXX";
};

uint32_t intern(recorder::RegionCache& cache, const char* name) {
  uint32_t id = ~0u;
  EXPECT_TRUE(recorder::region_id(cache, name, id)) << name;
  return id;
}

// One test, as the name table is process-wide: its ids are only dense within one process.
TEST(RecorderRegions, NamesGetOneDenseIdPerTextAcrossThreadsAndReachTheFile) {
  RegionsFile file;
  auto cache = std::make_unique<recorder::RegionCache>();

  // Literals: the same pointer hits the cache, the same text elsewhere gets the same id.
  static const char kSolve[] = "solve";
  const uint32_t solve = intern(*cache, kSolve);
  EXPECT_EQ(solve, 0u);
  EXPECT_EQ(intern(*cache, kSolve), solve);
  std::string copy = kSolve;
  EXPECT_EQ(intern(*cache, copy.c_str()), solve);
  EXPECT_EQ(intern(*cache, ""), 1u);  // the empty name is a name

  // A buffer reused for another name keeps its address: the text decides.
  char buffer[32];
  std::map<std::string, uint32_t> ids = {{"solve", solve}, {"", 1}};
  for (int round = 0; round < 3; ++round) {
    for (int phase = 0; phase < 4; ++phase) {
      snprintf(buffer, sizeof buffer, "phase-%d", phase);
      uint32_t id = intern(*cache, buffer);
      auto [it, fresh] = ids.emplace(buffer, id);
      EXPECT_EQ(it->second, id) << buffer << " changed its id in round " << round;
      EXPECT_TRUE(round > 0 || fresh) << buffer;
    }
  }

  // A name longer than the trace keeps: told apart in full, written cut.
  std::string long_a(recorder::kMaxRegionNameBytes + 100, 'x'), long_b = long_a;
  long_b.back() = 'y';
  const uint32_t id_a = intern(*cache, long_a.c_str()), id_b = intern(*cache, long_b.c_str());
  EXPECT_NE(id_a, id_b);
  ids[long_a] = id_a;
  ids[long_b] = id_b;

  // Threads, each with its own cache, race to intern the same names (new ones among them); the
  // names of many threads land in the same slots of their caches.
  constexpr int kThreads = 4, kNames = 100, kRounds = 50;
  std::vector<std::string> shared;
  for (int i = 0; i < kNames; ++i) shared.push_back("shared-" + std::to_string(i));
  std::vector<std::vector<uint32_t>> seen(kThreads, std::vector<uint32_t>(kNames));
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto own = std::make_unique<recorder::RegionCache>();
      std::vector<std::string> mine = shared;  // same text, addresses of this thread
      for (int r = 0; r < kRounds; ++r)
        for (int i = 0; i < kNames; ++i) {
          int k = (i * 7 + t + r) % kNames;
          uint32_t id = intern(*own, (r % 2 ? mine : shared)[k].c_str());
          if (r == 0) seen[t][k] = id;
          EXPECT_EQ(seen[t][k], id) << shared[k] << " in thread " << t;
        }
    });
  }
  for (auto& th : threads) th.join();
  for (int i = 0; i < kNames; ++i) {
    for (int t = 1; t < kThreads; ++t) EXPECT_EQ(seen[t][i], seen[0][i]) << shared[i];
    ids[shared[i]] = seen[0][i];
  }

  std::set<uint32_t> distinct;
  for (const auto& [name, id] : ids) distinct.insert(id);
  EXPECT_EQ(distinct.size(), ids.size()) << "two names share an id";
  EXPECT_EQ(*distinct.rbegin(), ids.size() - 1) << "ids are not dense";

  trace::TraceFile t = file.read();
  const std::vector<std::string>& names = t.region_names();
  ASSERT_EQ(names.size(), ids.size());
  for (const auto& [name, id] : ids) {
    const std::string want = name.substr(0, recorder::kMaxRegionNameBytes);
    EXPECT_EQ(names[id], want) << "id " << id;
  }
}

}  // namespace
}  // namespace tasklens
