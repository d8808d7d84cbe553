// The sink on a thread of its own (sink_thread.hpp).
#include "model/sink_thread.hpp"

#include <algorithm>
#include <utility>

namespace tasklens::model {

namespace {

// A handle of this class: a free one, or the next.
uint32_t take(std::vector<uint32_t>& free, uint32_t& count) {
  if (free.empty()) return count++;
  const uint32_t h = free.back();
  free.pop_back();
  return h;
}

constexpr uint64_t op(SinkOp o) { return static_cast<uint64_t>(o); }

}  // namespace

SinkThread::SinkThread(StrandSink& target, size_t chunk_words, size_t max_chunks, ChunkTap* tap)
    : wants_tasks_(target.wants_tasks()),
      wants_task_starts_(target.wants_task_starts()),
      wants_times_(target.wants_times()),
      wants_task_keys_(target.wants_task_keys()),
      wants_regions_(target.wants_regions()),
      wants_nodes_(target.wants_nodes()),
      chunk_words_(chunk_words),
      max_chunks_(max_chunks),
      player_(target),
      tap_(tap) {
  chunk_.resize(chunk_words_ + 64);
  thread_ = std::thread([this] { run(); });
}

SinkThread::~SinkThread() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
    queue_.clear();
  }
  ready_.notify_all();
  thread_.join();
}

SinkThread::Instance SinkThread::open_instance(uint32_t site) {
  const Instance i = take(free_instances_, instances_);
  uint64_t* w = room(3);
  w[0] = op(SinkOp::kOpen);
  w[1] = i;
  w[2] = site;
  maybe_send();
  return i;
}

void SinkThread::not_outermost(Instance i) {
  uint64_t* w = room(2);
  w[0] = op(SinkOp::kNotOutermost);
  w[1] = i;
  maybe_send();
}

void SinkThread::close_instance(Instance i) {
  uint64_t* w = room(2);
  w[0] = op(SinkOp::kClose);
  w[1] = i;
  free_instances_.push_back(i);
  maybe_send();
}

SinkThread::Strand SinkThread::strand(uint64_t work, uint64_t span_weight, uint32_t site,
                                      const Strand* preds, uint32_t pred_count,
                                      const Instance* instances, uint32_t instance_count,
                                      uint64_t iterations, uint32_t fragment, uint64_t order) {
  const Strand s = take(free_strands_, strands_);
  uint64_t* w = room(size_t{8} + pred_count + instance_count);
  w[0] = op(SinkOp::kStrand);
  w[1] = s;
  w[2] = work;
  w[3] = span_weight;
  w[4] = uint64_t{site} << 32 | fragment;
  w[5] = iterations;
  w[6] = order;
  w[7] = uint64_t{pred_count} << 32 | instance_count;
  w += 8;
  for (uint32_t k = 0; k < pred_count; ++k) w[k] = preds[k];
  w += pred_count;
  for (uint32_t k = 0; k < instance_count; ++k) w[k] = instances[k];
  maybe_send();
  return s;
}

SinkThread::Strand SinkThread::open_join() {
  const Strand j = take(free_strands_, strands_);
  uint64_t* w = room(2);
  w[0] = op(SinkOp::kOpenJoin);
  w[1] = j;
  maybe_send();
  return j;
}

void SinkThread::fold(Strand join, Strand pred) {
  uint64_t* w = room(2);
  w[0] = op(SinkOp::kFold);
  w[1] = uint64_t{join} << 32 | pred;
  maybe_send();
}

void SinkThread::release(Strand s) {
  uint64_t* w = room(2);
  w[0] = op(SinkOp::kRelease);
  w[1] = s;
  free_strands_.push_back(s);  // reused after this, in the calls' order: the map follows
  maybe_send();
}

void SinkThread::task(const Task& t) {
  uint64_t* w = room(5);
  w[0] = op(SinkOp::kTask);
  w[1] = uint64_t{t.site} << 1 | uint64_t{t.chunk};
  w[2] = t.size;
  w[3] = t.wait;
  w[4] = t.idle;
  maybe_send();
}

