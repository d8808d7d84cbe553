// The adviser (whatif.hpp's advise_steps) on a recording read in one pass per step: each step's
// evaluation is one pass of the builder's streaming mode into a StreamAdvisePass, so that the
// memory follows the live strands, not the task count. A step needs the critical path of the
// program with the earlier steps' fragments divided, which only that step's pass gives; a
// recording the adviser takes k steps on is read k + 1 times.
//
// Exactly advise's figures on the DAG: the same weights (a strand of a chosen group weighs
// round(w / factor) on paths, and in the work when speeding up), the same critical path (the
// same tie rule, StreamProfile's), each group's work and strands on it, and the burdened span
// (analysis::burdened: each task's first strand charged the tasking overhead).
#pragma once

#include <cstdint>
#include <vector>

#include "analysis/stream_whatif.hpp"
#include "analysis/whatif.hpp"

namespace tasklens::analysis {

// One evaluation, by code fragment (the caller sums its groups' figures: a pass numbers the
// fragments as it meets them, the same way each time). The first profile is the program with
// the chosen fragments divided, each strand's fragment as its site (its rows are the fragments'
// shares of the critical path); the second is the same program with every task's first strand
// charged `per_task`, a task's first strand as site 0 (its row counts the charges on the
// burdened path).
class StreamAdvisePass final : public TwinProfiles {
 public:
  // `chosen`: per fragment index, 1 if divided.
  StreamAdvisePass(std::vector<uint8_t> chosen, double factor, WhatIfMode mode, uint64_t per_task);

  bool wants_task_starts() const override { return true; }
  void task_start() override { task_start_ = true; }
  bool wants_regions() const override { return true; }
  void region_work(uint32_t region, uint64_t work) override { parts_.emplace_back(region, work); }
  Strand strand(uint64_t work, uint64_t span_weight, uint32_t site, const Strand* preds,
                uint32_t pred_count, const Instance* instances, uint32_t instance_count,
                uint64_t iterations, uint32_t fragment, uint64_t order) override;

  struct Result {
    AdviseEvaluation evaluation;  // `critical` and `on_path` by fragment index
    Burdened burdened;
    // By fragment index, its strands' work as recorded, and their work inside user regions
    // (name_step_regions' sums, before the groups).
    std::vector<uint64_t> fragment_work;
    std::vector<std::vector<std::pair<uint32_t, uint64_t>>> fragment_regions;
  };
  Result finish();

 private:
  std::vector<uint8_t> chosen_;
  double factor_;
  WhatIfMode mode_;
  uint64_t per_task_;
  bool task_start_ = false;                           // the next strand is a task's first
  std::vector<std::pair<uint32_t, uint64_t>> parts_;  // the next strand's, in user regions
  std::vector<uint64_t> fragment_work_;
  std::vector<std::vector<std::pair<uint32_t, uint64_t>>> fragment_regions_;
};

}  // namespace tasklens::analysis
