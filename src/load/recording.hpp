// Loading a recording for the reader commands: the trace, its model with symbolized (and
// merged) sites, the robust span's clipping, and the inputs several commands share (the
// diagnosis's, the differential analysis's). Every reader command (report, whatif, advise,
// tasks, sched, predict, diff, export, view) starts here.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <string>
#include <vector>

#include "analysis/diagnosis.hpp"
#include "analysis/diff.hpp"
#include "analysis/robust.hpp"
#include "analysis/sched.hpp"
#include "analysis/tasks.hpp"
#include "model/model.hpp"
#include "model/strand_sink.hpp"
#include "report/profile_report.hpp"
#include "report/whatif_report.hpp"
#include "trace/reader.hpp"

namespace tasklens::model {
class ChunkTap;  // model/sink_thread.hpp
}

namespace tasklens::load {

// How the commands that compute a span load the model. Robust: strands far longer than the
// rest of their code fragment (a paused machine, page faults, interrupts) are clipped to the
// fragment's median (analysis/robust.hpp), so that one disturbed strand cannot decide the
// critical path. Raw (--raw-span, and the commands that show the run as measured: tasks, sched,
// export): every strand as measured.
enum class SpanMode { Robust, Raw };
SpanMode span_mode(bool raw_span);

// How every reader command builds its models (flags common to them all, set by main()).
struct ModelSettings {
  bool blocked_as_work = false;    // --blocked-as-work (model::BuildOptions::blocked_as_work)
  bool keep_slow_faults = false;   // --keep-slow-faults (model::BuildOptions::keep_slow_faults)
  bool keep_runtime_cost = false;  // --keep-runtime-cost (model::BuildOptions::keep_runtime_cost)
};
ModelSettings& model_settings();

// A trace, its model with symbolized (and merged) sites, and the warnings of what the
// recording could not see. load() throws the trace's and the model's typed errors, and
// OutOfMemoryError when the model cannot fit in the memory the machine gives (before building
// it, rather than meet the kernel's out-of-memory killer).
struct Loaded {
  std::unique_ptr<trace::TraceFile> trace;
  model::Model model;
  std::vector<report::SiteLabel> labels;
  analysis::Clipping clipping;  // what the robust mode clipped (nothing in Raw mode)
  bool robust = false;          // the outlier rule was applied (Robust mode, a metric it judges)
};
Loaded load(const std::string& path, SpanMode mode = SpanMode::Raw);

// A recording read in passes (model::build_streaming into analysis::StreamProfile): its
// profile, with memory that follows what the run had live rather than its task count, for a
// recording whose DAG does not fit in memory (or `report --stream`). The model has the sites
// and the run's facts, no DAG; the profile has no critical path of strands (its site shares are
// there). Raw: one pass, the span as measured. Robust: the same clipping as load()'s, exactly
// (analysis/stream_robust.hpp): one pass when no strand is above the rule's floor, two when none
// is clipped, three otherwise; one, through the clipping an earlier reading kept
// (load/clipping_cache.hpp). Throws as load() does, and model::ModelError for the constructs
// build_streaming cannot read yet.
struct Streamed {
  std::unique_ptr<trace::TraceFile> trace;
  model::Model model;
  std::vector<report::SiteLabel> labels;
  std::vector<std::string> fragment_labels;     // by Model::fragments index (file:first-last)
  std::vector<std::string> fragment_functions;  // by Model::fragments index (may be empty)
  analysis::Profile profile;
  // Robust mode: what was clipped (ClippedStrand::strand the order strands are handed over in)
  // and each clipped strand's fragment; `measured` the program's figures as measured.
  analysis::Clipping clipping;
  std::vector<uint32_t> clipped_fragments;
  analysis::SpanFigures measured;
  bool robust = false;
  // The clipping was the one kept for this recording (load/clipping_cache.hpp): one pass fewer.
  bool clipping_kept = false;
};
Streamed load_streaming(const std::string& path, SpanMode mode = SpanMode::Raw);
// The robust rule's clipping of a recording read in passes, decided before a caller's own passes
// (which then each read through an analysis::ClippingSink): the census's pass, and a refining
// one when it cannot decide; no pass at all when an earlier reading kept its decision
// (load/clipping_cache.hpp). Nothing (robust false) in Raw mode or for a metric the rule does not
// judge.
struct StreamClipping {
  analysis::Clipping clipping;
  std::vector<uint32_t> fragments;  // per clipped strand
  bool robust = false;
  // With `measure_profile`, in Robust mode: the work, span and parallelism as measured, from a
  // profile beside the census (so that a caller's later passes need not hold one more profile).
  analysis::SpanFigures measured;
};
StreamClipping clipping_in_passes(const std::string& path, SpanMode mode,
                                  bool measure_profile = false);
// Adds the warning a model gets when the robust rule clipped strands (none when it clipped none),
// whatever the reading (load(), the readings in passes).
void add_clipping_warning(model::Model& model, const analysis::Clipping& clipping);
// The same pass into another sink: `make_sink` is called once the trace is open, with the sites'
// labels and the trace (its header and records: the events are still to read); the labels grow as
// the pass meets the sites (a sink may read a site's label from its first strand on). The result
// has no profile: the sink holds what it computed. `reading` names the pass on the progress line
// ("finding the critical path of", "weighing the what-ifs of").
// `sink_bytes`: what the sink holds whatever the recording's size, in the memory the pass needs;
// `sink_bytes_per_strand`: what it holds per strand, up to `sink_strands_cap` strands (the
// strands estimated from the trace's task count).
using SinkMaker =
    std::function<model::StrandSink&(const report::SitesAsTheyCome&, const trace::TraceFile&)>;
Streamed read_in_one_pass(const std::string& path, const std::string& reading,
                          const SinkMaker& make_sink, uint64_t sink_bytes = 0,
                          uint64_t sink_bytes_per_strand = 0, uint64_t sink_strands_cap = 0,
                          model::ChunkTap* sink_tap = nullptr);
// read_in_one_pass with the robust span (analysis/stream_robust.hpp) in Robust mode: the census
// beside `make_sink`'s sink, and, when strands are clipped, `make_sink` called again for a fresh
// sink that gets them clipped (one more pass, and one before it when the census cannot decide).
// The result is the last pass's reading, with `clipping`, `clipped_fragments` and `robust` set
// and the clipping's warning; the last sink made holds the robust figures.
// The decision is kept between commands (load/clipping_cache.hpp): a recording read before with
// the same build and settings is read once, through the kept clipping (`clipping_kept`; with
// `need_measured`, only a decision kept with the figures as measured, then in `measured`).
// `replayable`: `make_sink`'s sinks use neither its `sites` nor its trace during their pass (they
// may be given the last pass's); the pass with the strands clipped then plays the first pass's
// calls back from a temporary file (load/sink_spool.hpp) instead of reading the trace again,
// when that file fitted in its budget.
Streamed read_with_robust_span(const std::string& path, const std::string& reading, SpanMode mode,
                               const SinkMaker& make_sink, bool need_measured = false,
                               bool replayable = false);
// A recording read in several passes (advise, diff) is read alike each time: a pass numbers the
// sites and the code fragments as the first did, and the figures of one pass are used with the
// units of another. Throws UsageError when `again` met other sites or fragments than `first`
// (the file changed between the passes).
void check_read_alike(const Streamed& first, const Streamed& again);

// Throws OutOfMemoryError (exit code 6) when the trace's model cannot fit in the memory budget
// (platform::memory_budget), judged from a lower bound of what the model needs. `tasks`: the
// Finish record's task count (0 without one); `event_bytes`: the event blocks' raw sizes. load()
// checks a regular file from its record headers (TraceFile::scan) before it reads the trace,
// whose events alone can be larger than the memory, and a pipe (which cannot be scanned) from
// the trace it read.
void check_model_fits(uint64_t tasks, uint64_t event_bytes, const std::string& path);
void check_model_fits(const trace::TraceFile& trace, const std::string& path);
// The same for recordings held at once (`diff` holds two models, `predict` one per recording):
// throws OutOfMemoryError when their models together cannot fit, judged from the record headers
// of those that are regular files (each is still checked alone as it is read). Checked one by
// one as they loaded, each passed against the memory free before the others were built.
void check_models_fit_together(const std::vector<std::string>& paths);

// The run's facts for the renderers, with span_mode ("robust" or "raw") set.
report::RunInfo run_info_of(const Loaded& loaded);
// The robust profile's account of what it clipped (the figures as measured; the clipped
// strands' fragments named), for render_profile. `measured_span`: the span as measured if the
// caller started computing it (analysis::measured_span), else computed here.
report::SpanAccount span_account(const Loaded& loaded, const analysis::Profile& profile,
                                 std::future<uint64_t>* measured_span = nullptr);

// What the diagnosis (analysis/diagnosis.hpp) needs beside the profile, computed from the
// loaded model alone (so that it can run beside the profile): the code fragments' labels (their
// groups for the analysis, their names for report/diagnosis_report.hpp), the task types and the
// schedule.
struct Diagnosed {
  report::FragmentLabels fragments;
  std::vector<analysis::TypeSizes> task_sizes;
  uint64_t tiny_size = 0;
  // `view` only (`full`): the schedule and the task types, which its page shows anyway.
  analysis::Schedule schedule;
  analysis::TaskProfile tasks;
};
Diagnosed diagnosis_inputs(const Loaded& loaded, bool full = false);
// The findings (analysis::diagnose, for this machine's parallelism target); `base`: the
// comparison with a base recording (`report --base`), or null. report::diagnosis_items words
// them.
std::vector<analysis::DiagnosisFinding> diagnose(const Loaded& loaded,
                                                 const analysis::Profile& profile,
                                                 const report::SpanAccount& account,
                                                 const Diagnosed& inputs,
                                                 const analysis::Diff* base = nullptr);

// The differential analysis' input of one loaded recording (its units named by their labels).
analysis::DiffInput diff_input(const Loaded& loaded, const report::FragmentLabels& fragments);

}  // namespace tasklens::load
