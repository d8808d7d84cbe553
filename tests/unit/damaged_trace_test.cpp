// Damaged traces through the whole reading side: the reader, the model builder and every analysis
// on a model built from random mutations of well-formed traces (bytes flipped, cut short, slices
// repeated or removed, LZ4 blocks damaged). The contract: a trace the
// reader or the builder cannot make sense of is a trace::TraceError or model::ModelError (one
// line for the user, exit 4); anything else it produces a model that keeps the invariants every
// analysis relies on. No other exception, no crash, no hang and, under the sanitizer build of
// the suite, no memory error or leak.
//
// The mutations are drawn from a fixed seed, so a failure names the case that reproduces it.
#include <gtest/gtest.h>
#include <lz4.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <nlohmann/json.hpp>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "analysis/predict.hpp"
#include "analysis/profile.hpp"
#include "analysis/sched.hpp"
#include "analysis/tasks.hpp"
#include "analysis/whatif.hpp"
#include "analyze_all.hpp"
#include "model/builder.hpp"
#include "report/export_dump.hpp"
#include "report/export_perfetto.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"
#include "trace_builder.hpp"

namespace tasklens {
namespace {

using fixtures::id;
using fixtures::TraceBuilder;
using trace::EventKind;

constexpr uint64_t kInitial = 1, kImplicit = 2, kExplicit = 4;
constexpr uint64_t kSwitch = 7, kComplete = 1;
constexpr uint64_t kBarrier = 2, kTaskwait = 5, kTaskgroup = 6;
constexpr uint64_t kLoop = 1, kChunk = 3;

// The records the recorder adds beside the events (symbols, names, threads, the launcher's
// status), so that their parsers are damaged too.
void append_side_records(std::vector<uint8_t>& out) {
  std::vector<uint8_t> p;
  auto u32 = [&](uint32_t v) { p.insert(p.end(), (uint8_t*)&v, (uint8_t*)&v + 4); };
  auto u64 = [&](uint64_t v) { p.insert(p.end(), (uint8_t*)&v, (uint8_t*)&v + 8); };
  auto str = [&](const std::string& s) { p.insert(p.end(), s.begin(), s.end()); };
  for (uint32_t t = 0; t < 2; ++t) {
    trace::ThreadInfo ti{t, t ? 2u : 1u, 1000 + t};
    trace::append_record(out, trace::RecordType::ThreadInfo, &ti, sizeof ti);
  }
  u32(2);
  const std::string paths[2] = {"/usr/bin/prog", "/usr/lib/libomp.so.5"};
  for (int i = 0; i < 2; ++i) {
    trace::ModuleEntry e{0x1000u * (i + 1), 0x1000, 0x9000, uint32_t(paths[i].size())};
    p.insert(p.end(), (uint8_t*)&e, (uint8_t*)(&e + 1));
    str(paths[i]);
  }
  trace::append_record(out, trace::RecordType::ModuleMap, p.data(), p.size());
  p.clear();
  u32(3);
  for (uint32_t i = 0; i < 3; ++i) {
    const std::string name = "solve" + std::to_string(i);
    u32(i);
    u32(uint32_t(name.size()));
    str(name);
  }
  trace::append_record(out, trace::RecordType::RegionNames, p.data(), p.size());
  p.clear();
  u32(1);
  u64(trace::kSyntheticSite | 0x5000);
  u32(42);
  u32(6);
  u32(4);
  str("fib.cc");
  str("main");
  trace::append_record(out, trace::RecordType::SiteNames, p.data(), p.size());
  trace::LaunchStatus ls{0, 0, 1000000};
  trace::append_record(out, trace::RecordType::LaunchStatus, &ls, sizeof ls);
}

// Two threads: the initial task, a parallel region with tasks, a taskwait that does not wait
// for a grandchild, a taskgroup, a dependence, a dynamic loop, a critical section, user regions
// and an explicit barrier; thread 1 steals.
std::vector<uint8_t> openmp_trace() {
  TraceBuilder tb(2);
  uint64_t I = id(0, 2), P = id(0, 3), A = id(0, 4), B = id(1, 1);
  uint64_t C = id(0, 5), G = id(0, 6), X = id(0, 7), Y = id(0, 8), Z = id(0, 9);
  tb.ev(0, 0, EventKind::ImplicitBegin, {id(0, 1), I, 1, 1, kInitial});
  tb.ev(0, 10, EventKind::ParallelBegin, {I, P, 2, 0, 0x1000});
  tb.ev(0, 10, EventKind::ImplicitBegin, {P, A, 2, 0, kImplicit});
  tb.ev(1, 10, EventKind::ImplicitBegin, {P, B, 2, 1, kImplicit});
  tb.ev(0, 20, EventKind::TaskCreate, {A, C, kExplicit, 0x2000});
  tb.ev(0, 30, EventKind::SyncBegin, {kTaskwait, A, 0x2100});
  tb.ev(0, 30, EventKind::TaskSchedule, {A, kSwitch, C});
  tb.ev(0, 130, EventKind::TaskCreate, {C, G, kExplicit, 0x2200});
  tb.ev(0, 140, EventKind::TaskSchedule, {C, kComplete, A});
  tb.ev(0, 140, EventKind::SyncEnd, {kTaskwait, A, 0x2100});
  tb.ev(1, 15, EventKind::RegionBegin, {0});
  tb.ev(1, 25, EventKind::RegionBegin, {1});
  tb.ev(1, 35, EventKind::RegionEnd, {1});
  tb.ev(1, 45, EventKind::RegionEnd, {0});
  tb.ev(1, 150, EventKind::TaskSchedule, {B, kSwitch, G});
  tb.ev(1, 200, EventKind::MutexWaitBegin, {3});
  tb.ev(1, 300, EventKind::MutexWaitEnd, {3});
  tb.ev(1, 550, EventKind::TaskSchedule, {G, kComplete, B});
  tb.ev(0, 560, EventKind::SyncBegin, {kTaskgroup, A, 0x2300});
  tb.ev(0, 570, EventKind::TaskCreate, {A, X, kExplicit, 0x2400});
  tb.ev(0, 570, EventKind::Dependences, {X, 1}, {0x7000, 3});
  tb.ev(0, 580, EventKind::TaskCreate, {A, Y, kExplicit, 0x2500});
  tb.ev(0, 580, EventKind::Dependences, {Y, 1}, {0x7000, 1});
  tb.ev(0, 590, EventKind::SyncWaitBegin, {kTaskgroup, A});
  tb.ev(0, 590, EventKind::TaskSchedule, {A, kSwitch, X});
  tb.ev(0, 690, EventKind::TaskSchedule, {X, kComplete, A});
  tb.ev(1, 700, EventKind::TaskSchedule, {B, kSwitch, Y});
  tb.ev(1, 800, EventKind::TaskSchedule, {Y, kComplete, B});
  tb.ev(0, 810, EventKind::SyncWaitEnd, {kTaskgroup, A});
  tb.ev(0, 810, EventKind::SyncEnd, {kTaskgroup, A, 0x2600});
  tb.ev(0, 820, EventKind::WorkBegin, {kLoop, A, 6, 0x3000});
  tb.ev(1, 820, EventKind::WorkBegin, {kLoop, B, 6, 0x3000});
  for (uint64_t i = 0; i < 4; ++i) tb.ev(0, 820 + 50 * i, EventKind::Dispatch, {kChunk, A, i, 1});
  for (uint64_t i = 0; i < 2; ++i)
    tb.ev(1, 820 + 50 * i, EventKind::Dispatch, {kChunk, B, 4 + i, 1});
  tb.ev(0, 1020, EventKind::WorkEnd, {kLoop, A, 0x3001});
  tb.ev(1, 920, EventKind::WorkEnd, {kLoop, B, 0x3001});
  tb.ev(0, 1020, EventKind::SyncBegin, {3, A, 0x4000});
  tb.ev(1, 920, EventKind::SyncBegin, {3, B, 0x4000});
  tb.ev(0, 1030, EventKind::SyncEnd, {3, A, 0x4000});
  tb.ev(1, 1030, EventKind::SyncEnd, {3, B, 0x4000});
  tb.ev(1, 1040, EventKind::TaskCreate, {B, Z, kExplicit, 0x2700});
  tb.ev(0, 1050, EventKind::TaskSchedule, {A, kSwitch, Z});
  tb.ev(0, 1150, EventKind::TaskSchedule, {Z, kComplete, A});
  tb.ev(1, 1060, EventKind::SyncBegin, {kBarrier, B, 0});
  tb.ev(0, 1160, EventKind::SyncBegin, {kBarrier, A, 0x1000});
  tb.ev(0, 1170, EventKind::SyncEnd, {kBarrier, A, 0x1000});
  tb.ev(0, 1170, EventKind::ImplicitEnd, {A, 0, kImplicit});
  tb.ev(0, 1170, EventKind::ParallelEnd, {P, I, 0, 0x1000});
  tb.ev(1, 1171, EventKind::SyncEnd, {kBarrier, B, 0});
  tb.ev(1, 1171, EventKind::ImplicitEnd, {B, 1, kImplicit});
  tb.preempt(1, 400, 450);
  std::vector<uint8_t> out = tb.bytes();
  append_side_records(out);
  return out;
}

// fib(n) with a task per call on two threads: thread 1 steals the first task of every call at
// depth 1 (a realistic, longer event stream).
std::vector<uint8_t> fib_trace(int n) {
  TraceBuilder tb(2);
  uint64_t I = id(0, 2), P = id(0, 3), A = id(0, 4), B = id(1, 1);
  uint64_t next[2] = {5, 2}, now[2] = {20, 20};
  tb.ev(0, 0, EventKind::ImplicitBegin, {id(0, 1), I, 1, 1, kInitial});
  tb.ev(0, 10, EventKind::ParallelBegin, {I, P, 2, 0, 0x1000});
  tb.ev(0, 10, EventKind::ImplicitBegin, {P, A, 2, 0, kImplicit});
  tb.ev(1, 10, EventKind::ImplicitBegin, {P, B, 2, 1, kImplicit});
  std::function<void(uint32_t, uint64_t, int, int)> call = [&](uint32_t t, uint64_t self, int k,
                                                               int depth) {
    now[t] += 7;
    if (k < 2) return;
    uint64_t kids[2];
    for (int c = 0; c < 2; ++c) {
      kids[c] = id(t, next[t]++);
      now[t] += 3;
      tb.ev(t, now[t], EventKind::TaskCreate, {self, kids[c], kExplicit, c ? 0x2100u : 0x2000u});
    }
    now[t] += 2;
    tb.ev(t, now[t], EventKind::SyncBegin, {kTaskwait, self, 0x2200});
    for (int c = 0; c < 2; ++c) {
      uint32_t runner = (depth == 1 && c == 0) ? 1 - t : t;
      uint64_t back = runner == t ? self : (runner == 1 ? B : A);
      now[runner] = std::max(now[runner], now[t]) + 1;
      tb.ev(runner, now[runner], EventKind::TaskSchedule, {back, kSwitch, kids[c]});
      call(runner, kids[c], k - 1 - c, depth + 1);
      now[runner] += 1;
      tb.ev(runner, now[runner], EventKind::TaskSchedule, {kids[c], kComplete, back});
    }
    now[t] = std::max(now[0], now[1]) + 1;
    tb.ev(t, now[t], EventKind::SyncEnd, {kTaskwait, self, 0x2200});
  };
  call(0, A, n, 0);
  uint64_t end = std::max(now[0], now[1]) + 10;
  tb.ev(1, end - 5, EventKind::SyncBegin, {kBarrier, B, 0});
  tb.ev(0, end, EventKind::SyncBegin, {kBarrier, A, 0x1000});
  tb.ev(0, end + 1, EventKind::SyncEnd, {kBarrier, A, 0x1000});
  tb.ev(0, end + 1, EventKind::ImplicitEnd, {A, 0, kImplicit});
  tb.ev(0, end + 1, EventKind::ParallelEnd, {P, I, 0, 0x1000});
  tb.ev(1, end + 2, EventKind::SyncEnd, {kBarrier, B, 0});
  tb.ev(1, end + 2, EventKind::ImplicitEnd, {B, 1, kImplicit});
  return tb.bytes();
}

// oneTBB: a parallel_for whose chunks spawn a nested parallel_for, on four threads.
std::vector<uint8_t> tbb_trace() {
  constexpr uint64_t kTask = 1, kFor = 2, kRoot = 0x80;
  TraceBuilder tb(4, false);
  tb.runtime(trace::kRuntimeTbb, "oneTBB 2021.11.0 (interface 12110)");
  uint64_t R = id(0, 1);
  tb.ev(0, 0, EventKind::ThreadBegin, {1});
  tb.ev(0, 0, EventKind::ImplicitBegin, {0, R, 1, 0, 1});
  tb.ev(0, 0, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::MainStart)});
  for (uint32_t t = 1; t < 4; ++t) tb.ev(t, 0, EventKind::ThreadBegin, {2});
  auto spawn = [&](uint32_t t, uint64_t time, uint64_t parent, uint64_t task, uint64_t group,
                   uint64_t kind, uint64_t code) {
    tb.ev(t, time, EventKind::TbbSpawn, {parent, task, group, kind, code});
  };
  auto sched = [&](uint32_t t, uint64_t time, uint64_t a, uint64_t status, uint64_t b) {
    tb.ev(t, time, EventKind::TaskSchedule, {a, status, b});
  };
  uint64_t T0 = id(0, 2), T1 = id(0, 3), T2 = id(0, 4), N0 = id(1, 1), N1 = id(1, 2);
  uint64_t T3 = id(0, 5), C1 = 0x7f0000001000, C2 = 0x7f0000002000, C3 = 0x7f0000003000;
  spawn(0, 10, R, T0, C1, kFor | kRoot, trace::kSyntheticSite | 0x5000);
  tb.ev(0, 10, EventKind::TbbWaitBegin, {R, C1, 0x5000});
  sched(0, 12, R, kSwitch, T0);
  spawn(0, 22, T0, T1, C1, kFor, 0x5100);
  spawn(0, 32, T0, T2, C1, kFor, 0x5100);
  tb.ev(0, 40, EventKind::ChunkBegin, {T0});
  tb.ev(0, 200, EventKind::ChunkEnd, {T0});
  sched(0, 232, T0, kComplete, R);
  sched(1, 25, 0, kSwitch, T1);
  spawn(1, 75, T1, N0, C2, kFor | kRoot, 0x6000);
  tb.ev(1, 75, EventKind::TbbWaitBegin, {T1, C2, 0x6000});
  sched(1, 76, T1, kSwitch, N0);
  spawn(1, 86, N0, N1, C2, kFor, 0x6100);
  sched(1, 186, N0, kComplete, T1);
  sched(3, 90, 0, kSwitch, N1);
  sched(3, 240, N1, kComplete, 0);
  tb.ev(1, 245, EventKind::TbbWaitEnd, {T1, C2, 0x6000});
  sched(1, 295, T1, kComplete, 0);
  sched(2, 35, 0, kSwitch, T2);
  sched(2, 235, T2, kComplete, 0);
  tb.ev(0, 300, EventKind::TbbWaitEnd, {R, C1, 0x5000});
  spawn(0, 310, R, T3, C3, kTask, 0x5200);
  tb.ev(0, 320, EventKind::TbbWaitBegin, {R, C3, 0x5300});
  sched(2, 330, 0, kSwitch, T3);
  sched(2, 430, T3, kComplete, 0);
  tb.ev(0, 440, EventKind::TbbWaitEnd, {R, C3, 0x5300});
  tb.ev(0, 500, EventKind::Mark, {static_cast<uint64_t>(trace::MarkKind::ProgramEnd)});
  std::vector<uint8_t> out = tb.bytes();
  append_side_records(out);
  return out;
}

