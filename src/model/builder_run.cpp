// The build's driver: the trace's streams decoded and merged in time order (event_pipe.hpp),
// each event handled (builder_events.cpp), then the model made in memory (builder_finalize.cpp)
// or, in the streaming mode, what is left handed over (builder_stream.cpp).
#include <algorithm>
#include <functional>
#include <tuple>

#include "model/builder_state.hpp"
#include "model/event_pipe.hpp"
#include "platform/platform.hpp"

namespace tasklens::model::detail {

// Off-CPU intervals come in CLOCK_MONOTONIC ns; the clock syncs map them onto the TSC.
Model Builder::run() {
  const std::vector<trace::Metric>& metrics = trace_.metrics();
  extra_count_ = static_cast<uint32_t>(metrics.size() - 1);
  for (size_t i = 0; i < metrics.size(); ++i)
    if (metrics[i] == trace::Metric::Tsc) tsc_metric_ = static_cast<int>(i);
  load_preemptions();
  if (tsc_metric_ >= 0 && trace_.has_probe_cost() &&
      uint32_t(tsc_metric_) < trace_.probe_cost().metric_count && !options_.keep_probe_cost) {
    probe_ticks_ = (trace_.probe_cost().milli_per_event[tsc_metric_] + 500) / 1000;
    probe_in_run_ = trace_.probe_cost().source == uint32_t(trace::ProbeSource::Run);
  }
  load_runtime_cost();
  for (const auto& m : trace_.modules()) {
    std::string base = m.path.substr(m.path.find_last_of('/') + 1);
    if (base.rfind("libomp", 0) == 0 || base.rfind("libgomp", 0) == 0 ||
        base.rfind("libiomp", 0) == 0)
      runtime_ranges_.emplace_back(m.begin, m.end);
  }
  if (out_ && extra_count_)
    stream_unsupported("several metrics (record --metric with more than one)");
  // Node 0: the program (the initial task outside every construct).
  new_node(NodeKind::Program, kNone);
  sites_.push_back(Site{0, SiteKind::Program, {}, 0, {}, 0});
  nodes_[0].site = 0;
  nodes_[0].instance = instance_count_++;

  uint32_t n = trace_.stream_count();
  // The streams are decompressed block by block as the pipe's thread decodes them: the first
  // events come at once, and only a window of each stream is in memory.
  std::vector<trace::EventDecoder> decoders;
  decoders.reserve(n);
  for (uint32_t i = 0; i < n; ++i) decoders.push_back(trace_.decoder(i));
  current_.assign(n, kNone);
  thread_task_.assign(n, kNone);
  mutex_wait_.assign(n, 0);
  last_metric_.assign(n, 0);
  last_time_.assign(n, trace_.header().start_tsc);
  wait_pending_.assign(n, 0);
  wait_strand_.assign(n, kNone);
  probe_debt_.assign(n, 0);
  stream_tasks_ = out_ && out_->wants_tasks();
  stream_task_starts_ = out_ && out_->wants_task_starts();
  stream_times_ = out_ && out_->wants_times();
  stream_task_keys_ = out_ && out_->wants_task_keys();
  stream_regions_ = out_ && out_->wants_regions();
  stream_nodes_ = out_ && out_->wants_nodes();
  if (stream_tasks_) {
    stream_busy_.assign(n, ~uint64_t{0});
    stream_open_.assign(n, {});
    idle_groups_.assign(n, {});
  }
  if (track_keys_) last_key_.assign(n, 0);
  last_extra_.assign(size_t(n) * extra_count_, 0);
  // Sizes from the stream lengths (a few bytes per event): growing these vectors while
  // building costs more than the building itself on large traces.
  size_t bytes = 0;
  for (uint32_t i = 0; i < n; ++i) bytes += trace_.stream_bytes(i);
  size_t events = bytes / 5 + 16;
  if (!out_) {  // (the streaming mode keeps what is live only)
    strands_.reserve(events * 7 / 10);
    edges_.reserve(events * 6 / 5);
  }
  // Tasks (and so nodes) are known exactly when the recorder finished; a vector that grows by
  // doubling at the very end would copy and fault in twice its size.
  size_t tasks = trace_.has_finish() ? trace_.finish().tasks_created : events / 4;
  // Every id the recorder hands out comes with an event of at least two bytes, except those of
  // tasks whose events were lost (counted in the Finish record).
  const uint64_t finished = trace_.has_finish() ? trace_.finish().tasks_created : 0;
  id_limit_ = bytes + 2 * std::min<uint64_t>(finished, uint64_t{64} * bytes) + (uint64_t{1} << 20);
  tasks = std::min<size_t>(tasks, bytes / 2 + 1024);  // (a damaged Finish record says anything)
  if (!out_) {
    nodes_.reserve(tasks + tasks / 8 + 1024);
    tasks_.reserve(tasks + 1024);
    items_.reserve(events * 9 / 10 + tasks / 8);
  }
  ids_per_thread_ = tasks + 1024;
  platform::Prefaulter prefault;
  const size_t strands_range = prefault.add_capacity(strands_);
  const size_t tasks_range = prefault.add_capacity(tasks_);
  const size_t nodes_range = prefault.add_capacity(nodes_);
  const size_t items_range = prefault.add_capacity(items_);
  const size_t edges_range = prefault.add_capacity(edges_);
  std::function<bool()> idle;
  if (options_.huge_pages) {  // in the decoder's spare time, ahead of the builder (platform.hpp)
    prefault.follow_owner();
    idle = [&prefault] { return prefault.step(); };
  } else {
    prefault.start();
  }
  for (uint32_t i = 0; i < n; ++i) {
    last_metric_[i] = trace_.metric() == trace::Metric::Tsc ? trace_.header().start_tsc : 0;
    for (uint32_t m = 0; m < extra_count_; ++m)
      last_extra_[size_t(i) * extra_count_ + m] =
          metrics[m + 1] == trace::Metric::Tsc ? trace_.header().start_tsc : 0;
  }
  // The events, decoded and merged in time order on another thread (event_pipe.hpp): causality
  // across threads (a task created on one thread and run on another, an untied task resumed
  // elsewhere) follows the TSC order.
  EventPipe pipe(decoders, metrics.size(), std::move(idle));
  // The events the recorder counted (an estimate from the streams' sizes without its Finish).
  const uint64_t events_total =
      trace_.has_finish() && trace_.finish().events > 1 ? trace_.finish().events : events;
  uint64_t events_done = 0, batches = 0;
  for (auto [batch, count] = pipe.next(); batch; std::tie(batch, count) = pipe.next()) {
    if (out_) {
      for (size_t k = 0; k < count; ++k) {
        handle(batch->events[k], batch->threads[k]);
        stream_maybe_flush();
      }
    } else {
      for (size_t k = 0; k < count; ++k) handle(batch->events[k], batch->threads[k]);
    }
    events_done += count;
    // (An estimate may fall short: never done == total before the end, which says "done".)
    if (options_.progress && ++batches % 256 == 0)
      options_.progress(std::min(events_done, events_total - 1), events_total);
    if (options_.huge_pages && !out_) {
      prefault.progress(strands_range, strands_.data() + strands_.size());
      prefault.progress(tasks_range, tasks_.data() + tasks_.size());
      prefault.progress(nodes_range, nodes_.data() + nodes_.size());
      prefault.progress(items_range, items_.data() + items_.size());
      prefault.progress(edges_range, edges_.data() + edges_.size());
    }
    pipe.release();
  }
  const bool stream_truncated = pipe.finish();
  if (options_.progress) options_.progress(events_done, events_done);  // the events are done
  if ((trace_.runtime_flags() & trace::kRuntimeTbbUnsupported) && !saw_constructs_)
    throw ModelError(trace_.path() + ": the program uses " + trace_.runtime_version() +
                     ", whose ABI tasklens cannot trace (it knows oneTBB 2021, interface 12); "
                     "rebuild the program against Debian's libtbb-dev");
  if (!saw_openmp_) {
    if (!trace_.complete())
      throw ModelError(trace_.path() + ": the trace is incomplete (" +
                       trace::incomplete_cause(trace_.has_launch_status(),
                                               trace_.launch_status().exit_code,
                                               trace_.launch_status().signal) +
                       ") and holds no OpenMP or oneTBB activity: nothing to profile");
    throw ModelError(trace_.path() +
                     ": the program never started an OpenMP parallel region or task, nor a "
                     "oneTBB task (is it built with -fopenmp, or linked with -ltbb?)");
  }
  prefault.join();
  decoders.clear();
  Model m = out_ ? finish_stream() : finalize();
  if (stream_truncated) m.complete = false;
  return m;
}

}  // namespace tasklens::model::detail
