// `tasklens export --format json|csv`: the recorded DAG and construct tree as raw data, for other
// tools (the contracts, field by field, are in docs/export.md; fields are only ever added).
//  * json: one object with the run's facts (metric, TSC rate, threads), then arrays of sites
//    (with their labels), fragments, nodes and strands, in model order (model.hpp's invariants
//    hold: strand ids are a topological order, nodes are in preorder). kNone is null.
//  * csv: a header line, then one row per strand (in id order) with its node, site and fragment
//    resolved to labels and its predecessors as a space-separated list of strand ids.
// Both are streamed (ExportWriter).
#pragma once

#include "report/export_perfetto.hpp"

namespace tasklens::report {

void write_dag_json(const ExportRun& run, ExportWriter& out);
void write_strands_csv(const ExportRun& run, ExportWriter& out);

}  // namespace tasklens::report
