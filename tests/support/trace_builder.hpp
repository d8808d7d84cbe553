// Synthetic traces for the model builder's tests: a writer of per-thread event streams with
// explicit TSC times (1 tick = 1 ns), and the model invariants every analysis relies on.
// Header-only so that any *_test.cpp can include it.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyze_all.hpp"
#include "cutoff_streaming_mismatch.hpp"
#include "model/builder.hpp"
#include "one_pass_mismatch.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"

namespace tasklens::fixtures {

// A recorder id: (thread + 1) << 40 | counter.
inline uint64_t id(uint32_t thread, uint64_t counter) {
  return (uint64_t(thread) + 1) << 40 | counter;
}

// Writes a trace whose events are given per thread with explicit TSC times (1 tick = 1 ns).
class TraceBuilder {
 public:
  explicit TraceBuilder(uint32_t threads, bool dispatch = true)
      : streams_(threads), runtime_flags_(dispatch ? uint32_t{trace::kRuntimeHasDispatch} : 0u) {}

  // The RuntimeInfo record: flags (trace::RuntimeFlags) and the runtime's version string. By
  // default the flags say whether the runtime has dispatch events and the version is empty.
  void runtime(uint32_t flags, std::string version = {}) {
    runtime_flags_ = flags;
    runtime_version_ = std::move(version);
  }

  // The file's metrics (default: the TSC alone), and the values of the perf counters (every
  // metric but the TSC, in that order) on thread t at `time`: each event carries their deltas.
  using CounterFn = std::function<std::vector<uint64_t>(uint32_t t, uint64_t time)>;
  void metrics(std::vector<trace::Metric> metrics, CounterFn counters) {
    metrics_ = std::move(metrics);
    counters_ = std::move(counters);
  }
  // Thread t was preempted from `out` to `in` (ns = ticks here).
  void preempt(uint32_t t, uint64_t out, uint64_t in) { preemptions_.push_back({t, out, in}); }
  // Thread t was blocked (switched out, not runnable) from `out` to `in`.
  void blocked(uint32_t t, uint64_t out, uint64_t in) { blocked_.push_back({t, out, in}); }
  // Likewise: the part of a slow page fault beyond the thread's typical one (SlowFaults).
  void slow_fault(uint32_t t, uint64_t from, uint64_t to) { slow_faults_.push_back({t, from, to}); }
  // The recorder measured `ticks` per event for the TSC (a ProbeCost record).
  void probe_cost(uint64_t ticks) { probe_ticks_ = ticks; }
  // The runtime's cost per kind of interval, as `tasklens record` measures it (a RuntimeCost
  // record).
  void runtime_cost(std::vector<trace::RuntimeCostEntry> entries) {
    runtime_costs_ = std::move(entries);
  }
  void version_minor(uint16_t minor) { version_minor_ = minor; }
  // The hypervisor's steal over the recording, in the kernel's ticks (a HostSteal record).
  void host_steal(uint64_t steal, uint64_t total) {
    host_steal_ = trace::HostSteal{2, 100, steal, total};
  }
  // The recording's end (the Finish record's end_tsc; 0 if never set).
  void finish_at(uint64_t end_tsc) { finish_end_ = end_tsc; }
  // An OpenAtEnd entry: `thread` was inside oneTBB task `task` when the recording ended.
  void open_at_end(uint32_t thread, uint64_t task) {
    open_at_end_.push_back(trace::OpenRun{thread, 0, task});
  }

  void ev(uint32_t t, uint64_t time, trace::EventKind kind, std::initializer_list<uint64_t> fields,
          std::initializer_list<uint64_t> groups = {}) {
    Stream& s = streams_[t];
    s.bytes.push_back(static_cast<uint8_t>(kind));
    varint(s, time - s.time);
    s.time = time;
    if (counters_) {
      std::vector<uint64_t> v = counters_(t, time);
      s.counters.resize(v.size());
      for (size_t i = 0; i < v.size(); ++i) {
        varint(s, v[i] - s.counters[i]);  // counters only grow
        s.counters[i] = v[i];
      }
    }
    const trace::EventShape shape = trace::kEventShapes[static_cast<int>(kind)];
    int i = 0;
    for (uint64_t f : fields) {
      if (shape.id_mask & (1u << i)) {
        varint(s, trace::zigzag(static_cast<int64_t>(f - s.id)));
        s.id = f;
      } else if (shape.ptr_mask & (1u << i)) {
        varint(s, trace::zigzag(static_cast<int64_t>(f - s.ptr)));
        s.ptr = f;
      } else if (shape.addr_mask & (1u << i)) {
        varint(s, trace::zigzag(static_cast<int64_t>(f - s.addr)));
        s.addr = f;
      } else {
        varint(s, f);
      }
      ++i;
    }
    for (uint64_t g : groups) varint(s, g);
  }

