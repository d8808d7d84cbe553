// The task profile read in one pass (stream_tasks.hpp).
#include "analysis/stream_tasks.hpp"

namespace tasklens::analysis {
namespace {

Stats stats_of_sketch(const QuantileSketch& q) {
  Stats st;
  if (q.count() == 0) return st;
  st.samples = q.count();
  st.total = q.total();
  st.mean = static_cast<double>(st.total) / static_cast<double>(st.samples);
  st.min = q.min();
  st.max = q.max();
  st.median = q.percentile(50);
  st.p90 = q.percentile(90);
  return st;
}

}  // namespace

void StreamTasks::task(const Task& t) {
  Type& type = types_[{t.site, t.chunk}];
  type.size.add(t.size);
  if (t.size < tiny_size_) ++type.tiny;
  if (t.wait != kNoTime) type.wait.add(t.wait);
  if (t.idle != kNoTime) type.idle.add(t.idle);
}

TaskProfile StreamTasks::finish(const model::Model& m, const TaskOptions& opt) const {
  TaskProfile p;
  p.sketch_error = QuantileSketch::kRelativeError;
  p.work = work_;
  for (uint8_t ran : m.one_pass.threads_with_strands) p.workers += ran;
  for (const auto& [key, type] : types_) {
    if (key.first >= m.sites.size() || !is_task_site_kind(m.sites[key.first].kind)) continue;
    TaskType t;
    t.site = key.first;
    t.chunks = key.second;
    t.size = stats_of_sketch(type.size);
    t.wait = stats_of_sketch(type.wait);
    t.idle = stats_of_sketch(type.idle);
    t.tiny = type.tiny;
    t.size_octaves = type.size.octaves();
    const std::array<uint64_t, 65> waits = type.wait.octaves(), idles = type.idle.octaves();
    if (opt.same_unit) {
      auto h = log2_histograms_of_octaves({&t.size_octaves, &waits, &idles}, opt.bins);
      t.size_hist = h[0];
      t.wait_hist = h[1];
      t.idle_hist = h[2];
    } else {
      t.size_hist = log2_histograms_of_octaves({&t.size_octaves}, opt.bins)[0];
      auto h = log2_histograms_of_octaves({&waits, &idles}, opt.bins);
      t.wait_hist = h[0];
      t.idle_hist = h[1];
    }
    // The threshold from an upper bound of the 90th percentile: never below the exact one, so
    // that no wait is counted that the DAG in memory would not count.
    Stats upper = t.wait;
    upper.p90 = type.wait.percentile_upper(90);
    t.long_wait_threshold = long_wait_threshold(upper, opt);
    t.long_waits = type.wait.count_above(t.long_wait_threshold);
    if (t.wait.samples || t.idle.samples) p.timestamps = true;
    p.tasks += t.size.samples;
    p.task_work += t.size.total;
    p.types.push_back(std::move(t));
  }
  add_findings(p, opt);
  return p;
}

}  // namespace tasklens::analysis