// A thread the program starts itself runs a parallel region with a task; the main thread joins
// it.
std::vector<uint8_t> user_thread_trace() {
  TraceBuilder tb(2);
  const uint64_t I0 = id(0, 1), T = id(0, 2), I1 = id(1, 1), P = id(1, 2), A1 = id(1, 3);
  const uint64_t C = id(1, 4);
  tb.ev(0, 0, EventKind::ImplicitBegin, {0, I0, 1, 1, kInitial});
  tb.ev(0, 100, EventKind::UserThreadCreate, {T, 0x5000});
  tb.ev(1, 110, EventKind::UserThreadStart, {T});
  tb.ev(1, 115, EventKind::ThreadBegin, {1});
  tb.ev(1, 120, EventKind::ImplicitBegin, {0, I1, 1, 1, kInitial});
  tb.ev(1, 150, EventKind::ParallelBegin, {I1, P, 1, 0, 0x1000});
  tb.ev(1, 150, EventKind::ImplicitBegin, {P, A1, 1, 0, kImplicit});
  tb.ev(1, 200, EventKind::TaskCreate, {A1, C, kExplicit, 0x2000});
  tb.ev(1, 210, EventKind::TaskSchedule, {A1, kSwitch, C});
  tb.ev(1, 300, EventKind::TaskSchedule, {C, kComplete, A1});
  tb.ev(1, 650, EventKind::SyncBegin, {kBarrier, A1, 0x1000});
  tb.ev(1, 650, EventKind::SyncEnd, {kBarrier, A1, 0x1000});
  tb.ev(1, 650, EventKind::ImplicitEnd, {A1, 0, kImplicit});
  tb.ev(1, 650, EventKind::ParallelEnd, {P, I1, 0, 0x1000});
  tb.ev(1, 700, EventKind::UserThreadEnd, {T});
  tb.ev(0, 300, EventKind::UserThreadJoinBegin, {T});
  tb.ev(0, 710, EventKind::UserThreadJoinEnd, {T});
  tb.ev(0, 760, EventKind::ImplicitEnd, {I0, 1, kInitial});
  return tb.bytes();
}