  model::Model build(const model::BuildOptions& options = {}) {
    const std::vector<uint8_t> out = bytes();
    char path[] = "/tmp/tasklens_model_testXXXXXX";
    int fd = mkstemp(path);
    EXPECT_EQ(write(fd, out.data(), out.size()), static_cast<ssize_t>(out.size()));
    close(fd);
    trace::TraceFile file = trace::TraceFile::open(path);
    unlink(path);
    model::Model m = model::build_model(file, options);
    // Every trace the model tests build is also read in one pass (model::build_streaming),
    // where it can be: the profile must be the same.
    if (!options.interval_sink) {
      EXPECT_EQ(streaming_mismatch(file, m, options), "");
      EXPECT_EQ(whatif_streaming_mismatch(file, m, options), "");
      EXPECT_EQ(tasks_streaming_mismatch(file, m, options), "");
      EXPECT_EQ(advise_streaming_mismatch(file, m, options), "");
      EXPECT_EQ(diff_streaming_mismatch(file, m, options), "");
      EXPECT_EQ(sched_streaming_mismatch(file, m, options), "");
      EXPECT_EQ(predict_streaming_mismatch(file, m, options), "");
      EXPECT_EQ(structure_streaming_mismatch(file, m, options), "");
      EXPECT_EQ(timeline_streaming_mismatch(file, m, options), "");
      EXPECT_EQ(cutoff_streaming_mismatch(file, m, options), "");
    }
    return m;
  }

  // The trace file's bytes (uncompressed event blocks).
  std::vector<uint8_t> bytes() const {
    trace::FileHeader h = trace::make_file_header(1, 0, 0, metrics_);
    if (version_minor_) h.version_minor = *version_minor_;
    std::vector<uint8_t> out(reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h + 1));
    std::vector<uint8_t> schema = trace::make_schema_payload();
    trace::append_record(out, trace::RecordType::EventSchema, schema.data(), schema.size());
    trace::append_record(out, trace::RecordType::RuntimeInfo, &runtime_flags_, 4,
                         runtime_version_.data(), runtime_version_.size());
    for (uint32_t t = 0; t < streams_.size(); ++t) {
      trace::EventBlockHeader bh{};
      bh.thread = t;
      bh.raw_size = static_cast<uint32_t>(streams_[t].bytes.size());
      trace::append_record(out, trace::RecordType::EventBlock, &bh, sizeof bh,
                           streams_[t].bytes.data(), streams_[t].bytes.size());
    }
    for (auto [list, type] : {std::pair{&preemptions_, trace::RecordType::Preemptions},
                              std::pair{&blocked_, trace::RecordType::Blocked},
                              std::pair{&slow_faults_, trace::RecordType::SlowFaults}}) {
      for (const Preemption& p : *list) {
        uint32_t head[2] = {p.thread, 1};
        uint64_t interval[2] = {p.out, p.in};
        trace::append_record(out, type, head, sizeof head, interval, sizeof interval);
      }
    }
    if (probe_ticks_) {
      trace::ProbeCost pc{};
      pc.metric_count = static_cast<uint32_t>(metrics_.size());
      for (size_t m = 0; m < metrics_.size(); ++m)
        if (metrics_[m] == trace::Metric::Tsc) pc.milli_per_event[m] = probe_ticks_ * 1000;
      trace::append_record(out, trace::RecordType::ProbeCost, &pc, sizeof pc);
    }
    if (!runtime_costs_.empty()) {
      trace::RuntimeCostHeader h{};
      h.count = static_cast<uint32_t>(runtime_costs_.size());
      trace::append_record(out, trace::RecordType::RuntimeCost, &h, sizeof h, runtime_costs_.data(),
                           runtime_costs_.size() * sizeof(trace::RuntimeCostEntry));
    }
    if (host_steal_)
      trace::append_record(out, trace::RecordType::HostSteal, &*host_steal_, sizeof *host_steal_);
    trace::ClockSync a{0, 0}, b{1000000000, 1000000000};
    trace::append_record(out, trace::RecordType::ClockSync, &a, sizeof a);
    trace::append_record(out, trace::RecordType::ClockSync, &b, sizeof b);
    if (!open_at_end_.empty()) {
      const uint32_t count = static_cast<uint32_t>(open_at_end_.size());
      trace::append_record(out, trace::RecordType::OpenAtEnd, &count, sizeof count,
                           open_at_end_.data(), open_at_end_.size() * sizeof(trace::OpenRun));
    }
    trace::Finish f{};
    f.end_tsc = finish_end_;
    trace::append_record(out, trace::RecordType::Finish, &f, sizeof f);
    return out;
  }

