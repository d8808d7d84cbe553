// The parallelism profile of TaskProf (Yoga and Nagarakatte, "A fast causal profiler for task
// parallel programs"): work, span, parallelism for the whole program and per
// construct site, with each site's exclusive share of the critical path.
//
// Definitions (TaskProf's profile, generalized from a series-parallel tree to a DAG):
//  * An instance of a site is the set of nodes with that Node::site sharing one Node::instance
//    id (a node with a site but instance == kNone is an instance by itself). Its strands are the
//    union of its nodes' strand ranges.
//  * An instance is outermost when none of its nodes lies inside (Node::parent chain) a node of a
//    different instance of the same site. Only outermost instances add to a site's work and span,
//    so recursion (every fib task has the same site) is not double counted: no site's work
//    exceeds the program's.
//  * An instance's span is the longest path through its own strands, using only the predecessor
//    edges whose two ends both belong to the instance. Strands of loop iterations seen only
//    together (Model::divisible) weigh one iteration on paths, as in longest_path.
//  * If no node carries site 0 (the Program site), the root node stands for its one instance.
//  * Zero work: parallelism is 0 (never NaN), and every critical_path_percent is 0, so the
//    percents sum to 100 only when the span is positive.
// Cost: O(V + E) for the program, plus one pass over the strands of each site's outermost
// instances (about V times the number of distinct sites nested along a path).
#pragma once

#include <cstdint>
#include <vector>

#include "model/model.hpp"

namespace tasklens::analysis {

struct SiteRow {
  uint32_t site = 0;           // index into Model::sites
  uint64_t count = 0;          // instances of the site (all of them, nested ones included)
  uint64_t work = 0;           // work of the outermost instances (recursion is not double counted)
  uint64_t span = 0;           // sum of the spans of the outermost instances
  double parallelism = 0;      // work / span (0 when span is 0)
  uint64_t critical_work = 0;  // work of critical-path strands attributed directly here
  double critical_path_percent = 0;  // critical_work / program span * 100 (exclusive; sums to 100)
};

struct Profile {
  uint64_t work = 0;
  uint64_t span = 0;
  double parallelism = 0;
  std::vector<uint32_t> critical_path;  // strand ids, in order from first to last
  // One row per site that has an instance or has strands attributed to it (Strand::site).
  // Sorted by critical_path_percent desc, then work desc, then site index.
  std::vector<SiteRow> sites;
};

// Longest weighted path through the strand DAG (weights: Strand::work). Returns the span and,
// if `path` is not null, fills it with the strands of one longest path in topological order.
// The path starts at a strand without predecessors and ends at one without successors (of the
// strands ending a longest path, the one with the largest id is chosen, so zero-work join strands
// at the end are included). Empty model: returns 0 and an empty path.
// `span_weights` (one per strand), when given, replaces Strand::work as the weight of a strand
// on paths: the what-if analyses change how long a strand takes on the critical path.
// Either way a strand of loop iterations seen only together (Model::divisible) weighs one
// iteration's share of its weight (iteration_span): a loop's span is its longest iteration, not
// the longest share of the team it was recorded with.
uint64_t longest_path(const model::Model& model, std::vector<uint32_t>* path = nullptr,
                      const uint64_t* span_weights = nullptr);

// The weight strand s has on a path when its own weight is `weight`: one iteration's share for a
// strand of loop iterations seen only together (Model::divisible), else `weight`. For the shares
// of a critical path (the strands of a longest path, summed this way, give its span).
uint64_t path_weight(const model::Model& model, uint32_t s, uint64_t weight);

// Per-strand weights of a what-if: `work` counts in work sums, `span` along paths. Both have
// one entry per strand. (Parallelizing a strand k ways keeps its work and divides its span.)
struct Weights {
  std::vector<uint64_t> work;
  std::vector<uint64_t> span;
};

// For every node with a site: does it lie inside (Node::parent chain) a node of a different
// instance of the same site? 1 for such nodes: their instances are not outermost.
std::vector<uint8_t> nested_nodes(const model::Model& model, uint32_t num_sites);

// Fills profile.sites from the per-site sums (`rows`, indexed by site; those with present[x]
// become rows): each row's site, parallelism and share of profile.span, in Profile::sites' order
// (critical_work desc, which is critical_path_percent's order without its rounding, then work
// desc, then site index).
void finish_site_rows(Profile& profile, const std::vector<SiteRow>& rows,
                      const std::vector<uint8_t>& present);

// The profile of the recorded run, or of a what-if when `weights` is given (critical_work is
// then measured in span weight, so the exclusive percents still add up to 100).
// Models of `shared_sites_from` strands or more have their sites measured on two threads
// (smaller ones are not worth a second thread's scratch arrays); the result is the same either way,
// which the tests check by passing 0.
inline constexpr uint32_t kSharedSitesFrom = uint32_t{1} << 20;
Profile compute_profile(const model::Model& model, const Weights* weights = nullptr,
                        uint32_t shared_sites_from = kSharedSitesFrom);

}  // namespace tasklens::analysis