// The same file with every event block LZ4-compressed, as the recorder writes them.
std::vector<uint8_t> compressed(const std::vector<uint8_t>& in) {
  std::vector<uint8_t> out(in.begin(), in.begin() + sizeof(trace::FileHeader));
  for (size_t pos = sizeof(trace::FileHeader); pos + sizeof(trace::RecordHeader) <= in.size();) {
    trace::RecordHeader rh;
    std::memcpy(&rh, &in[pos], sizeof rh);
    const uint8_t* payload = &in[pos + sizeof rh];
    const size_t size = rh.size - sizeof rh;
    if (static_cast<trace::RecordType>(rh.type) == trace::RecordType::EventBlock) {
      trace::EventBlockHeader bh;
      std::memcpy(&bh, payload, sizeof bh);
      const char* raw = reinterpret_cast<const char*>(payload + sizeof bh);
      const int raw_size = static_cast<int>(size - sizeof bh);
      std::vector<char> packed(LZ4_compressBound(raw_size));
      const int n = LZ4_compress_default(raw, packed.data(), raw_size, int(packed.size()));
      bh.compression = static_cast<uint8_t>(trace::Compression::Lz4);
      trace::append_record(out, trace::RecordType::EventBlock, &bh, sizeof bh, packed.data(),
                           static_cast<size_t>(n));
    } else {
      trace::append_record(out, static_cast<trace::RecordType>(rh.type), payload, size);
    }
    pos += rh.size;
  }
  return out;
}

