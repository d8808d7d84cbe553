// One pass into several sinks (tee_sink.hpp).
#include "model/tee_sink.hpp"

#include <algorithm>

namespace tasklens::model {

TeeSink::TeeSink(std::vector<StrandSink*> targets)
    : targets_(std::move(targets)),
      tasks_(only(&StrandSink::wants_tasks)),
      task_starts_(only(&StrandSink::wants_task_starts)),
      times_(only(&StrandSink::wants_times)),
      task_keys_(only(&StrandSink::wants_task_keys)),
      regions_(only(&StrandSink::wants_regions)),
      nodes_(only(&StrandSink::wants_nodes)),
      n_(targets_.size()) {}

bool TeeSink::any(bool (StrandSink::*wants)() const) const {
  return std::any_of(targets_.begin(), targets_.end(),
                     [wants](const StrandSink* t) { return (t->*wants)(); });
}

std::vector<StrandSink*> TeeSink::only(bool (StrandSink::*wants)() const) const {
  std::vector<StrandSink*> out;
  for (StrandSink* t : targets_)
    if ((t->*wants)()) out.push_back(t);
  return out;
}

uint32_t TeeSink::take(std::vector<uint32_t>& free, std::vector<uint32_t>& map) {
  if (!free.empty()) {
    const uint32_t h = free.back();
    free.pop_back();
    return h;
  }
  const uint32_t h = static_cast<uint32_t>(map.size() / n_);
  map.resize(map.size() + n_);
  return h;
}

TeeSink::Instance TeeSink::open_instance(uint32_t site) {
  const Instance i = take(free_instances_, instance_map_);
  for (size_t k = 0; k < n_; ++k) instance_map_[i * n_ + k] = targets_[k]->open_instance(site);
  return i;
}

void TeeSink::not_outermost(Instance i) {
  for (size_t k = 0; k < n_; ++k) targets_[k]->not_outermost(instance_map_[i * n_ + k]);
}

void TeeSink::close_instance(Instance i) {
  for (size_t k = 0; k < n_; ++k) targets_[k]->close_instance(instance_map_[i * n_ + k]);
  free_instances_.push_back(i);
}

TeeSink::Strand TeeSink::strand(uint64_t work, uint64_t span_weight, uint32_t site,
                                const Strand* preds, uint32_t pred_count, const Instance* instances,
                                uint32_t instance_count, uint64_t iterations, uint32_t fragment,
                                uint64_t order) {
  const Strand s = take(free_strands_, strand_map_);
  for (size_t k = 0; k < n_; ++k) {
    scratch_preds_.clear();
    for (uint32_t p = 0; p < pred_count; ++p)
      scratch_preds_.push_back(strand_map_[preds[p] * n_ + k]);
    scratch_instances_.clear();
    for (uint32_t i = 0; i < instance_count; ++i)
      scratch_instances_.push_back(instance_map_[instances[i] * n_ + k]);
    strand_map_[s * n_ + k] =
        targets_[k]->strand(work, span_weight, site, scratch_preds_.data(), pred_count,
                            scratch_instances_.data(), instance_count, iterations, fragment, order);
  }
  return s;
}

TeeSink::Strand TeeSink::open_join() {
  const Strand j = take(free_strands_, strand_map_);
  for (size_t k = 0; k < n_; ++k) strand_map_[j * n_ + k] = targets_[k]->open_join();
  return j;
}

void TeeSink::fold(Strand join, Strand pred) {
  for (size_t k = 0; k < n_; ++k)
    targets_[k]->fold(strand_map_[join * n_ + k], strand_map_[pred * n_ + k]);
}

void TeeSink::release(Strand s) {
  for (size_t k = 0; k < n_; ++k) targets_[k]->release(strand_map_[s * n_ + k]);
  free_strands_.push_back(s);
}

void TeeSink::task(const Task& t) {
  for (StrandSink* x : tasks_) x->task(t);
}
void TeeSink::task_start() {
  for (StrandSink* x : task_starts_) x->task_start();
}
void TeeSink::times(uint64_t start, uint64_t end, uint32_t thread) {
  for (StrandSink* x : times_) x->times(start, end, thread);
}
void TeeSink::task_key(uint64_t key) {
  for (StrandSink* x : task_keys_) x->task_key(key);
}
void TeeSink::region_work(uint32_t region, uint64_t work) {
  for (StrandSink* x : regions_) x->region_work(region, work);
}
void TeeSink::node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t instance) {
  for (StrandSink* x : nodes_) x->node(key, parent, kind, site, instance);
}
void TeeSink::strand_node(uint64_t key) {
  for (StrandSink* x : nodes_) x->strand_node(key);
}
void TeeSink::node_done(uint64_t key) {
  for (StrandSink* x : nodes_) x->node_done(key);
}

}  // namespace tasklens::model
