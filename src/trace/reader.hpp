// Reading a trace file: validates the container, collects metadata, and decodes the per-thread
// event streams. Throws TraceError (one line: the file and what is wrong) on bad input.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trace/format.hpp"

namespace tasklens::trace {

class TraceError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

struct ModuleInfo {
  std::string path;
  uint64_t base = 0, begin = 0, end = 0;
};

struct Event {
  EventKind kind{};
  uint64_t time = 0;    // absolute TSC
  uint64_t metric = 0;  // absolute primary metric counter (== time for the TSC metric)
  // Absolute counters of every metric of the file, in TraceFile::metrics() order (values[0] ==
  // metric; a TSC metric's is the time). Owned by the decoder: valid until its next next().
  const uint64_t* values = nullptr;
  uint64_t f[5] = {};  // fixed fields, ids and ptrs already resolved to absolute values
  // Repeated groups (Dependences): groups[2*i], groups[2*i+1].
  const std::vector<uint64_t>* groups = nullptr;
};

class TraceFile;

// Time a recorded thread spent off the program though its clock ran (the records Preemptions,
// Blocked and SlowFaults), in CLOCK_MONOTONIC ns.
enum class OffCpuKind : uint8_t { Preempted, Blocked, SlowFault };
inline constexpr int kOffCpuKinds = 3;
using Intervals = std::vector<std::vector<std::pair<uint64_t, uint64_t>>>;

// One thread's intervals of one kind, in time order, overlapping ones merged (as open() used to
// hold them whole): the recorder writes them a drain at a time, so a cursor reads one record's
// intervals at a time. A busy machine's recording holds millions (every context switch of a
// program thread), in proportion to its length, not its tasks.
class OffCpuCursor {
 public:
  // The next interval [begin, end); false after the last.
  bool next(uint64_t& begin, uint64_t& end);

 private:
  friend class TraceFile;
  bool next_raw(uint64_t& begin, uint64_t& end);
  const TraceFile* file_ = nullptr;
  int kind_ = 0;
  uint32_t thread_ = 0;
  size_t record_ = 0;            // the next record to read
  std::vector<uint64_t> pairs_;  // the current record's {begin, end} pairs
  size_t at_ = 0;                // the next pair in it
  bool pending_ = false;         // an interval read ahead (merging needs the next one)
  uint64_t pending_begin_ = 0, pending_end_ = 0;
};

// Decodes one thread's event stream: bytes already concatenated and decompressed, or (from
// TraceFile::decoder(thread)) the thread's blocks, decompressed one after the other into a small
// window as decoding reaches them.
class EventDecoder {
 public:
  // One metric; `has_metric`: it is not the TSC, so events carry its delta (version 1 and 2).
  EventDecoder(const std::vector<EventShape>& schema, bool has_metric, const uint8_t* data,
               size_t size, uint64_t start_tsc);
  // The metrics of the file (at most kMaxMetrics): events carry one delta per non-TSC metric.
  EventDecoder(const std::vector<EventShape>& schema, const std::vector<Metric>& metrics,
               const uint8_t* data, size_t size, uint64_t start_tsc);
  // Returns false at the end of the stream. Throws TraceError on a malformed event; a stream cut
  // in the middle of its last event (a killed program) ends cleanly and sets truncated().
  bool next(Event& event);
  bool truncated() const { return truncated_; }
  // What errors name first (the trace's path: TraceFile::decoder sets it).
  void set_context(std::string context) { context_ = std::move(context); }