// Where the events of uncompressed blocks are: [begin, end) in the file.
std::vector<std::pair<size_t, size_t>> event_bytes(const std::vector<uint8_t>& in) {
  std::vector<std::pair<size_t, size_t>> out;
  for (size_t pos = sizeof(trace::FileHeader); pos + sizeof(trace::RecordHeader) <= in.size();) {
    trace::RecordHeader rh;
    std::memcpy(&rh, &in[pos], sizeof rh);
    const size_t data = pos + sizeof rh + sizeof(trace::EventBlockHeader);
    if (static_cast<trace::RecordType>(rh.type) == trace::RecordType::EventBlock &&
        pos + rh.size > data) {
      trace::EventBlockHeader bh;
      std::memcpy(&bh, &in[pos + sizeof rh], sizeof bh);
      if (bh.compression == static_cast<uint8_t>(trace::Compression::None))
        out.emplace_back(data, pos + rh.size);
    }
    pos += rh.size;
  }
  return out;
}

// One random damage: a few bytes changed (anywhere, or among the events so that the framing
// holds and the damage reaches the builder), the file cut short, a slice repeated or removed.
std::vector<uint8_t> damage(std::vector<uint8_t> bytes, std::mt19937_64& rng, std::string& what) {
  auto pick = [&](size_t n) { return static_cast<size_t>(rng() % n); };
  const std::vector<std::pair<size_t, size_t>> events = event_bytes(bytes);
  switch (pick(6)) {
    case 0:
    case 1:
    case 2: {  // the fuzzing that found the builder's bugs: 1 to 8 bytes
      const size_t k = 1 + pick(8);
      const bool in_events = !events.empty() && pick(3) != 0;
      what = std::to_string(k) + (in_events ? " event bytes changed" : " bytes changed");
      for (size_t i = 0; i < k; ++i) {
        size_t at = pick(bytes.size());
        if (in_events) {
          const auto [b, e] = events[pick(events.size())];
          at = b + pick(e - b);
        }
        const uint8_t v = pick(4) == 0 ? uint8_t(pick(3) == 0 ? 0
                                                 : pick(2)    ? 0xff
                                                              : 0x80)
                                       : static_cast<uint8_t>(rng());
        bytes[at] = v;
      }
      break;
    }
    case 3: {
      const size_t n = pick(bytes.size());
      what = "cut at " + std::to_string(n);
      bytes.resize(n);
      break;
    }
    case 4: {
      const size_t at = pick(bytes.size()), len = 1 + pick(64);
      what = "slice at " + std::to_string(at) + " repeated";
      std::vector<uint8_t> slice(bytes.begin() + at,
                                 bytes.begin() + std::min(bytes.size(), at + len));
      bytes.insert(bytes.begin() + at, slice.begin(), slice.end());
      break;
    }
    default: {
      const size_t at = pick(bytes.size()), len = std::min(bytes.size() - at, 1 + pick(32));
      what = std::to_string(len) + " bytes removed at " + std::to_string(at);
      bytes.erase(bytes.begin() + at, bytes.begin() + at + len);
      break;
    }
  }
  return bytes;
}

