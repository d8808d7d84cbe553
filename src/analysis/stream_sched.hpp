// `sched` on a recording read in one pass (docs/design-scale.md): compute_schedule's figures
// without the DAG in memory. The sweep (sched.hpp's ScheduleSweep) needs every strand's start,
// end and ready time in time order, which a pass meets in a topological order instead; so the
// pass writes each timed strand's events into sorted runs on disk (SchedEventSort) and the ready
// path's links into a log (BlockLog), and finish() walks the path back, then merges the runs
// into the sweep. The memory holds a run being filled and a block per run; the disk a few bytes
// per event and per path link (docs/benchmarks.md has the figures).
//
// Exactly compute_schedule's figures (the tests compare them on every model they build): the
// same ready times and last-ready predecessors (the same tie rule, by the order the strands were
// met in), the same path, the same sweep; the step function is sampled as it is swept
// (Downsampler), at the point counts asked, instead of kept.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <thread>
#include <vector>

#include "analysis/profile.hpp"
#include "analysis/sched.hpp"
#include "analysis/stream_profile.hpp"
#include "analysis/temp_blocks.hpp"
#include "model/strand_sink.hpp"

namespace tasklens::analysis {

// Events in (time, kind) order, whatever order they were pushed in (equal ones in the order
// pushed): runs of `run_events` are sorted in memory and written in blocks of `block_events` to
// a TempBlocks, then merged. Events that fit in one run never leave the memory. A full run is
// sorted and written on a thread of its own while the next one fills: on the pass's sink thread
// the sort stalled the whole pipeline behind it (docs/benchmarks.md).
class SchedEventSort {
 public:
  explicit SchedEventSort(size_t run_events = kRunEvents, size_t block_events = kBlockEvents);
  ~SchedEventSort();  // waits for the run being written
  SchedEventSort(const SchedEventSort&) = delete;
  SchedEventSort& operator=(const SchedEventSort&) = delete;
  // Runs of 1 M events (16 MB each: one filling, one being sorted, and the sort's copy), read
  // back in blocks of 1024 (16 KB per run while merging: a billion tasks make twice as many runs
  // as with runs of 2 M and blocks of 2048, and the merge holds what it held then).
  static constexpr size_t kRunEvents = size_t{1} << 20, kBlockEvents = size_t{1} << 10;
  // (An error writing an earlier run, such as a full disk, comes out of a later push.)
  void push(const SchedEvent& e) {
    if (run_.size() == run_events_) [[unlikely]]
      spill_in_background();
    run_.push_back(e);
    ++events_;
  }
  // Once every event was pushed: hands each to f in order. Once.
  template <class F>
  void drain(F&& f) {
    start_merge();
    SchedEvent e;
    while (next(e)) f(e);
  }
  uint64_t events() const { return events_; }
  // Once drained:
  uint64_t file_bytes() const { return blocks_.file_bytes(); }
  size_t runs() const { return runs_.size(); }

 private:
  struct Run {
    size_t first_block = 0, blocks = 0;
    size_t block = 0;                // the next block to load
    std::vector<SchedEvent> loaded;  // the loaded block
    size_t pos = 0;
  };
  // A run's next event in the merge's heap: its time, then its kind and the run's index, so
  // that a comparison reads no run (equal events go to the earlier run: the merge is the same
  // on every reading).
  struct Head {
    uint64_t time;
    uint64_t kind_run;  // kind << 32 | run
    bool operator<(const Head& o) const {
      return time != o.time ? time < o.time : kind_run < o.kind_run;
    }
  };
  void sort_run(std::vector<SchedEvent>& run);
  void write_run(std::vector<SchedEvent>& run);  // sorts it, writes it, empties it
  void spill_in_background();
  void wait_for_spill();  // rethrows what the writing thread threw
  void start_merge();
  bool load(Run& r);
  bool next(SchedEvent& e);
  Head head_of(uint32_t run) const {
    const SchedEvent& e = runs_[run].loaded[runs_[run].pos];
    return {e.time, uint64_t{e.kind} << 32 | run};
  }
  void sift_down(Head h);  // h replaces the top
  static bool before(const SchedEvent& a, const SchedEvent& b) {
    return a.time != b.time ? a.time < b.time : a.kind < b.kind;
  }