 private:
  // Most fields are small deltas: one byte, inline; longer ones out of line.
  bool read_varint(uint64_t& v) {
    if (__builtin_expect(p_ != end_ && *p_ < 0x80, 1)) {
      v = *p_++;
      return true;
    }
    return read_long_varint(v);
  }
  bool read_long_varint(uint64_t& v);
  void expand(Event& e);
  void resolve_dependences(const EventShape& shape);
  [[noreturn]] void malformed(const std::string& what) const;
  // Block by block (TraceFile::decoder(thread)): the undecoded bytes move to the window's start
  // and the next blocks follow them, until the window holds kWindowBytes or every block; with
  // `one_more`, at least one more block (an event longer than what the window held).
  friend class TraceFile;
  static constexpr size_t kWindowBytes = 64 * 1024;
  void refill(bool one_more);
  const TraceFile* file_ = nullptr;
  uint32_t thread_ = 0;
  size_t next_block_ = 0;
  bool more_blocks_ = false;
  std::vector<uint8_t> window_;
  const std::vector<EventShape>& schema_;
  const uint8_t* p_;
  const uint8_t* end_;
  uint64_t time_ = 0, last_id_ = 0, last_ptr_ = 0, last_addr_ = 0;
  uint64_t last_dependence_[kDependenceChains] = {};  // DependencesDelta's chains
  // How far the clock (and each counter) may run from its start in this stream: the model sums
  // strands' work over every thread in 64 bits, so a damaged delta that would carry the sum past
  // 2^64 (or wrap the clock) is refused as corrupted, not left to wrap. TraceFile::decoder shares
  // 2^63 among the file's streams: over 100 days of a 3 GHz TSC for 128 threads.
  uint64_t start_time_ = 0, max_advance_ = uint64_t{1} << 63;
  void limit_advance(uint64_t ticks);
  int metric_count_ = 1;
  int counter_count_ = 0;                // metrics with a delta in every event (not the TSC)
  int8_t counter_of_[kMaxMetrics] = {};  // metric -> its counter, -1 for the TSC
  uint64_t counters_[kMaxMetrics] = {};  // absolute counter values
  uint64_t values_[kMaxMetrics] = {};    // Event::values
  std::vector<uint64_t> groups_;
  uint64_t scratch_[32] = {};  // fixed fields (the schema allows at most 32)
  int scratch_filled_ = 0;     // scratch_'s words past it are zero
  bool truncated_ = false;
  // The thread's open oneTBB waits and task runs, innermost last (expand).
  struct TbbWait {
    uint64_t task, group, code;
  };
  struct TbbRun {
    uint64_t task, prior;
  };
  std::vector<TbbWait> tbb_waits_;
  std::vector<TbbRun> tbb_runs_;
  std::string context_;
};

class TraceFile {
 public:
  // Reads and validates the container. Throws TraceError naming `path` on any problem.
  // `events_in_memory` false (for a regular file; a pipe is read whole anyway): the event blocks
  // stay in the file and each is read when it is decoded, so that the reader's memory does not
  // grow with the file (a one-pass reading decodes each block once). A file cut or changed
  // while it is read is then an error when a block cannot be read back.
  static TraceFile open(const std::string& path, bool events_in_memory = true);
  // What the launcher needs after a run, from the record headers alone (no event data read):
  // `whole_bytes` is the length made of the header and whole records (0 if `path` is not a
  // trace), where a trace whose writer was killed inside a write must be cut to stay readable.
  struct Scan {
    uint64_t file_bytes = 0, whole_bytes = 0;
    bool has_finish = false;
    uint64_t tasks_created = 0;  // from the Finish record
    uint64_t events_lost = 0;    // likewise
    uint32_t finish_reason = 0;  // likewise (FinishReason)
    uint32_t streams = 0;
    uint64_t event_bytes = 0;  // the event blocks' raw (uncompressed) sizes, summed
    bool has_stats = false;
    RecorderStats stats{};           // the recorder's losses (write errors, when it first failed)
    Metric primary = Metric::Tsc;    // the file's primary metric
    bool openmp = false;             // an OpenMP runtime reported itself (RuntimeInfo, not oneTBB)
    bool tbb = false;                // oneTBB reported itself (RuntimeInfo)
    bool libgomp = false;            // the program loaded libgomp (gcc's runtime; ModuleMap)
    double host_steal_percent = -1;  // the HostSteal record's share (host_steal_percent), or -1
    uint64_t start_tsc = 0, end_tsc = 0;  // the header's start, the Finish record's end
    ClockSync first_sync{}, last_sync{};  // the first and last ClockSync records (tsc 0: none)
    // The run's length from its start to its end through the clock syncs' TSC rate (as
    // tsc_hz() measures it); 0 when unknown.
    double run_seconds() const;
  };
  static Scan scan(const std::string& path);