// Everything `tasklens` does after reading the model, on a model of a damaged trace.
void analyze(const model::Model& m) { EXPECT_EQ(fixtures::analyze_all(m), ""); }

class TempFile {
 public:
  TempFile() {
    char name[] = "/tmp/tasklens_damaged_XXXXXX";
    fd_ = mkstemp(name);
    path_ = name;
  }
  ~TempFile() {
    close(fd_);
    unlink(path_.c_str());
  }
  void write(const std::vector<uint8_t>& bytes) {
    ASSERT_EQ(ftruncate(fd_, 0), 0);
    ASSERT_EQ(pwrite(fd_, bytes.data(), bytes.size(), 0), static_cast<ssize_t>(bytes.size()));
  }
  const std::string& path() const { return path_; }

 private:
  int fd_;
  std::string path_;
};

// Reads, models and analyzes `bytes`; true when it was refused with a trace or model error.
bool read_through(const TempFile& file, const std::vector<uint8_t>& bytes, std::string& failure) {
  try {
    trace::TraceFile trace = trace::TraceFile::open(file.path());
    model::Model m = model::build_model(trace);
    fixtures::expect_structure(m);
    analyze(m);
    if (::testing::Test::HasFailure()) failure = "a model without the invariants";
    return false;
  } catch (const trace::TraceError& e) {
    const std::string what = e.what();
    if (what.find('\n') != std::string::npos) failure = "a message of several lines: " + what;
    if (what.rfind(file.path(), 0) != 0) failure = "a message without the file's name: " + what;
    return true;
  } catch (const model::ModelError&) {
    return true;
  } catch (const std::exception& e) {
    failure = std::string("an unexpected exception: ") + e.what();
  }
  (void)bytes;
  return false;
}