void SinkThread::task_start() {
  *room(1) = op(SinkOp::kTaskStart);
  maybe_send();
}

void SinkThread::times(uint64_t start, uint64_t end, uint32_t thread) {
  uint64_t* w = room(4);
  w[0] = op(SinkOp::kTimes);
  w[1] = start;
  w[2] = end;
  w[3] = thread;
  maybe_send();
}

void SinkThread::task_key(uint64_t key) {
  uint64_t* w = room(2);
  w[0] = op(SinkOp::kTaskKey);
  w[1] = key;
  maybe_send();
}

void SinkThread::region_work(uint32_t region, uint64_t work) {
  uint64_t* w = room(3);
  w[0] = op(SinkOp::kRegionWork);
  w[1] = region;
  w[2] = work;
  maybe_send();
}

void SinkThread::node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site,
                      uint32_t instance) {
  uint64_t* w = room(5);
  w[0] = op(SinkOp::kNode);
  w[1] = key;
  w[2] = parent;
  w[3] = uint64_t{site} << 8 | kind;
  w[4] = instance;
  maybe_send();
}

void SinkThread::strand_node(uint64_t key) {
  uint64_t* w = room(2);
  w[0] = op(SinkOp::kStrandNode);
  w[1] = key;
  maybe_send();
}

void SinkThread::node_done(uint64_t key) {
  uint64_t* w = room(2);
  w[0] = op(SinkOp::kNodeDone);
  w[1] = key;
  maybe_send();
}

void SinkThread::send() {
  std::unique_lock<std::mutex> lock(mutex_);
  taken_.wait(lock, [this] { return queue_.size() < max_chunks_ || failed_; });
  if (failed_) std::rethrow_exception(failed_);
  chunk_.resize(used_);
  queue_.push_back(std::move(chunk_));
  // The sink's thread is woken once half the queue waits, not for every chunk. Where it keeps
  // up (the builder is `report`'s bound) a wake-up per chunk cost a system call, a switch of
  // thread and, on two cores, often the builder's place on its core; where it does not, the
  // queue stays full and the thread awake.
  const bool wake = queue_.size() >= std::max<size_t>(1, max_chunks_ / 2);
  if (!spare_.empty()) {
    chunk_ = std::move(spare_.back());
    spare_.pop_back();
  } else {
    chunk_ = {};
  }
  lock.unlock();
  if (wake) ready_.notify_one();
  chunk_.resize(chunk_words_ + 64);  // (a played chunk keeps its words: only a tail is filled)
  used_ = 0;
}

void SinkThread::drain() {
  if (used_ != 0) send();
  std::unique_lock<std::mutex> lock(mutex_);
  ready_.notify_one();  // (send() leaves fewer than half the queue's chunks waiting unplayed)
  taken_.wait(lock, [this] { return (queue_.empty() && !busy_) || failed_; });
  if (failed_) std::rethrow_exception(failed_);
}

void SinkThread::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ready_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (stop_) return;
    std::vector<uint64_t> chunk = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    taken_.notify_one();
    std::exception_ptr error;
    try {
      player_.play(chunk.data(), chunk.size());
      if (tap_) tap_->chunk(chunk.data(), chunk.size());
    } catch (...) {
      error = std::current_exception();
    }
    lock.lock();
    busy_ = false;
    if (error) {
      failed_ = error;
      queue_.clear();
    }
    spare_.push_back(std::move(chunk));  // (its words stay: send() writes over them)
    taken_.notify_one();
    if (failed_) {  // nothing more is played; the builder learns it at its next send or drain
      ready_.wait(lock, [this] { return stop_; });
      return;
    }
  }
}