  size_t run_events_, block_events_;
  std::vector<SchedEvent> run_;  // the run being filled; the last run, if it never spilled
  // The run being sorted and written by `spiller_`, which alone touches it, runs_, blocks_,
  // bytes_ and scratch_ until joined.
  std::vector<SchedEvent> spilling_;
  std::thread spiller_;
  std::exception_ptr spill_error_;
  uint64_t events_ = 0;
  // A block holds its events as varints (sort_run's order: the difference from the previous
  // event's time, shifted to hold the kind, then the argument), then zstd, which packs
  // the repeated threads and kinds (sizes: docs/benchmarks.md).
  TempBlocks blocks_{"the schedule's events"};
  std::vector<Run> runs_;
  std::vector<Head> heap_;  // the runs with events left, the least next event on top
  size_t in_memory_ = 0;    // merge: the position in run_ when nothing spilled
  bool spilled_ = false;
  std::vector<uint8_t> bytes_;       // a block's bytes
  std::vector<SchedEvent> scratch_;  // the radix sort's
};

class StreamSchedule final : public model::StrandSink {
 public:
  // `log_block_entries`, `run_events`, `block_events`: the sizes of what goes to disk (tests
  // make them small).
  explicit StreamSchedule(uint64_t log_block_entries = uint64_t{1} << 18,
                          size_t run_events = SchedEventSort::kRunEvents,
                          size_t block_events = SchedEventSort::kBlockEvents);

  Instance open_instance(uint32_t site) override { return profile_.open_instance(site); }
  void not_outermost(Instance i) override { profile_.not_outermost(i); }
  void close_instance(Instance i) override { profile_.close_instance(i); }
  bool wants_times() const override { return true; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override;
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  void release(Strand s) override { profile_.release(s); }

  struct Result {
    Profile profile;          // work and span (no critical path)
    Schedule schedule;        // no steps: `sampled` at each of `point_counts`
    uint64_t disk_bytes = 0;  // the temporary files' compressed bytes
  };
  Result finish(const std::vector<size_t>& point_counts);

  // What it holds whatever the strand count, with its default sizes: a run being filled and one
  // being sorted (twice its events), and two blocks of the path's links.
  static constexpr uint64_t kFixedBytes =
      SchedEventSort::kRunEvents * sizeof(SchedEvent) * 3 + (uint64_t{1} << 18) * 24 * 2;

  // Per timed strand, in the order they came: what walking the ready path back needs.
  struct PathLink {
    uint64_t back;  // to its last-ready predecessor, among the timed strands; 0: none
    uint64_t start, end;
  };
  static_assert(sizeof(PathLink) == 24);  // (kFixedBytes counts its blocks)
  // A link as three varints: the distance back, the start from the previous link's end (the
  // strands come in a topological order: near in time), the length: zstd packs them far
  // better than the structs (docs/benchmarks.md).
  struct PathLinkCodec {
    static size_t bound(size_t n) { return n * 30; }
    static uint8_t* encode(const PathLink* in, size_t n, uint8_t* out) {
      uint64_t previous = 0;
      for (size_t i = 0; i < n; ++i) {
        out = trace::put_varint(out, in[i].back);
        out = trace::put_varint(out, trace::zigzag(int64_t(in[i].start - previous)));
        out = trace::put_varint(out, trace::zigzag(int64_t(in[i].end - in[i].start)));
        previous = in[i].end;
      }
      return out;
    }
    static void decode(const uint8_t* in, size_t n, PathLink* out) {
      uint64_t previous = 0;
      for (size_t i = 0; i < n; ++i) {
        uint64_t start, length;
        in = get_temp_varint(get_temp_varint(in, out[i].back), start);
        in = get_temp_varint(in, length);
        out[i].start = previous + uint64_t(trace::unzigzag(start));
        out[i].end = out[i].start + uint64_t(trace::unzigzag(length));
        previous = out[i].end;
      }
    }
  };

 private:
  static constexpr uint64_t kNoSource = ~uint64_t{0};
  // A live strand's or join's effective end (sched.hpp's ready_times): its end if timed, else
  // the latest of its predecessors', with the timed strand that ended then (its index among the
  // timed strands, and the order it was met in).
  struct Effective {
    uint64_t end = 0;
    uint64_t source = kNoSource;
    uint64_t source_order = 0;
  };
  static bool later(const Effective& a, const Effective& b) {
    return a.source != kNoSource && (b.source == kNoSource || a.end > b.end ||
                                     (a.end == b.end && a.source_order > b.source_order));
  }
  Effective& effective(Strand s) {
    if (s >= effective_.size()) effective_.resize(s + 1);
    return effective_[s];
  }
  StreamProfile profile_;
  std::vector<Effective> effective_;  // by the profile's handle
  BlockLog<PathLink, PathLinkCodec> links_;
  SchedEventSort events_;
  uint64_t start_ = 0, end_ = 0;
  uint32_t thread_ = model::kNone;
  // The timeline (timeline_of's) and the strand ending last (the path's end).
  std::vector<uint64_t> strands_by_thread_;
  uint64_t timed_ = 0, first_ = 0, last_ = 0;
  Effective last_end_;
};

}  // namespace tasklens::analysis