struct Corpus {
  std::string name;
  std::vector<uint8_t> bytes;
};

std::vector<Corpus> builtin_corpus() {
  std::vector<Corpus> c = {{"openmp", openmp_trace()},
                           {"fib", fib_trace(9)},
                           {"tbb", tbb_trace()},
                           {"threads", user_thread_trace()}};
  const size_t plain = c.size();
  for (size_t i = 0; i < plain; ++i) c.push_back({c[i].name + "+lz4", compressed(c[i].bytes)});
  return c;
}

std::vector<Corpus> corpus() {
  std::vector<Corpus> c = builtin_corpus();
  // Recorded traces to damage as well (`record --compression none` lets the damage reach the
  // events), for fuzzing by hand: TASKLENS_FUZZ_TRACES=a.tlens:b.tlens.
  if (const char* list = std::getenv("TASKLENS_FUZZ_TRACES")) {
    std::string paths = list;
    for (size_t at = 0; at < paths.size();) {
      size_t end = paths.find(':', at);
      if (end == std::string::npos) end = paths.size();
      const std::string path = paths.substr(at, end - at);
      at = end + 1;
      if (path.empty()) continue;
      std::ifstream in(path, std::ios::binary);
      std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
      if (bytes.empty()) ADD_FAILURE() << "TASKLENS_FUZZ_TRACES: cannot read " << path;
      c.push_back({path, std::move(bytes)});
    }
  }
  return c;
}

