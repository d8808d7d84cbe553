// The model builder's events, decoded and merged on a thread of their own.
//
// Why: the builder handles the events of every thread's stream in one time order, and handling
// them is serial. Decoding them (varints, deltas, the oneTBB forms) and merging the streams by
// timestamp is a third of that loop, and needs nothing
// of the builder: a producer thread does it on the other core, into a small ring of batches the
// builder takes in order. The order is exactly the one the builder used to merge in itself
// (a stream is consumed while it stays the earliest), so models are unchanged.
//
// A decoding error ends the events where it happened: the builder handles those before it,
// then finish() throws it, as when the builder decoded them itself. Internal to src/model.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <exception>
#include <functional>
#include <queue>
#include <thread>
#include <utility>
#include <vector>

#include "trace/reader.hpp"

namespace tasklens::model::detail {

class EventPipe {
 public:
  // One batch: events with the index of the stream (trace thread) each came from. Its events'
  // `values` and `groups` point into the batch, valid until release().
  struct Batch {
    std::vector<trace::Event> events;
    std::vector<uint32_t> threads;
    std::vector<uint64_t> values;               // metric_count per event, when more than one
    std::vector<std::vector<uint64_t>> groups;  // repeated groups (Dependences), in order
    std::vector<uint32_t> group_events;         // which event each of `groups` belongs to
    size_t groups_used = 0;                     // `groups` beyond this are spare (reused)
  };

  // Starts decoding. The decoders must outlive the pipe; `metric_count` is the file's number
  // of metrics (events' `values` are copied when it is more than one).
  // `idle`, when given, is called by the decoding thread instead of waiting while the ring is
  // full, as long as it returns true (it has done a little work and has more).
  EventPipe(std::vector<trace::EventDecoder>& decoders, size_t metric_count,
            std::function<bool()> idle = {})
      : decoders_(decoders), metric_count_(metric_count), idle_(std::move(idle)) {
    for (auto& b : ring_) {
      b.events.resize(kBatchEvents);
      b.threads.resize(kBatchEvents);
      if (metric_count_ > 1) b.values.resize(kBatchEvents * metric_count_);
    }
    thread_ = std::thread([this] { produce(); });
  }
  EventPipe(const EventPipe&) = delete;
  EventPipe& operator=(const EventPipe&) = delete;
  // Also when the builder stopped early (an error): the producer stops too. Waiting wakes only
  // on a change of value, so the room counter is moved on as well.
  ~EventPipe() {
    stop_.store(true, std::memory_order_relaxed);
    consumed_.fetch_add(kRing, std::memory_order_release);
    consumed_.notify_one();
    if (thread_.joinable()) thread_.join();
  }

  // The next batch and its number of events, in order; {nullptr, 0} after the last. Each batch
  // must be released before the next is asked for.
  std::pair<const Batch*, size_t> next() {
    const uint64_t at = taken_;
    for (;;) {
      const uint64_t state = produced_.load(std::memory_order_acquire);
      if (state / 2 > at) break;
      if (state & 1) return {nullptr, 0};  // done, and every batch taken
      produced_.wait(state, std::memory_order_acquire);
    }
    const Batch& b = ring_[at % kRing];
    return {&b, counts_[at % kRing]};
  }
  void release() {
    ++taken_;
    consumed_.store(taken_, std::memory_order_release);
    // The producer waits only when the ring is full, and waking it costs a system call and two
    // switches of thread: it is woken once half the ring is free and fills that half in one
    // go, not once per batch. (It waits for consumed_ to move from a value at most kRing
    // below a multiple of kRing / 2 that this then reaches, as every batch it made is taken.)
    if (taken_ % (kRing / 2) == 0) consumed_.notify_one();
  }

  // After the last batch: rethrows a decoding error; whether a stream was cut short.
  bool finish() {
    if (thread_.joinable()) thread_.join();
    if (error_) std::rethrow_exception(error_);
    return truncated_;
  }

 private:
  static constexpr size_t kRing = 8;            // batches in flight
  static constexpr size_t kBatchEvents = 1024;  // 8 x 1024 x 84 B: stays in the caches

