// `tasklens export`: the recorded run as data for other tools. This header has what every format
// needs (ExportRun) and the timeline format; export_dump.hpp has the raw DAG dumps (json, csv).
//
// Perfetto / Chrome Trace Event JSON ("JSON Object Format"; opens in ui.perfetto.dev and
// chrome://tracing), the mapping (docs/export.md has it for users):
//  * {"displayTimeUnit": "ns", "otherData": {facts of the run}, "traceEvents": [...]}.
//  * pid = the recorded process's pid; one tid per worker = the trace thread index. "M" events
//    first: process_name "tasklens: <program>", and for each thread that ran a timed strand
//    thread_name ("main thread" for the initial thread, "worker N" otherwise) and
//    thread_sort_index N.
//  * Each timed strand (export_flows.hpp) is one "X" event on its worker: ts and dur in
//    microseconds with 3 decimals (ns resolution), from TSC ticks through the TSC rate, relative
//    to `origin` (the recording's start); name = the site label and kind of Strand::site
//    ("fib.c:31 task"; the function when the site has no file:line; "<program>" outside every
//    construct), cat = the site kind, args = strand (id), work_<metric> (the strand's work in the
//    metric's unit), node (NodeKind of Strand::node), instance (the node's construct instance,
//    absent for structural nodes), function (of the code the strand ran, else of the site) and
//    fragment (its code fragment, file:L1-L2, when known).
//  * Each flow of compute_flows() is an "s" event on its source slice and an "f" event with
//    "bp": "e" on its destination slice, with the same id (unique: the rank of its "s" event), name
//    and cat (the flow kind: spawn, join, dependence, barrier, continuation). The "s" is at the
//    source's last nanosecond (its start when shorter), the "f" at the destination's start: both
//    inside the slice they bind to, and in time order.
//  * Preemption by other processes (from the trace; the tsc metric removed it from the work): an
//    "X" event "preempted" (cat "preemption") per interval on a track of its own per worker,
//    tid kPreemptionTidBase + thread, named "worker N: preempted".
//  * Events are sorted by ts; at equal ts a slice comes before its own flow events, and a slice
//    that starts with a longer one after it.
// The text is streamed (ExportWriter): memory is O(strands + flows) for the sort, not O(text).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "model/model.hpp"
#include "report/export_timeline.hpp"
#include "report/export_writer.hpp"
#include "report/profile_report.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::report {

inline constexpr uint32_t kPreemptionTidBase = 1000000;

// One recording as the exporters need it.
struct ExportRun {
  const model::Model* model = nullptr;
  const std::vector<SiteLabel>* labels = nullptr;  // per site
  const FragmentLabels* fragments = nullptr;       // may be null: no fragment labels
  RunInfo info;
  double tsc_hz = 0;    // TSC ticks per second; 0: unknown (timestamps are then taken as ns)
  uint64_t origin = 0;  // TSC of ts 0; 0: the earliest start of a timed strand
  // Per trace thread index: 1 for the program's initial thread (ompt_thread_initial), else 2.
  std::vector<uint32_t> thread_types;
  std::vector<uint64_t> os_tids;  // per trace thread index, 0 if unknown
  // Per trace thread index: intervals [from, to) of TSC ticks when another process had
  // preempted the thread.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> preemptions;
};

// Counts of what was written (the e2e tests and the bench check them).
struct PerfettoStats {
  uint64_t slices = 0;
  uint64_t flows = 0;
  uint64_t tracks = 0;  // worker tracks (threads with a slice)
  uint64_t preemption_slices = 0;
};

// The whole run from the DAG in memory.
PerfettoStats write_perfetto(const ExportRun& run, ExportWriter& out);
// A timeline made before (export_timeline.hpp: from the DAG or one pass, maybe a window of the
// run); `run.model` gives the run's facts and sites, not its strands. Time 0 is `run.origin`, or
// the timeline's first start when 0.
PerfettoStats write_perfetto(const ExportRun& run, const Timeline& timeline, ExportWriter& out);

}  // namespace tasklens::report
