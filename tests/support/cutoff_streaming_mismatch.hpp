// How the cut-off advice of a recording read in passes (analysis/stream_cutoff.hpp) differs from
// the DAG's (analysis/cutoff.hpp): one of the checks every trace of the model tests goes through
// (trace_builder.hpp's build). Header-only.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analysis/cutoff.hpp"
#include "analysis/stream_cutoff.hpp"
#include "analysis/whatif.hpp"
#include "one_pass_mismatch.hpp"

namespace tasklens::fixtures {

// Counts, over a test binary's run, the depths compared exactly and the recursions whose advice
// the passes gave (a test can check that its traces were not all left out).
struct CutoffStreamingCounts {
  uint64_t depths_compared = 0, depths_not_exact = 0, advice_compared = 0, advice_left_out = 0;
};
inline CutoffStreamingCounts& cutoff_streaming_counts() {
  static CutoffStreamingCounts counts;
  return counts;
}

inline std::string cutoff_level_mismatch(const analysis::CutoffLevel& memory,
                                         const analysis::CutoffLevel& passes) {
  auto median_within = [](uint64_t exact, uint64_t sketched) {
    return sketched <= exact &&
           double(exact - sketched) <= analysis::QuantileSketch::kRelativeError * double(exact);
  };
  if (memory.depth == passes.depth && memory.span == passes.span &&
      memory.burdened_span == passes.burdened_span && memory.tasks_kept == passes.tasks_kept &&
      memory.leaf_tasks == passes.leaf_tasks &&
      memory.leaf_smallest_work == passes.leaf_smallest_work &&
      median_within(memory.leaf_median_work, passes.leaf_median_work) &&
      memory.machine_cost == passes.machine_cost)
    return "";
  auto text = [](const analysis::CutoffLevel& l) {
    return "depth " + std::to_string(l.depth) + " span " + std::to_string(l.span) + " burdened " +
           std::to_string(l.burdened_span) + " kept " + std::to_string(l.tasks_kept) + " leaves " +
           std::to_string(l.leaf_tasks) + " median " + std::to_string(l.leaf_median_work) +
           " smallest " + std::to_string(l.leaf_smallest_work) + " cost " +
           std::to_string(l.machine_cost);
  };
  return text(passes) + " against " + text(memory);
}

// Every depth of every recursion in one pass (where the pass says it is exact), then the advice
// as a whole (the recommended depth, the verdict, the levels shown, the machine's depths), for a
// target the recording's recursion reaches and one it does not.
inline std::string cutoff_streaming_mismatch(const trace::TraceFile& trace, const model::Model& m,
                                             model::BuildOptions options) {
  const std::vector<analysis::Recursion> recursions = analysis::find_recursions(m);
  if (recursions.empty()) return "";
  std::vector<model::SiteKind> kinds;  // as the passes number the sites
  options.place_site = [&kinds](const model::Site& site, uint32_t index, uint32_t) {
    if (kinds.size() <= index) kinds.resize(index + 1, model::SiteKind::Program);
    kinds[index] = site.kind;
    return index;
  };
  const analysis::TaskSiteTest is_task_site = [&kinds](uint32_t site) {
    return site < kinds.size() && kinds[site] == model::SiteKind::Task;
  };
  std::string failure;
  bool unread = false;
  auto read = [&](model::StrandSink& sink) {
    if (!read_one_pass(trace, sink, options, failure)) unread = true;
  };
  const uint64_t per_task = analysis::estimate_task_overhead(m).per_task;
  // Each depth alone, from the passes' own scan and extents.
  analysis::CutoffScan scan(is_task_site);
  read(scan);
  if (unread) return failure;
  std::vector<analysis::Recursion> groups = scan.recursions();
  analysis::CutoffExtents extents_pass(groups, is_task_site, scan.pace());
  read(extents_pass);
  if (unread) return failure;
  const std::vector<analysis::RecursionExtent> extents = extents_pass.extents();
  CutoffStreamingCounts& counts = cutoff_streaming_counts();
  for (const analysis::Recursion& r : recursions) {
    size_t g = 0;
    while (g < groups.size() && groups[g].sites != r.sites) ++g;
    if (g == groups.size()) return "the passes found no recursion of the DAG's sites";
    if (groups[g].tasks != r.tasks || extents[g].max_depth != r.max_depth)
      return "a recursion of " + std::to_string(groups[g].tasks) + " tasks " +
             std::to_string(extents[g].max_depth) + " deep against " + std::to_string(r.tasks) +
             " " + std::to_string(r.max_depth);
    std::vector<uint32_t> cuts;
    for (uint32_t d = 1; d <= r.max_depth; ++d) cuts.push_back(d);
    analysis::StreamCutoffPass pass(groups[g], extents[g], is_task_site, extents_pass.pace(), cuts,
                                    per_task);
    read(pass);
    if (unread) return failure;
    const analysis::StreamCutoffPass::Result result = pass.finish();
    for (size_t k = 0; k < cuts.size(); ++k) {
      if (!result.exact[k]) {
        ++counts.depths_not_exact;
        continue;
      }
      ++counts.depths_compared;
      analysis::CutoffLevel memory = analysis::evaluate_cutoff(m, r, cuts[k], per_task);
      analysis::CutoffLevel passes = result.levels[k];
      passes.tasks_kept = memory.tasks_kept;  // (the driver's: from the extents)
      const std::string differs = cutoff_level_mismatch(memory, passes);
      if (!differs.empty()) return "the one-pass cut-off at depth " + differs;
    }
  }
  // The advice as a whole.
  for (double target : {2.0, 1e9}) {
    const analysis::CutoffMachine machine{2, std::max<uint64_t>(per_task, 1)};
    const analysis::StreamCutoffAdvice passes = analysis::stream_advise_cutoffs(
        scan, read, is_task_site, recursions.size(), target, per_task, machine);
    if (unread) return failure;
    for (const analysis::Recursion& r : recursions) {
      const analysis::CutoffAdvice memory =
          analysis::advise_cutoff(m, r, target, per_task, 2, machine);
      const analysis::CutoffAdvice* one = nullptr;
      for (const analysis::CutoffAdvice& a : passes.cutoffs)
        if (a.recursion.sites == r.sites) one = &a;
      if (!one) {
        ++counts.advice_left_out;
        continue;
      }
      ++counts.advice_compared;
      const std::string say = "the advice in passes (target " + std::to_string(target) + ") ";
      if (one->recommended != memory.recommended || one->verdict != memory.verdict ||
          one->depth_helps != memory.depth_helps || one->fastest != memory.fastest ||
          one->least_cost != memory.least_cost || one->work != memory.work ||
          one->levels.size() != memory.levels.size())
        return say + "recommends " + std::to_string(one->recommended) + " (" +
               analysis::to_string(one->verdict) + ", fastest " + std::to_string(one->fastest) +
               ", work " + std::to_string(one->work) + ", " + std::to_string(one->levels.size()) +
               " levels) against " + std::to_string(memory.recommended) + " (" +
               analysis::to_string(memory.verdict) + ", fastest " + std::to_string(memory.fastest) +
               ", work " + std::to_string(memory.work) + ", " +
               std::to_string(memory.levels.size()) + " levels)";
      for (size_t i = 0; i < memory.levels.size(); ++i) {
        const std::string differs = cutoff_level_mismatch(memory.levels[i], one->levels[i]);
        if (!differs.empty()) return say + "level " + differs;
      }
      const std::string recorded = cutoff_level_mismatch(memory.recorded, one->recorded);
      if (!recorded.empty()) return say + "as recorded: " + recorded;
    }
  }
  return "";
}

}  // namespace tasklens::fixtures