  const std::string& path() const { return path_; }
  const FileHeader& header() const { return header_; }
  Metric metric() const { return metrics_[0]; }  // the primary metric
  // Every recorded metric, the primary first (one for versions 1 and 2).
  const std::vector<Metric>& metrics() const { return metrics_; }
  const std::vector<EventShape>& schema() const { return schema_; }
  uint32_t runtime_flags() const { return runtime_flags_; }
  const std::string& runtime_version() const { return runtime_version_; }
  const std::vector<ModuleInfo>& modules() const { return modules_; }
  const std::vector<ClockSync>& clock_syncs() const { return clock_syncs_; }
  const std::vector<ThreadInfo>& threads() const { return threads_; }
  bool has_finish() const { return has_finish_; }
  const Finish& finish() const { return finish_; }
  // Per recorded thread: intervals [out, in) of CLOCK_MONOTONIC ns when another process had
  // preempted it (sorted, overlapping ones merged), built whole on each call: a reader that goes
  // through them in time order uses off_cpu() instead, which holds one record's at a time.
  Intervals preemptions() const { return off_cpu_intervals(OffCpuKind::Preempted); }
  // Likewise, the intervals it was switched out while not runnable (blocked), version 4.2 on.
  Intervals blocked() const { return off_cpu_intervals(OffCpuKind::Blocked); }
  // Likewise, of each page fault far slower than its thread's typical one, the time beyond that
  // typical time (version 4.4 on; the thread stayed on its CPU).
  Intervals slow_faults() const { return off_cpu_intervals(OffCpuKind::SlowFault); }
  Intervals off_cpu_intervals(OffCpuKind kind) const;
  // One past the highest thread index with a record of `kind` (0: the trace has none).
  uint32_t off_cpu_threads(OffCpuKind kind) const {
    return static_cast<uint32_t>(off_cpu_records_[int(kind)].size());
  }
  // The thread's intervals of `kind` in time order, read a record at a time (from the file when
  // the events are left there). The TraceFile must outlive the cursor.
  OffCpuCursor off_cpu(OffCpuKind kind, uint32_t thread) const;
  // The recorder's own account of its stalls and losses (version 4.2 on; zeros before).
  bool has_recorder_stats() const { return has_recorder_stats_; }
  const RecorderStats& recorder_stats() const { return recorder_stats_; }
  // The hypervisor's steal during the recording (version 4.6; absent in older traces and where
  // /proc/stat could not be read).
  // The TaskCost record (version 4.10): absent in older traces and when record could not
  // measure it.
  bool has_task_cost() const { return has_task_cost_; }
  const TaskCost& task_cost() const { return task_cost_; }
  bool has_host_steal() const { return has_host_steal_; }
  const HostSteal& host_steal() const { return host_steal_; }
  // The oneTBB task each recorded thread was inside when the recording ended (the OpenAtEnd
  // record, version 4.9; empty before, and when no thread was inside one).
  const std::vector<OpenRun>& open_at_end() const { return open_at_end_; }
  // The recorder's cost per event, calibrated at start-up (version 4.2 on; zeros before).
  bool has_probe_cost() const { return has_probe_cost_; }
  const ProbeCost& probe_cost() const { return probe_cost_; }
  // The runtime's own cost per kind of interval, measured by `tasklens record` after the run
  // (version 4.5 on; empty before, or when it was not measured).
  const std::vector<RuntimeCostEntry>& runtime_costs() const { return runtime_costs_; }
  const RuntimeCostHeader& runtime_cost_header() const { return runtime_cost_header_; }
  // Names of user regions (RegionBegin/RegionEnd events), indexed by name id, gathered from
  // every RegionNames record of the file; an id no record names has an empty name.
  const std::vector<std::string>& region_names() const { return region_names_; }
  // Source locations of synthetic code addresses (kSyntheticSite), from SiteNames records.
  struct SiteName {
    std::string file;
    unsigned line = 0;
    std::string function;
  };
  const std::unordered_map<uint64_t, SiteName>& site_names() const { return site_names_; }
  bool has_launch_status() const { return has_launch_status_; }
  const LaunchStatus& launch_status() const { return launch_status_; }
  // False when the recorder did not end cleanly (a killed program). A file cut inside a record
  // is not a killed program's trace: open() refuses it.
  bool complete() const { return has_finish_; }
  uint64_t file_size() const { return file_size_; }
  // TSC ticks per second, from the clock syncs (0 if unknown).
  double tsc_hz() const;

  // Number of event streams (recorder thread indexes are 0 .. stream_count()-1).
  uint32_t stream_count() const { return static_cast<uint32_t>(blocks_.size()); }
  // The concatenated, decompressed events of one thread, and its length.
  std::vector<uint8_t> stream(uint32_t thread) const;
  uint64_t stream_bytes(uint32_t thread) const;
  // The event blocks by how they are stored: raw (--compression none, a block that would not
  // shrink, or one left raw when compression after the run failed) or compressed.
  struct BlockCounts {
    uint64_t raw_blocks = 0, raw_bytes = 0, packed_blocks = 0, packed_bytes = 0;
  };
  BlockCounts block_counts() const;
  EventDecoder decoder(const std::vector<uint8_t>& stream) const;
  // A decoder of one thread's events that decompresses its blocks as it reaches them: a window
  // of about 64 KiB instead of the whole stream, and no wait for the whole stream before the
  // first event. The TraceFile must outlive it.
  EventDecoder decoder(uint32_t thread) const;
  // How far one stream's clock may run (EventDecoder::limit_advance): 2^63 shared among the
  // streams, so that the work summed over all of them fits 64 bits.
  uint64_t advance_per_stream() const {
    return (uint64_t{1} << 63) / std::max<uint64_t>(1, stream_count());
  }

