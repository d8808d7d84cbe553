// `tasklens record`'s runtime calibration (src/launch/runtime_calibration.cpp): the medians it
// keeps per kind of interval, and the record it appends to a trace, read back.
#include "launch/runtime_calibration.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "model_team.hpp"
#include "trace/reader.hpp"
#include "trace_builder.hpp"

namespace tasklens::launch {
namespace {

using fixtures::TraceBuilder;

model::IntervalSample sample(uint16_t before, uint16_t after, bool solo, uint64_t ticks) {
  return model::IntervalSample{before, after, uint8_t(solo ? 1 : 0), ticks};
}

// A trace of one parallel region in a temporary file (its path; empty if it could not be written).
std::string one_region_trace() {
  TraceBuilder tb(2);
  fixtures::Region r{tb};
  r.begin();
  r.end(100, 110);
  const std::vector<uint8_t> bytes = tb.bytes();
  char path[] = "/tmp/tasklens_calibration_testXXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return "";
  const bool written = write(fd, bytes.data(), bytes.size()) == ssize_t(bytes.size());
  close(fd);
  if (!written) unlink(path);
  return written ? path : "";
}

TEST(RuntimeCalibration, KeepsTheMedianOfEachKindWithEnoughIntervals) {
  std::vector<model::IntervalSample> s;
  // 17 intervals of one kind in teams of two: 10 .. 26 ticks, and one host pause of 1 s.
  for (uint64_t t = 10; t <= 26; ++t) s.push_back(sample(16, 32, false, t));
  s.push_back(sample(16, 32, false, 2'000'000'000));
  // The same kind in one-thread teams, 16 intervals of 7 ticks: a kind of its own.
  for (int i = 0; i < 16; ++i) s.push_back(sample(16, 32, true, 7));
  // Too few of another kind.
  for (int i = 0; i < 15; ++i) s.push_back(sample(32, 16, false, 100));
  // A kind whose median is 0 (two events at one time): nothing to take out, no entry.
  for (int i = 0; i < 20; ++i) s.push_back(sample(48, 16, false, i < 12 ? 0 : 5));
  const std::vector<trace::RuntimeCostEntry> e = runtime_cost_entries(s, 16);
  ASSERT_EQ(e.size(), 2u);
  EXPECT_EQ(e[0].before, 16);
  EXPECT_EQ(e[0].after, 32);
  EXPECT_EQ(e[0].solo, 0);
  EXPECT_EQ(uint32_t{e[0].samples}, 18u);
  EXPECT_EQ(uint64_t{e[0].milli_ticks}, 18500u);  // the pause does not move it: (18 + 19) / 2
  EXPECT_EQ(e[1].solo, 1);
  EXPECT_EQ(uint32_t{e[1].samples}, 16u);
  EXPECT_EQ(uint64_t{e[1].milli_ticks}, 7000u);
}

TEST(RuntimeCalibration, TheAppendedRecordReadsBack) {
  const std::string path = one_region_trace();
  ASSERT_FALSE(path.empty());
  RuntimeCalibration c;
  c.samples = 1234;
  c.tasks = 99;
  trace::RuntimeCostEntry e{};
  e.before = trace::interval_key(trace::EventKind::TaskCreate, 0);
  e.after = trace::interval_key(trace::EventKind::TaskSchedule, 7);
  e.solo = 1;
  e.samples = 40;
  e.milli_ticks = 150500;
  c.entries = {e, e};
  c.entries[1].solo = 0;
  c.task_cost.pico_per_task = 48'500;
  c.task_cost.tasks = 5166;
  c.task_cost.rounds = 41;
  c.task_cost.measurements = 3;
  const int64_t added = append_runtime_cost(path, c);
  EXPECT_EQ(added, int64_t(2 * sizeof(trace::RecordHeader) + sizeof(trace::RuntimeCostHeader) +
                           2 * sizeof(trace::RuntimeCostEntry) + sizeof(trace::TaskCost)));
  const trace::TraceFile t = trace::TraceFile::open(path);
  unlink(path.c_str());
  ASSERT_TRUE(t.has_task_cost());
  EXPECT_EQ(uint64_t{t.task_cost().pico_per_task}, 48'500u);
  EXPECT_EQ(uint32_t{t.task_cost().tasks}, 5166u);
  EXPECT_EQ(uint32_t{t.task_cost().measurements}, 3u);
  ASSERT_EQ(t.runtime_costs().size(), 2u);
  EXPECT_EQ(uint32_t{t.runtime_cost_header().samples}, 1234u);
  EXPECT_EQ(uint64_t{t.runtime_cost_header().tasks}, 99u);
  EXPECT_EQ(uint16_t{t.runtime_costs()[0].before}, uint16_t{e.before});
  EXPECT_EQ(uint16_t{t.runtime_costs()[0].after}, uint16_t{e.after});
  EXPECT_EQ(uint64_t{t.runtime_costs()[0].milli_ticks}, 150500u);
  EXPECT_EQ(t.runtime_costs()[1].solo, 0);
}

TEST(RuntimeCalibration, ADamagedRecordIsRefusedWithItsName) {
  for (uint32_t count : {100000u, 5u}) {
    TraceBuilder tb(2);
    fixtures::Region r{tb};
    r.begin();
    r.end(100, 110);
    std::vector<uint8_t> bytes = tb.bytes();
    trace::RuntimeCostHeader h{};
    h.count = count;  // but one entry follows
    trace::RuntimeCostEntry e{};
    trace::append_record(bytes, trace::RecordType::RuntimeCost, &h, sizeof h, &e, sizeof e);
    char path[] = "/tmp/tasklens_calibration_testXXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, bytes.data(), bytes.size()), ssize_t(bytes.size()));
    close(fd);
    try {
      trace::TraceFile::open(path);
      ADD_FAILURE() << count << " entries: the record was accepted";
    } catch (const trace::TraceError& err) {
      EXPECT_NE(std::string(err.what()).find("runtime cost"), std::string::npos) << err.what();
    }
    unlink(path);
  }
}

TEST(RuntimeCalibration, CombinedRunsKeepTheLeastMedianOfKindsMostRunsMeasured) {
  auto entry = [](uint16_t before, uint64_t milli, uint32_t samples) {
    trace::RuntimeCostEntry e{};
    e.before = before;
    e.after = 16;
    e.milli_ticks = milli;
    e.samples = samples;
    return e;
  };
  RuntimeCalibration a, b, c, failed;
  a.entries = {entry(32, 90000, 20), entry(48, 5000, 30)};
  a.samples = 50;
  a.tasks = 7;
  b.entries = {entry(32, 60000, 25)};
  b.samples = 25;
  b.tasks = 7;
  c.entries = {entry(32, 120000, 22), entry(64, 1000, 40)};
  c.samples = 62;
  c.tasks = 7;
  failed.why = "it crashed";
  const RuntimeCalibration r = combine_calibrations({a, b, failed, c});
  // Kind 32 in all three: the least median, 60 ticks, from 67 intervals; 48 and 64 in one run
  // of three each: dropped.
  ASSERT_EQ(r.entries.size(), 1u);
  EXPECT_EQ(uint16_t{r.entries[0].before}, 32);
  EXPECT_EQ(uint64_t{r.entries[0].milli_ticks}, 60000u);
  EXPECT_EQ(uint32_t{r.entries[0].samples}, 67u);
  EXPECT_EQ(r.samples, 137u);
  EXPECT_EQ(r.tasks, 21u);
  EXPECT_TRUE(r.why.empty());
  // Two runs: a kind one of them measured stays.
  EXPECT_EQ(combine_calibrations({a, b}).entries.size(), 2u);
  // Nothing measured: the first reason why.
  const RuntimeCalibration none = combine_calibrations({failed, failed});
  EXPECT_TRUE(none.entries.empty());
  EXPECT_EQ(none.why, "it crashed");
}

TEST(RuntimeCalibration, AMissingTraceIsNotWritten) {
  RuntimeCalibration c;
  c.entries.resize(1);
  EXPECT_EQ(append_runtime_cost("/nonexistent/dir/x.tlens", c), -1);
}

TEST(RuntimeCalibration, WithoutATaskCostOnlyTheRuntimeCostIsAppended) {
  const std::string path = one_region_trace();
  ASSERT_FALSE(path.empty());
  RuntimeCalibration c;
  c.entries.resize(1);
  c.entries[0].milli_ticks = 1000;
  EXPECT_EQ(append_runtime_cost(path, c),
            int64_t(sizeof(trace::RecordHeader) + sizeof(trace::RuntimeCostHeader) +
                    sizeof(trace::RuntimeCostEntry)));
  const trace::TraceFile t = trace::TraceFile::open(path);
  unlink(path.c_str());
  EXPECT_FALSE(t.has_task_cost());
  EXPECT_EQ(t.runtime_costs().size(), 1u);
}

// A cached task cost stands unless the machine measures one clearly (10%) smaller now, three
// times over: it was then measured while the machine was busy.
TEST(RuntimeCalibration, ACachedTaskCostGivesWayOnlyToAClearlySmallerMedian) {
  auto cost = [](uint64_t pico) {
    trace::TaskCost t{};
    t.pico_per_task = pico;
    t.tasks = 5166;
    t.rounds = 41;
    t.measurements = pico ? 1 : 0;
    return t;
  };
  trace::TaskCost cached = cost(65000);
  cached.measurements = 3;
  auto measures = [&](std::vector<uint64_t> picos, int* calls) {
    return [picos, calls, &cost]() mutable {
      const uint64_t p = picos[static_cast<size_t>(*calls) % picos.size()];
      ++*calls;
      return cost(p);
    };
  };
  int calls = 0;
  // Busy then: 48-50 ns now.
  trace::TaskCost t = launch::task_cost_again(cached, measures({49000, 50000, 48000}, &calls));
  EXPECT_EQ(t.pico_per_task, 49000u);
  EXPECT_EQ(t.measurements, 3u);
  EXPECT_EQ(calls, 3);
  // Within 10%: one measure, and the cache stands.
  calls = 0;
  t = launch::task_cost_again(cached, measures({60000}, &calls));
  EXPECT_EQ(t.pico_per_task, 65000u);
  EXPECT_EQ(calls, 1);
  // One low measure the next two do not confirm: the median (60 ns) is not clearly smaller.
  calls = 0;
  t = launch::task_cost_again(cached, measures({40000, 60000, 66000}, &calls));
  EXPECT_EQ(t.pico_per_task, 65000u);
  // A measure that fails, or no cached cost: nothing changes.
  calls = 0;
  EXPECT_EQ(launch::task_cost_again(cached, measures({40000, 0}, &calls)).pico_per_task, 65000u);
  calls = 0;
  EXPECT_EQ(launch::task_cost_again(cost(0), measures({40000}, &calls)).pico_per_task, 0u);
  EXPECT_EQ(calls, 0);
}

}  // namespace
}  // namespace tasklens::launch
