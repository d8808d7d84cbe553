// Differential analysis (OMP-WHIP: Nagarakatte et al., "A case for parallelism profilers and
// advisers with what-if analyses": "differential analyses to identify regions with secondary
// effects"): two recordings of the same program, typically one thread (the oracle: no
// contention, no false sharing, no lost locality) against P threads, compared unit by unit, so
// that work that grows with the parallel execution shows where it happens and what it costs.
//
// Definitions (pure functions of the two models and of the names the caller gives their units):
//  * Metrics: a recording measures Model::metric and Model::extra_metrics (metric index 0 is the
//    primary one, index 1 + m is extra_metrics[m]; strand s's amount of it is Strand::work or
//    extra_work[m * strands + s]). The diff covers every metric both recordings have, matched by
//    name, in base's order. One of them, the *sort metric* (default: the first), orders the units
//    and decides the threshold below.
//  * Units: the program (every strand); each construct site, as a unit the strands attributed to
//    it (Strand::site: the work directly in the site, not in sites nested in it, as whatif's
//    --site); each code fragment group (the strands running it, Strand::fragment mapped through
//    the caller's group of each fragment, as whatif's --fragment). Units are matched across the
//    recordings by name: the site's label (file:line) and its kind, the fragment group's label
//    (file:L1-L2). Sites (fragment groups) of one recording with the same name are one unit.
//    A name found in one recording only is *unmatched* and listed apart with its work.
//  * Per unit and metric: base and other work (sums over the unit's strands), the ratio other /
//    base (NaN when base's is 0) and the inflation other - base (signed).
//  * Cost on the critical path of a unit's inflation, per metric: other's span (longest path with
//    the metric's amounts as strand weights) minus the span of other with every strand of the unit
//    scaled by base / other work of the unit (each rounded to the nearest integer; base's work 0:
//    the strands weigh 0), the rest unchanged: how much other's critical path would shrink if the
//    unit did in other only the work it did in base. Signed: a unit that shrank (ratio < 1) has a
//    cost <= 0. Also as a percent of other's span. The unit's own work on other's critical path
//    (`critical`) is beside it: a positive cost is at most critical x (1 - base / other), less
//    when the scaling lets another path become the longest (the cost is what the program would
//    gain, not what the unit loses).
//    Computing it: a unit with ratio >= 1 and no strand on the critical path computed for the
//    metric has cost 0 (that path keeps its length and no path grows), and a ratio of exactly 1
//    has cost 0; every other unit costs one longest-path pass, O(V + E).
//  * Program row: the same quantities for all strands; its cost is other's span minus other's
//    span with every strand scaled by base / other program work: the part of the total
//    inflation that lies on the critical path.
//  * Threshold: ratios of units with little work are noise (a 2 us fragment that took 6 us once
//    is a ratio of 3). A unit is *small* when its sort-metric work is below `min_share` of the
//    program's work in base AND in other; small units get no cost (0) and are listed apart,
//    sorted by other's work. A unit that is small in base but not in other (work that appeared
//    with more threads) is not small.
//  * Order: units by cost in the sort metric, descending, then by inflation descending, then by
//    name (sites and fragments in separate lists).
//  * Elapsed: the latest strand end minus the earliest strand start (TSC), 0 without timestamps.
// Cost: O((K + C) (V + E)) for K common metrics and C costed units, plus O(V K) sums.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "model/model.hpp"

