// The OpenMP runtime's own cost between the recorder's events, measured after the program by
// running tasklens-runtime-calibration (src/launch/calibration_program.c: empty tasks and loops)
// under the same runtime and recorder, and appended to the program's trace as a RuntimeCost
// record (trace/format.hpp). The model takes it out of the strands, so that the work is the
// program's own and T1 - work the runtime's tasking overhead.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "model/builder.hpp"
#include "trace/format.hpp"

namespace tasklens::launch {

struct RuntimeCalibration {
  std::vector<trace::RuntimeCostEntry> entries;  // empty: not measured (`why` says why)
  uint32_t samples = 0;                          // intervals timed
  uint64_t tasks = 0;                            // tasks the calibration ran
  std::string why;
  // What a task costs as a whole on one thread, measured without the recorder
  // (trace::TaskCost); pico_per_task 0: not measured (`task_cost_why` says why).
  trace::TaskCost task_cost{};
  std::string task_cost_why;
};

// The calibration program next to the recorder (the build tree, or lib/tasklens when installed),
// built with gcc for a program that loaded libgomp, else with clang; empty if there is none.
std::string find_calibration_program(const std::string& recorder_lib, bool gcc);

// Runs `program` with `preload` (the recorder, then the runtime) into a scratch trace in `dir`,
// and measures the runtime's cost per kind of interval. Never throws; gives up after 20 s.
RuntimeCalibration calibrate_runtime(const std::string& program, const std::string& preload,
                                     const std::string& dir);

// The medians of each kind of interval that has at least `min_samples` of them (the record's
// entries, sorted by kind).
std::vector<trace::RuntimeCostEntry> runtime_cost_entries(
    std::vector<model::IntervalSample> samples, uint32_t min_samples);

// Runs `program` with TASKLENS_TASK_COST_OUT (its empty-task recursion against its serial
// elision, calibration_program.c), with only `runtime` preloaded (the program's OpenMP runtime, or
// empty) and no OMPT tool, and reads what a task costs. Never throws; gives up after 20 s.
trace::TaskCost measure_task_cost(const std::string& program, const std::string& runtime,
                                  const std::string& dir, std::string* why);

// The task cost a cached calibration holds, measured again: `measure()` once (one run of
// measure_task_cost); when that is more than 10% below `cached`, twice more, and the median of the
// three replaces `cached` if it is more than 10% below it too. A calibration made while the
// machine was busy (other programs on its CPUs make every round of every measure slower) would
// otherwise stay for a week, and a busy machine only lengthens a measure. Returns `cached` when
// it stands (or a measure fails).
trace::TaskCost task_cost_again(const trace::TaskCost& cached,
                                const std::function<trace::TaskCost()>& measure);

// Several calibrations as one: per kind of interval, the least of their medians (the machine at
// its fastest: the model scales a calibration down to a faster run, never up), kept when at
// least half of them measured it.
RuntimeCalibration combine_calibrations(const std::vector<RuntimeCalibration>& runs);

// The calibration for this program's runtime on this machine: from the cache (TASKLENS_CACHE_DIR,
// else $XDG_CACHE_HOME/tasklens, else ~/.cache/tasklens) when one younger than a week was made
// with the same calibration program, preloaded libraries (size and time of each), CPU model,
// number of usable CPUs (up to 4) and OMP_* / KMP_* settings; else three calibrations combined
// and three measures of the task cost (their median), then stored there (`fresh` forces that).
// A cached task cost is measured again once (task_cost_again).
// Recordings of one machine and runtime then take the same measure out, and pay for it once.
// `runtime` is the program's runtime alone (`preload` without the recorder), for the task cost.
RuntimeCalibration cached_calibration(const std::string& program, const std::string& preload,
                                      const std::string& runtime, const std::string& scratch_dir,
                                      bool fresh);

// Appends `c` to the trace at `path` as a RuntimeCost record, and its task cost (if measured) as
// a TaskCost record; the bytes appended, or -1 (errno set) if it could not.
int64_t append_runtime_cost(const std::string& path, const RuntimeCalibration& c);

// oneTBB's task cost: tasklens-tbb-calibration next to the recorder (empty if there is none),
// and what it measures (src/launch/tbb_calibration_program.cpp: an empty task_group recursion
// on one thread against its serial elision), the median of three runs (pico_per_task 0: not
// measured, `why` says why). Appended as a TaskCost record alone (append_task_cost).
std::string find_tbb_calibration_program(const std::string& recorder_lib);
trace::TaskCost measure_tbb_task_cost(const std::string& program, const std::string& dir,
                                      std::string* why);
int64_t append_task_cost(const std::string& path, const trace::TaskCost& cost);

}  // namespace tasklens::launch