CallPlayer::CallPlayer(StrandSink& target)
    : target_(target),
      wants_tasks_(target.wants_tasks()),
      wants_task_starts_(target.wants_task_starts()),
      wants_times_(target.wants_times()),
      wants_task_keys_(target.wants_task_keys()),
      wants_regions_(target.wants_regions()),
      wants_nodes_(target.wants_nodes()) {}

void CallPlayer::play(const uint64_t* words, size_t count) {
  auto grow = [](auto& map, uint64_t h) {
    if (map.size() <= h) map.resize(h + 1);
  };
  const uint64_t* w = words;
  const uint64_t* const end = w + count;
  while (w != end) {
    switch (static_cast<SinkOp>(*w++)) {
      case SinkOp::kOpen: {
        grow(instance_of_, w[0]);
        instance_of_[w[0]] = target_.open_instance(static_cast<uint32_t>(w[1]));
        w += 2;
        break;
      }
      case SinkOp::kNotOutermost:
        target_.not_outermost(instance_of_[*w++]);
        break;
      case SinkOp::kClose:
        target_.close_instance(instance_of_[*w++]);
        break;
      case SinkOp::kStrand: {
        const uint64_t s = w[0], work = w[1], span = w[2], site_fragment = w[3], iterations = w[4],
                       order = w[5], counts = w[6];
        w += 7;
        const uint32_t pred_count = static_cast<uint32_t>(counts >> 32),
                       instance_count = static_cast<uint32_t>(counts);
        if (preds_.size() < pred_count) preds_.resize(pred_count);
        for (uint32_t k = 0; k < pred_count; ++k) preds_[k] = strand_of_[w[k]];
        w += pred_count;
        if (around_.size() < instance_count) around_.resize(instance_count);
        for (uint32_t k = 0; k < instance_count; ++k) around_[k] = instance_of_[w[k]];
        w += instance_count;
        grow(strand_of_, s);
        strand_of_[s] = target_.strand(work, span, static_cast<uint32_t>(site_fragment >> 32),
                                       preds_.data(), pred_count, around_.data(), instance_count,
                                       iterations, static_cast<uint32_t>(site_fragment), order);
        break;
      }
      case SinkOp::kOpenJoin:
        grow(strand_of_, w[0]);
        strand_of_[w[0]] = target_.open_join();
        ++w;
        break;
      case SinkOp::kFold:
        target_.fold(strand_of_[*w >> 32], strand_of_[*w & 0xffffffffu]);
        ++w;
        break;
      case SinkOp::kRelease:
        target_.release(strand_of_[*w++]);
        break;
      case SinkOp::kTask: {
        StrandSink::Task t;
        t.site = static_cast<uint32_t>(w[0] >> 1);
        t.chunk = (w[0] & 1) != 0;
        t.size = w[1];
        t.wait = w[2];
        t.idle = w[3];
        w += 4;
        if (wants_tasks_) target_.task(t);
        break;
      }
      case SinkOp::kTaskStart:
        if (wants_task_starts_) target_.task_start();
        break;
      case SinkOp::kTimes:
        if (wants_times_) target_.times(w[0], w[1], static_cast<uint32_t>(w[2]));
        w += 3;
        break;
      case SinkOp::kTaskKey:
        if (wants_task_keys_) target_.task_key(*w);
        ++w;
        break;
      case SinkOp::kRegionWork:
        if (wants_regions_) target_.region_work(static_cast<uint32_t>(w[0]), w[1]);
        w += 2;
        break;
      case SinkOp::kNode:
        if (wants_nodes_)
          target_.node(w[0], w[1], static_cast<uint8_t>(w[2] & 0xff),
                       static_cast<uint32_t>(w[2] >> 8), static_cast<uint32_t>(w[3]));
        w += 4;
        break;
      case SinkOp::kStrandNode:
        if (wants_nodes_) target_.strand_node(*w);
        ++w;
        break;
      case SinkOp::kNodeDone:
        if (wants_nodes_) target_.node_done(*w);
        ++w;
        break;
    }
  }
}

}  // namespace tasklens::model