TEST(DamagedTrace, TheUndamagedCorpusReadsCleanly) {
  TempFile file;
  for (const Corpus& c : builtin_corpus()) {
    file.write(c.bytes);
    trace::TraceFile trace = trace::TraceFile::open(file.path());
    model::Model m = model::build_model(trace);
    fixtures::expect_invariants(m);
    EXPECT_GT(m.task_count, 0u) << c.name;
    analyze(m);
    if (c.name == "openmp+lz4" || c.name == "fib+lz4") {
      EXPECT_EQ(trace.stream_count(), 2u) << c.name;
    }
  }
}

// Runs `open_it` in a child process under a 512 MiB address-space limit and a 10 s alarm:
// "" when it threw a TraceError containing every one of `expect`, else what happened. (The
// reader used to read a device to its end and a large file whole, and to wait on a FIFO.)
std::string refused_in_a_child(const std::string& path, const std::vector<std::string>& expect) {
  int fds[2];
  if (pipe(fds) != 0) return "pipe failed";
  const pid_t pid = fork();
  if (pid == 0) {
    close(fds[0]);
    rlimit as{512ull << 20, 512ull << 20};
    setrlimit(RLIMIT_AS, &as);
    alarm(10);
    std::string what;
    try {
      trace::TraceFile::open(path);
      what = "opened";
    } catch (const trace::TraceError& e) {
      what = e.what();
      bool all = true;
      for (const std::string& x : expect) all = all && what.find(x) != std::string::npos;
      if (all && what.find('\n') == std::string::npos) what.clear();
    } catch (const std::exception& e) {
      what = std::string("not a TraceError: ") + e.what();
    }
    (void)!::write(fds[1], what.data(), what.size());
    _exit(what.empty() ? 0 : 1);
  }
  close(fds[1]);
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (WIFSIGNALED(status))
    return "killed by signal " + std::to_string(WTERMSIG(status)) + " (14: hung)";
  return WEXITSTATUS(status) == 0 ? "" : out;
}