 private:
  struct Stream {
    std::vector<uint8_t> bytes;
    uint64_t time = 0, id = 0, ptr = 0, addr = 0;
    std::vector<uint64_t> counters;
  };
  struct Preemption {
    uint32_t thread;
    uint64_t out, in;
  };
  static void varint(Stream& s, uint64_t v) {
    uint8_t buf[10];
    uint8_t* e = trace::put_varint(buf, v);
    s.bytes.insert(s.bytes.end(), buf, e);
  }
  std::vector<Stream> streams_;
  std::vector<trace::Metric> metrics_{trace::Metric::Tsc};
  CounterFn counters_;
  std::vector<Preemption> preemptions_;
  std::vector<Preemption> blocked_;
  std::vector<Preemption> slow_faults_;
  uint64_t probe_ticks_ = 0;
  std::vector<trace::RuntimeCostEntry> runtime_costs_;
  std::optional<uint16_t> version_minor_;  // the header's minor version, if not this reader's
  std::optional<trace::HostSteal> host_steal_;
  uint64_t finish_end_ = 0;
  std::vector<trace::OpenRun> open_at_end_;
  uint32_t runtime_flags_;
  std::string runtime_version_;
};

// The invariants every analysis relies on; they hold for damaged traces too.
inline void expect_structure(const model::Model& m) {
  ASSERT_FALSE(m.nodes.empty());
  EXPECT_EQ(m.nodes[0].strand_begin, 0u);
  EXPECT_EQ(m.nodes[0].strand_end, m.strands.size());
  for (uint32_t s = 0; s < m.strands.size(); ++s)
    for (uint32_t p : m.preds_of(s)) EXPECT_LT(p, s);
  for (uint32_t v = 1; v < m.nodes.size(); ++v) {
    const model::Node& n = m.nodes[v];
    EXPECT_LT(n.parent, v);
    const model::Node& p = m.nodes[n.parent];
    EXPECT_LE(p.strand_begin, n.strand_begin);
    EXPECT_GE(p.strand_end, n.strand_end);
    EXPECT_LE(v + n.subtree_size, n.parent + p.subtree_size);
  }
  // Every model the builder makes in the tests is also profiled in one pass.
  EXPECT_EQ(stream_mismatch(m), "");
}

// The invariants, and no warnings: the traces are well formed.
inline void expect_invariants(const model::Model& m) {
  expect_structure(m);
  for (const std::string& w : m.warnings) ADD_FAILURE() << "warning: " << w;
}

// The head of a small hand-made trace (trace_test, trace_repack_test): the file header (pid 42,
// TSC 1000 at the start), the schema, the runtime's record ("LLVM test", with dispatch events)
// and a first clock sync at TSC 1000.
inline std::vector<uint8_t> test_trace_head() {
  trace::FileHeader h = trace::make_file_header(42, 1000, 7, trace::Metric::Tsc);
  std::vector<uint8_t> out(reinterpret_cast<uint8_t*>(&h), reinterpret_cast<uint8_t*>(&h + 1));
  std::vector<uint8_t> schema = trace::make_schema_payload();
  trace::append_record(out, trace::RecordType::EventSchema, schema.data(), schema.size());
  uint32_t flags = trace::kRuntimeHasDispatch;
  trace::append_record(out, trace::RecordType::RuntimeInfo, &flags, 4, "LLVM test", 9);
  trace::ClockSync a{1000, 0};
  trace::append_record(out, trace::RecordType::ClockSync, &a, sizeof a);
  return out;
}

}  // namespace tasklens::fixtures
