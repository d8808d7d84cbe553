// The adviser's evaluation in one pass (stream_advise.hpp).
#include "analysis/stream_advise.hpp"

#include <utility>

#include "analysis/algebra.hpp"
#include "model/model.hpp"

namespace tasklens::analysis {

StreamAdvisePass::StreamAdvisePass(std::vector<uint8_t> chosen, double factor, WhatIfMode mode,
                                   uint64_t per_task)
    : chosen_(std::move(chosen)), factor_(factor), mode_(mode), per_task_(per_task) {}

StreamAdvisePass::Strand StreamAdvisePass::strand(uint64_t work, uint64_t span_weight, uint32_t,
                                                  const Strand* preds, uint32_t pred_count,
                                                  const Instance*, uint32_t, uint64_t iterations,
                                                  uint32_t fragment, uint64_t order) {
  if (fragment_work_.size() <= fragment) {
    fragment_work_.resize(size_t{fragment} + 1, 0);
    fragment_regions_.resize(fragment_work_.size());
  }
  fragment_work_[fragment] += work;
  for (const auto& [region, w] : parts_) add_region_part(fragment_regions_[fragment], region, w);
  parts_.clear();
  // As advise: a chosen group's strand is divided once, rounded to the nearest tick.
  if (fragment < chosen_.size() && chosen_[fragment]) {
    span_weight = divide_by_factor(span_weight, factor_);
    if (mode_ == WhatIfMode::Speedup) work = span_weight;
  }
  const bool charged = task_start_;
  task_start_ = false;
  return same(
      first_.strand(work, span_weight, fragment, preds, pred_count, nullptr, 0, iterations,
                    fragment, order),
      second_.strand(work, span_weight + (charged ? per_task_ : 0), charged ? 0 : model::kNone,
                     preds, pred_count, nullptr, 0, iterations, fragment, order));
}

StreamAdvisePass::Result StreamAdvisePass::finish() {
  Result r;
  AdviseEvaluation& e = r.evaluation;
  const Profile divided = first_.finish(false, &e.on_path);
  e.work = divided.work;
  e.span = divided.span;
  e.critical.assign(e.on_path.size(), 0);
  for (const SiteRow& row : divided.sites)
    if (row.site < e.critical.size()) e.critical[row.site] = row.critical_work;
  std::vector<uint64_t> charges;
  const Profile burdened = second_.finish(false, &charges);
  r.burdened.span = burdened.span;
  r.burdened.parallelism = parallelism_of(divided.work, burdened.span);
  r.burdened.overhead_on_path = charges.empty() ? 0 : charges[0] * per_task_;
  r.burdened.overhead_percent = percent_of(r.burdened.overhead_on_path, burdened.span);
  r.fragment_work = std::move(fragment_work_);
  r.fragment_regions = std::move(fragment_regions_);
  return r;
}

}  // namespace tasklens::analysis
