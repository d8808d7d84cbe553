// What the report says about loops beside their work and span: which loops were modelled from
// iterations seen only together, how unevenly a static schedule's shares ran, and which parallel
// regions ran no construct tasklens could see (their parallelism is the team they were recorded
// with).
//
// Definitions (over model::Model):
//  * A loop site's strands seen together: the strands of Model::divisible attributed to the
//    site (Strand::site); `iterations_together` sums their iterations. A loop with none was seen
//    chunk by chunk (a dynamic schedule with chunk 1 shows every iteration).
//  * Static shares: a loop instance (Node::instance of its Loop nodes) of two or more threads
//    where each thread's Loop node holds exactly one strand of Model::divisible (its share of a
//    static schedule, or of a loop without dispatch events). Its imbalance: with t_i = w_i / c_i
//    the time per iteration of share i (work w_i, iterations c_i) scaled to the mean share's
//    iterations, (max t_i - mean t_i) / mean t_i. A site's `share_imbalance` sums, over its
//    static instances, (max - mean) and divides by the sum of the means: the part of the loop's
//    time the team spent waiting for its slowest share. Shares of equal iterations that differ
//    in time are a property of the program's data, which a dynamic schedule evens out.
//  * A team-bound region: a Phase of a parallel region whose implicit tasks are each one strand
//    with no construct inside (no loop, task, single ... that the runtime reported). Its threads
//    split the work among themselves (code such as `omp_get_thread_num()`, or a loop gcc
//    compiled with a static schedule: gcc computes those shares inline, without calling the
//    runtime), so its parallelism is at most the team it was recorded with. A parallel site's
//    `team_bound_work` is the work of such phases; `team` the largest team they had.
// Cost: O(nodes + strands).
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.hpp"

namespace tasklens::analysis {

struct LoopFacts {
  uint32_t site = 0;
  uint64_t strands_together = 0;     // strands of Model::divisible attributed to the site
  uint64_t iterations_together = 0;  // their iterations
  uint64_t static_instances = 0;     // instances with static shares (above)
  double share_imbalance = 0;        // (see above); 0 without static instances
  uint64_t team_bound_work = 0;      // parallel sites: work of team-bound phases
  uint32_t team = 0;                 // the largest team of those phases
};

// One entry per site with something to say (sorted by site index).
std::vector<LoopFacts> loop_facts(const model::Model& model);
// The facts of every site, indexed by site (sites without any: all zero).
std::vector<LoopFacts> loop_facts_by_site(const model::Model& model);

// A region's team-bound phases count when they hold at least this share of its work: below it
// they are the code every thread runs around the region's constructs, not its work.
inline constexpr double kTeamBoundShare = 0.10;
// Static shares whose slowest one took this much longer than the mean are worth a note: the rest
// of the team then waited a tenth of the loop's time or more.
inline constexpr double kImbalanceNote = 0.10;

// A region (of work `region_work`) whose team-bound phases hold kTeamBoundShare of it or more.
bool team_bound(const LoopFacts& facts, uint64_t region_work);

}  // namespace tasklens::analysis