// The header is checked from the first bytes: a large file that is not a trace is refused
// without being read (the child's 512 MiB would not hold the 1 GiB the reader allocated for it).
TEST(DamagedTrace, ALargeFileThatIsNotATraceIsRefusedByItsHeaderAlone) {
  TempFile file;
  file.write(std::vector<uint8_t>(100, 0));
  ASSERT_EQ(truncate(file.path().c_str(), 1ll << 30), 0);  // sparse: no disk used
  EXPECT_EQ(refused_in_a_child(file.path(), {file.path(), "bad magic"}), "");

  // Likewise a future major version: refused from its header.
  std::vector<uint8_t> header(trace::kFileHeaderV2Size, 0);
  std::memcpy(header.data(), trace::kMagic, sizeof trace::kMagic);
  const uint16_t future = trace::kVersionMajor + 1;
  std::memcpy(header.data() + sizeof trace::kMagic, &future, sizeof future);
  file.write(header);
  ASSERT_EQ(truncate(file.path().c_str(), 1ll << 30), 0);
  EXPECT_EQ(refused_in_a_child(file.path(), {"version " + std::to_string(future)}), "");
}

// Devices and pipes have no end to read to: refused at once, with what to do.
TEST(DamagedTrace, DevicesAndPipesAreRefusedAtOnce) {
  EXPECT_EQ(refused_in_a_child("/dev/zero", {"/dev/zero", "character device", "copy it"}), "");
  char dir[] = "/tmp/tasklens_fifo_XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string fifo = std::string(dir) + "/fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_EQ(refused_in_a_child(fifo, {fifo, "FIFO", "copy it"}), "");  // no writer: not waited
  unlink(fifo.c_str());
  rmdir(dir);
}

uint64_t env_or(const char* name, uint64_t fallback) {
  const char* v = std::getenv(name);
  return v && *v ? std::strtoull(v, nullptr, 10) : fallback;
}

// 1000 damaged copies of each of the eight traces. To fuzz longer or elsewhere:
// TASKLENS_FUZZ_CASES=100000 TASKLENS_FUZZ_SEED=7 build-asan/tests/damaged_trace_test
TEST(DamagedTrace, IsRefusedWithOneLineOrModelledSoundly) {
  TempFile file;
  const uint64_t cases = env_or("TASKLENS_FUZZ_CASES", 1000);
  std::mt19937_64 rng(env_or("TASKLENS_FUZZ_SEED", 20261122));
  size_t refused = 0, modelled = 0;
  for (const Corpus& c : corpus()) {
    for (uint64_t i = 0; i < cases; ++i) {
      std::string what;
      const std::vector<uint8_t> bytes = damage(c.bytes, rng, what);
      file.write(bytes);
      std::string failure;
      (read_through(file, bytes, failure) ? refused : modelled)++;
      if (!failure.empty() || HasFailure()) {
        ADD_FAILURE() << c.name << " case " << i << " (" << what << "): " << failure;
        return;  // the first failure is the one to reproduce
      }
    }
  }
  // Both outcomes are exercised: some damage reaches past the reader's checks into the builder
  // and the analyses (most changes to a varint stream make it undecodable).
  EXPECT_GT(refused, cases * 3);
  EXPECT_GT(modelled, cases * 3 / 10);
  std::printf("damaged traces: %zu refused, %zu modelled\n", refused, modelled);
}

}  // namespace
}  // namespace tasklens
