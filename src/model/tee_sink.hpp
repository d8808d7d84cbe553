// A StrandSink that hands every call to several others: one pass of the builder feeds several
// one-pass analyses (`view` reads its profile, its timeline's bounds and its tasks at once).
//
// Handles are this class's own (a strand's or join's slot is reused once released, an
// instance's once closed, as the builder expects), mapped to each target's. A call a target
// does not want (wants_tasks() and the others) is not passed to it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "model/strand_sink.hpp"

namespace tasklens::model {

class TeeSink final : public StrandSink {
 public:
  explicit TeeSink(std::vector<StrandSink*> targets);

  Instance open_instance(uint32_t site) override;
  void not_outermost(Instance i) override;
  void close_instance(Instance i) override;
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;
  Strand open_join() override;
  void fold(Strand join, Strand pred) override;
  void release(Strand s) override;
  bool wants_tasks() const override { return any(&StrandSink::wants_tasks); }
  void task(const Task& t) override;
  bool wants_task_starts() const override { return any(&StrandSink::wants_task_starts); }
  void task_start() override;
  bool wants_times() const override { return any(&StrandSink::wants_times); }
  void times(uint64_t start, uint64_t end, uint32_t thread) override;
  bool wants_task_keys() const override { return any(&StrandSink::wants_task_keys); }
  void task_key(uint64_t key) override;
  bool wants_regions() const override { return any(&StrandSink::wants_regions); }
  void region_work(uint32_t region, uint64_t work) override;
  bool wants_nodes() const override { return any(&StrandSink::wants_nodes); }
  void node(uint64_t key, uint64_t parent, uint8_t kind, uint32_t site, uint32_t instance) override;
  void strand_node(uint64_t key) override;
  void node_done(uint64_t key) override;

 private:
  bool any(bool (StrandSink::*wants)() const) const;
  // The targets that want a kind of call, asked once.
  std::vector<StrandSink*> only(bool (StrandSink::*wants)() const) const;
  uint32_t take(std::vector<uint32_t>& free, std::vector<uint32_t>& map);

  std::vector<StrandSink*> targets_;
  std::vector<StrandSink*> tasks_, task_starts_, times_, task_keys_, regions_, nodes_;
  const size_t n_;
  // Per handle of this class, the targets' handles (n_ per handle).
  std::vector<uint32_t> strand_map_, instance_map_;
  std::vector<uint32_t> free_strands_, free_instances_;
  std::vector<uint32_t> scratch_preds_, scratch_instances_;
};

}  // namespace tasklens::model