namespace tasklens::analysis {

// One recording and the names of its units (the report side symbolizes them).
struct DiffInput {
  const model::Model* model = nullptr;
  std::vector<std::string> site_names;      // per Model::sites index ("fib.c:31", "<program>")
  std::vector<uint32_t> fragment_group;     // per Model::fragments index: its group
  std::vector<std::string> fragment_names;  // per group ("fib.c:31-33")
};

struct DiffOptions {
  double min_share = 0.01;  // see "Threshold" above; 0 keeps every unit
  std::string sort_metric;  // a metric both recordings have; empty: the first common one
};

// The metrics a model measures: Model::metric, then Model::extra_metrics.
std::vector<std::string> metric_names(const model::Model& m);
// The metrics both measure, in base's order.
std::vector<std::string> common_metrics(const model::Model& base, const model::Model& other);
// Strand s's amount of metric `index` (0: Strand::work; 1 + m: extra_work of extra metric m).
uint64_t metric_amount(const model::Model& m, size_t index, uint32_t s);

struct MetricDiff {
  uint64_t base = 0, other = 0;  // work of the unit
  double ratio = 0;              // other / base; NaN when base == 0
  int64_t inflation = 0;         // other - base
  uint64_t critical = 0;         // the unit's work on other's critical path (this metric)
  int64_t cost = 0;              // other's span minus its span with the unit scaled back
  double cost_percent = 0;       // cost / other's span * 100 (0 when the span is 0)
};

enum class DiffUnitKind { Program, Site, Fragment };
const char* to_string(DiffUnitKind kind);

struct UnitDiff {
  DiffUnitKind kind = DiffUnitKind::Site;
  std::string name;                                      // site label or fragment label
  model::SiteKind site_kind = model::SiteKind::Program;  // sites only
  std::vector<uint32_t> base_ids, other_ids;     // site indexes / fragment groups with this name
  uint64_t base_strands = 0, other_strands = 0;  // strands of the unit
  std::vector<MetricDiff> metrics;               // per common metric (Diff::metrics)
  bool small = false;                            // below the threshold: no cost computed
};

// A unit found in one recording only, with its sort-metric work there.
struct UnmatchedUnit {
  DiffUnitKind kind = DiffUnitKind::Site;
  std::string name;
  model::SiteKind site_kind = model::SiteKind::Program;
  std::vector<uint32_t> ids;
  uint64_t work = 0;
};

struct DiffSide {
  uint32_t threads = 0;  // Model::thread_count
  uint32_t workers = 0;  // threads that ran a strand
  uint64_t strands = 0;
  uint64_t tasks = 0;                // Model::task_count
  uint64_t elapsed = 0;              // TSC ticks (see above)
  std::vector<uint64_t> work;        // per common metric
  std::vector<uint64_t> span;        // per common metric
  std::vector<size_t> metric_index;  // per common metric: its index in this model (see above)
};

struct Diff {
  std::vector<std::string> metrics;  // common metrics; empty: nothing to compare
  size_t sort_metric = 0;            // index into metrics
  double min_share = 0;
  DiffSide base, other;
  UnitDiff program;
  std::vector<UnitDiff> sites, fragments;              // above the threshold, sorted (see above)
  std::vector<UnitDiff> small_sites, small_fragments;  // by other's work, descending
  std::vector<UnmatchedUnit> only_base, only_other;    // sites then fragments, by work desc
  // Construct sites (not the program site) in both recordings: 0 means two different programs.
  size_t matched_construct_sites = 0;
};

// Throws std::invalid_argument when the recordings have no metric in common or the sort metric
// is not one of the common metrics (callers check both first and say so to the user).
Diff compute_diff(const DiffInput& base, const DiffInput& other, const DiffOptions& options = {});

// ---- The diff apart from where each recording's figures come from: compute_diff finds them on
// the DAGs in memory, stream_diff.hpp in passes over the recordings.
struct DiffUnitFigures {
  std::string name;
  model::SiteKind site_kind = model::SiteKind::Program;  // sites only
  std::vector<uint32_t> ids;                             // as UnitDiff's
  uint64_t strands = 0;
  std::vector<uint64_t> work;      // per common metric
  std::vector<uint64_t> critical;  // per common metric: its work on the critical path
  std::vector<uint64_t> on_path;   // per common metric: its strands on the critical path
};
struct DiffFigures {
  DiffSide side;
  std::vector<DiffUnitFigures> sites;      // one per (name, kind), in the order first met
  std::vector<DiffUnitFigures> fragments;  // one per name, likewise
};
// The span other would have, in common metric `metric`, with one unit's strands (every strand
// for the program) scaled by base / other (each strand's amount times that, rounded to the
// nearest): what a cost needs. `unit` indexes other's DiffFigures sites or fragments.
struct ScaledSpan {
  DiffUnitKind kind = DiffUnitKind::Program;
  uint32_t unit = 0;
  size_t metric = 0;
  uint64_t base = 0, other = 0;
};
using ScaledSpans = std::function<std::vector<uint64_t>(const std::vector<ScaledSpan>&)>;
// What matches a site unit across recordings: its name and kind.
std::string site_key(const std::string& name, model::SiteKind kind);
// An amount of a unit's strand scaled by base / other (the unit's work in each; other 0: as it
// is), rounded to the nearest: how a cost rescales a unit.
uint64_t scale_amount(uint64_t amount, uint64_t base, uint64_t other);
// The common metrics and the sort metric's index in them (the errors as compute_diff's).
std::pair<std::vector<std::string>, size_t> diff_metrics(const std::vector<std::string>& base,
                                                         const std::vector<std::string>& other,
                                                         const std::string& sort_metric);
// compute_diff's two pieces on a DAG in memory (each builds what it needs): a recording's
// figures, and the spans of other rescaled (the function keeps `other`'s model and input).
DiffFigures dag_diff_figures(const DiffInput& in, const std::vector<std::string>& metrics);
ScaledSpans dag_scaled_spans(const DiffInput& other, const std::vector<std::string>& metrics);
// The diff of two recordings' figures (for `metrics`, the common ones), asking `spans` at once
// for every span a cost needs.
Diff diff_of(const DiffFigures& base, const DiffFigures& other,
             const std::vector<std::string>& metrics, size_t sort_metric,
             const DiffOptions& options, const ScaledSpans& spans);

}  // namespace tasklens::analysis
