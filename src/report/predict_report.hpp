// Renders `tasklens predict`: per thread count P, the time and speedup a work-stealing simulation
// of one recording predicts, the work/span bounds, the measured time of a recording made at P
// (when one was given) and Hoffmann and Rauber's extrapolation from several recordings; as a table,
// CSV or JSON (contract in docs/report-json.md).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "analysis/predict.hpp"
#include "report/profile_report.hpp"

namespace tasklens::report {

struct PredictRecording {
  RunInfo info;
  uint32_t threads = 0;  // workers that ran a strand
  uint64_t elapsed = 0;  // TSC ticks (sched.hpp), as recorded
  // TSC ticks per worker the model took out of the work (tasklens's own cost, preemption): the
  // program's elapsed time is elapsed - removed, what `measured` compares with.
  uint64_t removed = 0;
  uint64_t tasks = 0;
};

struct PredictRow {
  uint32_t threads = 0;
  analysis::SimulationResult simulated;
  double speedup = 0;       // simulated time at 1 / simulated time at P
  double lower_bound = 0;   // max(T1 / P, Tinf), ticks
  double greedy_bound = 0;  // T1 / P + Tinf, ticks
  // The same schedule with every start charged the gap the recording measured for its kind
  // (PredictView::overheads): the recorded workers' contention for the task queues, as if P
  // workers met it too. Only when the headline simulation left it out (contention_removed).
  std::optional<analysis::SimulationResult> with_contention;
  double with_contention_speedup = 0;  // simulated time at 1 / with_contention's time
  std::optional<uint64_t> measured;    // elapsed of a recording at P
  std::optional<double> extrapolated;  // Hoffmann and Rauber's, ticks
  std::optional<double> extrapolated_speedup;
};

struct PredictView {
  std::string metric;
  double tsc_hz = 0;
  std::vector<PredictRecording> recordings;
  size_t simulated_from = 0;      // index into recordings
  analysis::Overheads overheads;  // as measured from the recording's gaps
  // What the simulation charged (analysis::without_contention of `overheads`).
  analysis::Overheads simulated_overheads;
  uint64_t work_ticks = 0, span_ticks = 0;  // T1 and Tinf of the durations
  uint64_t simulated_one = 0;               // the simulation at P = 1
  // What the simulation ran: the strand DAG in memory, or the graph read in one pass and
  // collapsed to a node budget (analysis/stream_predict.hpp).
  struct Graph {
    bool one_pass = false;
    uint64_t strands = 0, nodes = 0;
    uint64_t grain = 0;           // the most ticks collapsed into one node (0: none)
    uint64_t span = 0;            // the graph's longest path, each node run whole (>= span_ticks)
    bool overheads_exact = true;  // false: a class's mean from buckets (GapSketch::exact)
  } graph;
  std::vector<PredictRow> rows;
  std::vector<std::string> notes;
  // The recordings' warnings as `report` gives them (the robust span's clipping, lost events,
  // the host's steal ...), each prefixed by its recording's path when there are several.
  std::vector<std::string> warnings;
};

std::string render_predict(const PredictView& view, Format format);

// The note for a recording of which tasklens took out `removed_share` of the elapsed time (its
// own cost, other processes' preemption): from half of it on, its measured time is mostly an
// estimate. None below half.
std::optional<std::string> removed_time_note(const std::string& path, double removed_share);

// The note for a recording whose workers other threads switched out for a tenth
// (kSwitchedOutPercent) of their strands' work (`work_ticks`: more threads than free CPUs), or else
// of the threads' time anywhere in the run (Model::preempted_in_run: a loaded machine, whose waits
// land in the gaps between strands): the overheads are measured from those gaps, so the predictions
// are pessimistic and move between recordings (`contention_removed`: the predictions charge the
// program's own task costs, so only the `with contention` ones are). None below.
inline constexpr uint64_t kSwitchedOutPercent = 10;
std::optional<std::string> preemption_note(const model::Model& m, uint64_t work_ticks,
                                           bool contention_removed = false);

}  // namespace tasklens::report
