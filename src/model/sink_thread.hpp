// A StrandSink that runs another one on a thread of its own: the builder's thread bounds a
// one-pass reading, and the sink's work (the one-pass profile's strands and folds, its path log's
// compression) need not be on it, so it goes to a third thread while the builder goes on
// (docs/design-scale.md, "Speed"; the figures are in docs/benchmarks.md).
//
// The calls are recorded into chunks of words and played into the target in the same order.
// Handles are this class's own, given at once (the builder needs them to go on): the same slot
// discipline as the target's (a strand's, a join's or an instance's slot is reused once
// released or closed), mapped to the target's handles on the sink's thread.
//
// The target must not be used by anyone else until drain() returned. An exception the target
// throws on the sink's thread comes back from the next call on the builder's, or from drain().
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

#include "model/strand_sink.hpp"

namespace tasklens::model {

// The calls as SinkThread records them: an op word, then its arguments (sink_thread.cpp says how
// each is laid out).
enum class SinkOp : uint64_t {
  kOpen,
  kNotOutermost,
  kClose,
  kStrand,
  kOpenJoin,
  kFold,
  kRelease,
  kTask,
  kTaskStart,
  kTimes,
  kTaskKey,
  kRegionWork,
  kNode,
  kStrandNode,
  kNodeDone
};

// Plays recorded calls into a target, mapping the recorder's handles to the target's. The calls
// a target does not want (StrandSink::wants_*) are skipped: a recording made for a sink that
// wanted more (a pass with the robust span's census beside it) can be played into one that wants
// less.
class CallPlayer {
 public:
  explicit CallPlayer(StrandSink& target);
  void play(const uint64_t* words, size_t count);

 private:
  StrandSink& target_;
  const bool wants_tasks_, wants_task_starts_, wants_times_, wants_task_keys_, wants_regions_,
      wants_nodes_;
  std::vector<StrandSink::Strand> strand_of_;
  std::vector<StrandSink::Instance> instance_of_;
  std::vector<StrandSink::Strand> preds_;
  std::vector<StrandSink::Instance> around_;
};

// Told every chunk of calls once it was played (on the sink's thread): a pass's calls kept to be
// played again (load/sink_spool.hpp). It must not throw.
class ChunkTap {
 public:
  virtual ~ChunkTap() = default;
  virtual void chunk(const uint64_t* words, size_t count) noexcept = 0;
};

class SinkThread final : public StrandSink {
 public:
  // `chunk_words`: the words recorded before a chunk goes to the sink's thread; at most
  // `max_chunks` wait there (then the builder waits: the memory stays bounded, 2 MB by default).
  // `tap`, when given, is told each chunk after it was played.
  explicit SinkThread(StrandSink& target, size_t chunk_words = size_t{1} << 15,
                      size_t max_chunks = 8, ChunkTap* tap = nullptr);
  ~SinkThread() override;  // stops the thread; what was not drained is dropped
  SinkThread(const SinkThread&) = delete;
  SinkThread& operator=(const SinkThread&) = delete;

  Instance open_instance(uint32_t site) override;
  void not_outermost(Instance i) override;
  void close_instance(Instance i) override;
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  void release(Strand s) override;
  bool wants_tasks() const override { return wants_tasks_; }
  void task(const Task& t) override;
  bool wants_task_starts() const override { return wants_task_starts_; }
  void task_start() override;
  bool wants_times() const override { return wants_times_; }
  void times(uint64_t start, uint64_t end, uint32_t thread) override;
  bool wants_task_keys() const override { return wants_task_keys_; }
  void task_key(uint64_t key) override;
  bool wants_regions() const override { return wants_regions_; }
  void region_work(uint32_t region, uint64_t work) override;
  bool wants_nodes() const override { return wants_nodes_; }
  void node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t instance) override;
  void strand_node(uint64_t key) override;
  void node_done(uint64_t key) override;

  // Every call made so far has reached the target (rethrows what the target threw).
  void drain();

 private:
  // Room for a call's `words` in the chunk (its words written in place: one bounds check per
  // call, not per word; this is the builder's thread, the one-pass reading's bound).
  uint64_t* room(size_t words) {
    if (used_ + words > chunk_.size()) chunk_.resize(used_ + words);
    uint64_t* const w = chunk_.data() + used_;
    used_ += words;
    return w;
  }
  void maybe_send() {
    if (used_ >= chunk_words_) send();
  }
  void send();  // the current chunk to the sink's thread
  void run();   // the sink's thread

  const bool wants_tasks_, wants_task_starts_, wants_times_, wants_task_keys_, wants_regions_,
      wants_nodes_;
  size_t chunk_words_, max_chunks_;
  // The builder's side: the chunk being filled, the handles.
  std::vector<uint64_t> chunk_;  // its first used_ words are the calls'
  size_t used_ = 0;
  uint32_t strands_ = 0, instances_ = 0;
  std::vector<uint32_t> free_strands_, free_instances_;
  // Shared, under mutex_.
  std::mutex mutex_;
  std::condition_variable ready_, taken_;
  std::deque<std::vector<uint64_t>> queue_;
  std::vector<std::vector<uint64_t>> spare_;  // played chunks, for their capacity
  bool busy_ = false, stop_ = false;
  std::exception_ptr failed_;
  // The sink's side: the calls played into the target, and told to the tap.
  CallPlayer player_;
  ChunkTap* tap_;
  std::thread thread_;
};

}  // namespace tasklens::model
