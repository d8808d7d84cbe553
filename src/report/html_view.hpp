// `tasklens view`: one self-contained HTML page built from the commands' own JSON (report,
// whatif, advise, sched, tasks: the same renderers, Format::Json) plus one condensed
// "structure" JSON for the construct hierarchy and the per-worker timeline (docs/view.md).
//
// The structure JSON stays small for huge runs:
//  * tree: the construct tree aggregated level by level (DAGViz's collapsed hierarchy).
//    Aggregate 0 is the root node. The children of an aggregate's member nodes are grouped by
//    (site, node kind), each group one child aggregate, listed by their subtrees' work (the
//    heaviest first: analysis/structure.hpp's ConstructTrie). Aggregates
//    are made breadth first; an aggregate whose groups do not fit in the remaining budget
//    (`max_nodes`) gets none and is marked `cut` (its totals still cover its whole subtree).
//    Per aggregate:
//      count     member nodes
//      work      the work of every strand in the members' subtrees (members are disjoint)
//      own_work  the work of the strands whose innermost node is a member
//      strands   strands in the members' subtrees
//      span      the longest member's span: the longest path through a member's strands using
//                only edges between two of them (null when the span budget ran out, below)
//      span_sum  the members' spans added (parallelism = work / span_sum, an instance's average)
//      critical  the work of the program's critical-path strands inside the members' subtrees
//    The spans cost one pass over each member's strand range; they stop (null) once
//    `max_span_visits` strands have been visited in total, so a deep nest cannot go quadratic.
//  * timeline: per worker (thread that ran a timed strand: one with a start time and an end not
//    before it) the strands as slices
//    [begin, end, busy, site, aggregate, strands] with times in TSC ticks from the first
//    strand's start, in time order. With at most `max_slices` timed strands every strand is a
//    slice (busy = end - begin, strands = 1). Otherwise the elapsed time is cut into
//    B = max_slices / workers equal buckets and each worker's strands are merged per bucket:
//    begin/end are the first and last instant a strand ran in the bucket, busy the ticks of
//    strand time in it, strands how many overlapped it, site the site with the most strand time
//    in it and aggregate the one of that site's longest piece in it (analysis/structure.hpp's
//    TimelineSlices, with its tie rules).
//    `aggregate` is the strand's node's aggregate, or its nearest ancestor's when the node's own
//    level was cut.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "analysis/profile.hpp"
#include "analysis/structure.hpp"
#include "model/model.hpp"
#include "report/profile_report.hpp"

namespace tasklens::analysis {
class StreamStructure;
}

namespace tasklens::report {

struct StructureOptions {
  size_t max_nodes = 4000;   // aggregates of the tree
  size_t max_slices = 4000;  // timeline slices, all workers together (before merging)
  uint64_t max_span_visits = 64u << 20;
};

nlohmann::ordered_json structure_json(const model::Model& model, const analysis::Profile& profile,
                                      const std::vector<SiteLabel>& labels, double tsc_hz,
                                      const StructureOptions& options);

// The same JSON from figures computed elsewhere: one pass over the recording
// (analysis/stream_structure.hpp) fills this as structure_json does from the DAG. `model`: its
// sites and metric; `spans`/`span_sums` per aggregate (UINT64_MAX or none: null); `tree_note`:
// what the tree leaves out, said beside it ("note"). The timeline is finished here.
struct StructureInput {
  const model::Model* model = nullptr;
  const std::vector<SiteLabel>* labels = nullptr;
  double tsc_hz = 0;
  uint64_t work = 0, span = 0;
  uint64_t model_nodes = 0;
  const std::vector<analysis::ConstructTrie::Aggregate>* aggregates = nullptr;
  const std::vector<uint32_t>* listed_of = nullptr;  // ConstructTrie::aggregates'
  const std::vector<uint64_t>* spans = nullptr;
  const std::vector<uint64_t>* span_sums = nullptr;
  bool spans_complete = true;
  std::string tree_note;
  uint32_t depth_kept = UINT32_MAX;  // ConstructTrie::depth_limit() when it was capped
  const analysis::TimelineBounds* bounds = nullptr;
  analysis::TimelineSlices* timeline = nullptr;
};
nlohmann::ordered_json structure_json_of(const StructureInput& input,
                                         const StructureOptions& options);
// The input from one pass (`pass`, with `aggregates` and `listed_of` from its trie): the
// groups' spans unknown (the pass holds no DAG), which the tree's note says.
StructureInput one_pass_structure_input(
    const model::Model& model, const std::vector<SiteLabel>& labels, double tsc_hz,
    const analysis::Profile& profile, analysis::StreamStructure& pass,
    const std::vector<analysis::ConstructTrie::Aggregate>& aggregates,
    const std::vector<uint32_t>& listed_of, const analysis::TimelineBounds& bounds);

// One JSON section of one run: `name` is the key the page's scripts look it up by ("profile",
// "whatif", "advise", "sched", "tasks", "structure", ...), `json` the text. A section a run
// cannot have (no timestamps, no tasks) carries {"unavailable": "why"}.
struct ViewSection {
  std::string name;
  std::string json;
};
struct ViewRun {
  std::string label;  // shown above the run's column ("base.tlens")
  std::vector<ViewSection> sections;
};

// {"unavailable": reason} as JSON text.
std::string unavailable_json(const std::string& reason);

// JSON text made safe inside <script type="application/json">: every '<' becomes \u003c (only
// strings can hold one, and the escape means the same there), so no program name can close the
// script element or open a comment in it.
std::string script_safe_json(const std::string& json);

// The page: web/view.html with web/view.css and web/view.js inlined and one script block per
// run and section (id "tl-<run>-<section>"). `title` is escaped as HTML text.
std::string render_html(const std::vector<ViewRun>& runs, const std::string& title);

// `text` escaped for HTML text and attribute values (& < > " ').
std::string html_escape(const std::string& text);

}  // namespace tasklens::report
