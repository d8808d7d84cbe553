// `tasks` on a recording read in one pass (model::build_streaming): the task profile of
// analysis/tasks.hpp from the tasks the builder hands over one by one (StrandSink::task), in
// memory that follows the task types, not the task count. Counts, totals, means, minimums,
// maximums, the tiny tasks and the histograms are exact; medians and 90th percentiles come from
// a QuantileSketch per type and figure (within QuantileSketch::kRelativeError below the exact
// ones). The long waits' threshold comes from an upper bound of the 90th percentile (within
// kRelativeError above the exact threshold), so that their count is never above the exact one
// and misses only waits that close to the threshold (TaskProfile::sketch_error).
#pragma once

#include <cstdint>
#include <map>
#include <utility>

#include "analysis/quantile_sketch.hpp"
#include "analysis/tasks.hpp"
#include "model/model.hpp"
#include "model/strand_sink.hpp"

namespace tasklens::analysis {

class StreamTasks final : public model::StrandSink {
 public:
  // `tiny_size`: TaskOptions::tiny_size, known before the pass (default_task_options).
  explicit StreamTasks(uint64_t tiny_size) : tiny_size_(tiny_size) {}

  // Of the strands it needs their work only (TaskProfile::work).
  Instance open_instance(uint32_t) override { return 0; }
  void not_outermost(Instance) override {}
  void close_instance(Instance) override {}
  Strand strand(uint64_t work, uint64_t, uint32_t, const Strand*, uint32_t, const Instance*,
                uint32_t, uint64_t, uint32_t, uint64_t) override {
    work_ += work;
    return 0;
  }
  Strand open_join() override { return 0; }
  void fold(Strand, Strand) override {}
  void release(Strand) override {}
  bool wants_tasks() const override { return true; }
  void task(const Task& t) override;

  // compute_tasks's profile of the model read (its sites and threads: build_streaming's
  // result), with `options` (whose tiny_size must be the one given above).
  TaskProfile finish(const model::Model& m, const TaskOptions& options) const;

 private:
  struct Type {
    QuantileSketch size, wait, idle;
    uint64_t tiny = 0;
  };
  std::map<std::pair<uint32_t, bool>, Type> types_;  // by (site, chunks)
  uint64_t tiny_size_ = 0;
  uint64_t work_ = 0;
};

}  // namespace tasklens::analysis