 private:
  struct Block {
    uint32_t chunk_seq, offset, raw_size;
    uint8_t compression;
    size_t data_offset, data_size;  // in the file (and in data_, when it holds the file)
  };
  struct FileHandle {  // the file, open, when the event blocks are read from it
    int fd = -1;
    ~FileHandle();
  };
  [[noreturn]] void fail(const std::string& what) const;
  friend class EventDecoder;
  // Decompresses block `index` of `thread` (Block::raw_size bytes) to `out`.
  void decompress(const Block& b, uint8_t* out) const;
  // The magic and the major version, from the first `size` bytes of the file: what open()
  // checks before reading the rest, and parse() again.
  void check_identity(const uint8_t* data, size_t size) const;
  void parse();
  void parse_region_names(const uint8_t* p, size_t n, size_t pos);
  void parse_site_names(const uint8_t* p, size_t n, size_t pos);

  std::string path_;
  std::vector<uint8_t> data_;  // the whole file, or (events left in the file) nothing
  std::shared_ptr<FileHandle> file_;
  uint64_t file_size_ = 0;
  FileHeader header_{};
  std::vector<Metric> metrics_{Metric::Tsc};
  std::vector<EventShape> schema_;
  uint32_t runtime_flags_ = 0;
  std::string runtime_version_;
  std::vector<ModuleInfo> modules_;
  std::vector<ClockSync> clock_syncs_;
  std::vector<ThreadInfo> threads_;
  std::vector<std::vector<Block>> blocks_;  // per thread
  // The off-CPU records, per kind and thread, in file order. Where the intervals of one thread
  // and kind are out of time order across or within its records (a damaged trace: the recorder
  // writes them in order), that kind's are held whole instead, sorted and merged at open.
  struct OffCpuRecord {
    uint64_t data_offset;  // of the first pair (or the packed bytes), in the file (and in data_)
    uint32_t count;
    uint32_t packed_bytes = 0;  // an OffCpuPacked record's compressed bytes; 0: 16-byte pairs
    uint32_t raw_size = 0;      // the packed record's header's
    uint8_t in_order = 1;
    uint64_t first_begin = 0, last_begin = 0;
  };
  std::vector<std::vector<OffCpuRecord>> off_cpu_records_[kOffCpuKinds];
  Intervals off_cpu_held_[kOffCpuKinds];
  bool off_cpu_is_held_[kOffCpuKinds] = {};
  std::vector<std::array<uint64_t, kOffCpuKinds>> off_cpu_last_;  // parse(): per thread, kind
  friend class OffCpuCursor;
  // Reads record `r`'s pairs into `pairs` (2 x count words).
  void read_off_cpu(const OffCpuRecord& r, std::vector<uint64_t>& pairs) const;
  RecorderStats recorder_stats_{};
  bool has_recorder_stats_ = false;
  TaskCost task_cost_{};
  bool has_task_cost_ = false;
  HostSteal host_steal_{};
  bool has_host_steal_ = false;
  std::vector<OpenRun> open_at_end_;
  ProbeCost probe_cost_{};
  bool has_probe_cost_ = false;
  std::vector<RuntimeCostEntry> runtime_costs_;
  RuntimeCostHeader runtime_cost_header_{};
  std::vector<std::string> region_names_;
  std::vector<bool> region_named_;  // ids some record named (a name may be empty)
  std::unordered_map<uint64_t, SiteName> site_names_;
  Finish finish_{};
  bool has_finish_ = false;
  LaunchStatus launch_status_{};
  bool has_launch_status_ = false;
};

// Appends one record (header + payload parts) to `out`: used by the recorder and the launcher.
void append_record(std::vector<uint8_t>& out, RecordType type, const void* payload, size_t size,
                   const void* extra = nullptr, size_t extra_size = 0);
FileHeader make_file_header(uint64_t pid, uint64_t start_tsc, uint64_t realtime_ns, Metric metric);
// With several metrics (1 to kMaxMetrics; the first is the primary one).
FileHeader make_file_header(uint64_t pid, uint64_t start_tsc, uint64_t realtime_ns,
                            const std::vector<Metric>& metrics);
std::vector<uint8_t> make_schema_payload();

}  // namespace tasklens::trace