  // The producer's merge: streams by the timestamp of their next event, each consumed while it
  // stays the earliest (one stream at a time is the common case: no heap traffic per event).
  void produce() {
    try {
      const uint32_t n = static_cast<uint32_t>(decoders_.size());
      std::vector<trace::Event> heads(n);
      using Item = std::pair<uint64_t, uint32_t>;
      std::priority_queue<Item, std::vector<Item>, std::greater<Item>> queue;
      for (uint32_t i = 0; i < n; ++i)
        if (decoders_[i].next(heads[i])) queue.emplace(heads[i].time, i);
      while (!queue.empty() && !stop_.load(std::memory_order_relaxed)) {
        const uint32_t i = queue.top().second;
        queue.pop();
        const uint64_t limit = queue.empty() ? ~0ull : queue.top().first;
        bool more;
        do {
          emit(heads[i], i);
          more = decoders_[i].next(heads[i]);
        } while (more && heads[i].time <= limit && !stop_.load(std::memory_order_relaxed));
        if (more)
          queue.emplace(heads[i].time, i);
        else
          truncated_ |= decoders_[i].truncated();
      }
    } catch (...) {
      error_ = std::current_exception();
    }
    if (filling_ > 0) publish();
    produced_.store(made_ * 2 + 1, std::memory_order_release);
    produced_.notify_one();
  }

  void emit(const trace::Event& e, uint32_t thread) {
    if (filling_ == 0 && !wait_for_room()) return;
    Batch& b = ring_[made_ % kRing];
    const size_t k = filling_++;
    b.events[k] = e;
    b.threads[k] = thread;
    if (metric_count_ > 1)
      std::copy(e.values, e.values + metric_count_, b.values.begin() + k * metric_count_);
    if (e.groups && !e.groups->empty()) {
      if (b.groups_used == b.groups.size()) b.groups.emplace_back();
      b.groups[b.groups_used++] = *e.groups;
      b.group_events.push_back(static_cast<uint32_t>(k));
    }
    if (filling_ == kBatchEvents) publish();
  }
  // Waits until the batch to fill next is free; false when the consumer stopped.
  bool wait_for_room() {
    for (;;) {
      const uint64_t free_up_to = consumed_.load(std::memory_order_acquire) + kRing;
      if (stop_.load(std::memory_order_relaxed)) return false;
      if (made_ < free_up_to) break;
      if (idle_ && idle_()) continue;
      consumed_.wait(free_up_to - kRing, std::memory_order_acquire);
    }
    Batch& b = ring_[made_ % kRing];
    b.groups_used = 0;
    b.group_events.clear();
    return true;
  }
  // The filled batch's pointers go into the batch itself, then it is handed over.
  void publish() {
    Batch& b = ring_[made_ % kRing];
    for (size_t k = 0; k < filling_; ++k) {
      b.events[k].values = metric_count_ > 1 ? &b.values[k * metric_count_] : &b.events[k].metric;
      b.events[k].groups = &kNoGroups;
    }
    for (size_t g = 0; g < b.groups_used; ++g) b.events[b.group_events[g]].groups = &b.groups[g];
    counts_[made_ % kRing] = filling_;
    filling_ = 0;
    ++made_;
    produced_.store(made_ * 2, std::memory_order_release);
    produced_.notify_one();
  }

  static inline const std::vector<uint64_t> kNoGroups{};
  std::vector<trace::EventDecoder>& decoders_;
  const size_t metric_count_;
  std::function<bool()> idle_;
  Batch ring_[kRing];
  size_t counts_[kRing] = {};
  // Batches made by the producer (times two, plus one once it is done) and released by the
  // consumer, counted from the start.
  std::atomic<uint64_t> produced_{0}, consumed_{0};
  std::atomic<bool> stop_{false};
  uint64_t made_ = 0;   // producer's
  size_t filling_ = 0;  // producer's: events in the batch being filled
  uint64_t taken_ = 0;  // consumer's
  bool truncated_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

}  // namespace tasklens::model::detail
