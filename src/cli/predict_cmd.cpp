#include "cli/predict_cmd.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <future>
#include <map>
#include <memory>
#include <optional>
#include <thread>

#include "analysis/predict.hpp"
#include "analysis/sched.hpp"
#include "analysis/stream_predict.hpp"
#include "analysis/stream_robust.hpp"
#include "analysis/stream_tasks.hpp"
#include "analysis/tasks.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/progress.hpp"
#include "load/recording.hpp"
#include "model/builder.hpp"
#include "report/predict_report.hpp"
#include "report/tasks_report.hpp"

namespace tasklens::cli {
namespace {

struct Run {
  std::unique_ptr<trace::TraceFile> trace;
  model::Model model;  // read in one pass: the run's facts, no DAG
  std::vector<report::SiteLabel> labels;
  report::RunInfo info;
  // Read in one pass (analysis/stream_predict.hpp): the simulator's graph (dropped once another
  // recording has fewer workers) and the task profile the extrapolation needs.
  std::unique_ptr<analysis::StreamPredict::Result> streamed;
  std::unique_ptr<analysis::StreamTasks> stream_tasks;
  analysis::TaskOptions task_options;
  uint32_t workers = 0;
  uint64_t elapsed = 0;
  // What the model took out, over the elapsed time as recorded (may exceed 1 when the removals
  // are inconsistent with the elapsed time: a recording too disturbed to time the program).
  double removed_share = 0;
  report::PredictRecording recording;
  analysis::ExtrapolationInput input;
};

void read_dag(Run& r, const std::string& path, load::SpanMode mode) {
  load::Loaded l = load::load(path, mode);
  r.info = load::run_info_of(l);
  r.trace = std::move(l.trace);
  r.model = std::move(l.model);
  r.labels = std::move(l.labels);
  // The workers and the elapsed time as `sched` counts them, without its sweep.
  const analysis::Timeline tl = analysis::timeline_of(r.model);
  r.workers = static_cast<uint32_t>(tl.threads.size());
  r.elapsed = r.workers && tl.last > tl.first ? tl.last - tl.first : 0;
}

// What the one-pass reading holds per node at its peak: the graph (SimGraph: a 40-byte node and
// its predecessors) and the simulator's arrays while it builds them from the graph, renumbered
// (about 3 strands per task; at most --max-nodes nodes).
constexpr uint64_t kBytesPerNode = 160;

// The grain the one-pass reading starts with: none when the recording's strands (about 3 per
// task) fit in the budget (then it simulates them as recorded, the DAG's prediction); else a
// quarter of each node's share of the most work the recording can hold (its threads times its
// elapsed time), so that the waits' collapsed subtrees (StreamPredict::merge_region) stay well
// within the budget: a grain found too small later grows, collapsing what was read by a coarser
// rule that lets successors wait for whole nodes.
uint64_t first_grain(const trace::TraceFile& trace, uint32_t max_nodes) {
  if (!trace.has_finish() || trace.finish().end_tsc <= trace.header().start_tsc) return 0;
  if (3 * trace.finish().tasks_created <= max_nodes) return 0;
  const uint64_t most_work =
      (trace.finish().end_tsc - trace.header().start_tsc) * std::max(1u, trace.stream_count());
  return most_work / 4 / max_nodes;
}

// Read without the DAG: in one pass, after the robust span's passes decided which strands to
// clip (load::clipping_in_passes; none with --raw-span): the simulated strands' works clipped as
// read_dag's model has them.
void read_in_passes(Run& r, const std::string& path, load::SpanMode mode, uint32_t max_nodes,
                    bool task_types) {
  const load::StreamClipping clip = load::clipping_in_passes(path, mode);
  std::unique_ptr<analysis::StreamPredict> sink;
  std::optional<analysis::ClippingSink> clipped;
  load::Streamed st = load::read_in_one_pass(
      path, "simulating from",
      [&](const report::SitesAsTheyCome&, const trace::TraceFile& trace) -> model::StrandSink& {
        if (task_types) {
          r.task_options = analysis::default_task_options(
              model::metric_of(trace), model::task_cost_of(trace), trace.tsc_hz(), 12);
          r.stream_tasks = std::make_unique<analysis::StreamTasks>(r.task_options.tiny_size);
        }
        sink = std::make_unique<analysis::StreamPredict>(
            max_nodes, model::metric_of(trace) == "tsc", trace.stream_count(), r.stream_tasks.get(),
            first_grain(trace, max_nodes));
        return analysis::through_clipping(clipped, *sink, clip.clipping, clip.fragments);
      },
      0, kBytesPerNode, max_nodes);
  load::add_clipping_warning(st.model, clip.clipping);
  r.info = report::run_info(*st.trace);
  r.info.span_mode = clip.robust ? "robust" : "raw";
  r.trace = std::move(st.trace);
  r.model = std::move(st.model);
  r.labels = std::move(st.labels);
  r.streamed = std::make_unique<analysis::StreamPredict::Result>(sink->finish());
  r.workers = r.streamed->workers;
  r.elapsed =
      r.workers && r.streamed->last > r.streamed->first ? r.streamed->last - r.streamed->first : 0;
}

std::unique_ptr<Run> load_run(const std::string& path, load::SpanMode mode, bool stream,
                              uint32_t max_nodes, bool task_types) {
  auto r = std::make_unique<Run>();
  if (stream)
    read_in_passes(*r, path, mode, max_nodes, task_types);
  else
    read_dag(*r, path, mode);
  const model::Model& m = r->model;
  if (r->elapsed == 0)
    throw UsageError(path +
                     ": the trace was recorded without timestamps (no strand has a start and end "
                     "time): predictions need them; record it again with `tasklens record`");
  r->recording.info = r->info;
  r->recording.threads = r->workers;
  r->recording.elapsed = r->elapsed;
  r->recording.tasks = m.task_count;
  // The recording ran slower than the program does: what the model took out of the work as
  // tasklens's own cost (its per-event cost, its waits for buffers), as other processes'
  // preemption and as slow page faults, per worker, is not the program's time either. Blocked
  // time stays: the program sleeps or waits just as long without tasklens.
  const uint64_t removed =
      (m.probe_removed + m.recorder_stalled + m.preempted + m.slow_faults) / r->workers;
  r->removed_share = double(removed) / double(r->elapsed);
  r->recording.removed = std::min(removed, r->elapsed - 1);  // elapsed > 0 (checked above)
  r->elapsed -= r->recording.removed;

  r->input.threads = r->workers;
  r->input.elapsed = r->elapsed;
  return r;
}

// What the extrapolation (after Hoffmann and Rauber) needs: per task type, count, mean size and
// mean idle time (in TSC ticks), and the time outside the task pool. (Only with several recordings:
// the task profile of a million tasks costs about a second.)
void add_task_types(Run& run) {
  Run* r = &run;
  const model::Model& m = r->model;
  const double hz = r->trace->tsc_hz();
  analysis::TaskOptions options = r->task_options;
  if (!r->stream_tasks) options = analysis::default_task_options(m, hz);
  const analysis::TaskProfile tp =
      r->stream_tasks ? r->stream_tasks->finish(m, options) : analysis::compute_tasks(m, options);
  const std::vector<std::string> keys = report::task_type_keys(m, r->labels);
  const double to_ticks = options.ticks_to_work > 0 ? 1.0 / options.ticks_to_work : 1.0;
  double task_time = 0;
  std::map<std::string, size_t> seen;
  for (const analysis::TaskType& t : tp.types) {
    analysis::ExtrapolationInput::Type x;
    x.key = keys[t.site] + (t.chunks ? "|chunks" : "");
    x.count = double(t.size.samples);
    x.mean_size = t.size.mean * to_ticks;
    x.mean_idle = t.idle.mean;
    task_time += x.count * (x.mean_size + x.mean_idle);
    // A key naming several types of one recording (a site merged by location): add them up.
    if (auto it = seen.find(x.key); it != seen.end()) {
      analysis::ExtrapolationInput::Type& y = r->input.types[it->second];
      const double n = y.count + x.count;
      if (n > 0) {
        y.mean_size = (y.mean_size * y.count + x.mean_size * x.count) / n;
        y.mean_idle = (y.mean_idle * y.count + x.mean_idle * x.count) / n;
      }
      y.count = n;
      continue;
    }
    seen[x.key] = r->input.types.size();
    r->input.types.push_back(x);
  }
  const double per_thread = task_time / std::max<uint32_t>(1, r->input.threads);
  r->input.serial = per_thread < double(r->input.elapsed)
                        ? static_cast<uint64_t>(double(r->input.elapsed) - per_thread)
                        : 0;
}

// T1 and Tinf of the durations (the longest path weighs loop iterations seen only together as
// one iteration, as the profile does).
std::pair<uint64_t, uint64_t> work_and_span(const model::Model& m,
                                            const std::vector<uint64_t>& dur) {
  uint64_t work = 0;
  for (uint64_t d : dur) work += d;
  return {work, analysis::longest_path(m, nullptr, dur.data())};
}

// What the one-pass reading simulated, and how far collapsing it can move the prediction.
// `robust`: the simulating pass came after the robust span's (its strands clipped as the DAG's).
std::string one_pass_note(const report::PredictView& v, bool robust) {
  const report::PredictView::Graph& g = v.graph;
  const char* read = robust ? "read in passes (--stream, or its DAG does not fit in the memory: "
                              "the robust span's clipping first, then one pass simulating)"
                            : "read in one pass (--stream, or its DAG does not fit in the memory)";
  if (g.grain == 0)
    return fmt::format(
        "{}: simulated on the {} strands as recorded, each join a node of its own: the DAG's "
        "prediction{}",
        read, g.strands,
        g.overheads_exact ? ""
                          : " (with more than a million gaps of 2^16 ticks or more of one kind, "
                            "the overheads' means were taken from buckets, within 1%)");
  const double longer =
      v.span_ticks ? 100.0 * (double(g.span) - double(v.span_ticks)) / double(v.span_ticks) : 0;
  return fmt::format(
      "{}: the {} strands were simulated as {} nodes, each a strand or strands run one after "
      "another by one worker (at most {} each; more with --max-nodes); that makes the longest "
      "path {} instead of {} ({:+.2f}%), by which the greedy bound T1/P + Tinf, and about as "
      "much the predictions, may grow",
      read, g.strands, g.nodes, report::format_amount(double(g.grain), v.tsc_hz),
      report::format_amount(double(g.span), v.tsc_hz),
      report::format_amount(double(v.span_ticks), v.tsc_hz), longer);
}

}  // namespace

std::vector<uint32_t> parse_thread_list(const std::string& text) {
  std::vector<uint32_t> out;
  size_t pos = 0;
  while (pos <= text.size()) {
    const size_t comma = std::min(text.find(',', pos), text.size());
    const std::string item = text.substr(pos, comma - pos);
    char* end = nullptr;
    const long v = item.empty() ? 0 : std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 1 || v > 4096)
      throw UsageError(fmt::format(
          "--threads {}: '{}' is not a thread count; give numbers from 1 to 4096 separated by "
          "commas, for example --threads 1,2,4,8",
          text, item));
    out.push_back(static_cast<uint32_t>(v));
    pos = comma + 1;
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

void run_predict(const PredictOptions& opt) {
  const report::Format format = parse_format(opt.format);
  const std::vector<uint32_t> threads = parse_thread_list(opt.threads);
  std::vector<std::string> paths = opt.traces;
  if (paths.empty()) paths.push_back("tasklens.data");
  // Every recording's model is held at once; when they do not fit, each is read in one pass.
  bool stream = opt.stream;
  if (!stream) {
    try {
      load::check_models_fit_together(paths);
    } catch (const OutOfMemoryError&) {
      stream = true;
    }
  }
  std::vector<std::unique_ptr<Run>> runs;
  const auto read_all = [&] {
    runs.clear();
    for (const std::string& p : paths) {
      runs.push_back(
          load_run(p, load::span_mode(opt.raw_span), stream, opt.max_nodes, paths.size() >= 2));
      // Only the recording with the fewest workers is simulated: drop the other graphs.
      if (stream && runs.size() >= 2) {
        Run& last = *runs.back();
        for (auto& r : runs)
          if (r.get() != &last && r->streamed) {
            Run& keep = r->workers <= last.workers ? *r : last;
            Run& drop = &keep == r.get() ? last : *r;
            drop.streamed->graph = analysis::SimGraph{};
          }
      }
    }
  };
  if (opt.stream) {
    read_all();  // (what one pass cannot read is said as such)
  } else {
    try {
      if (!stream) read_all();
    } catch (const OutOfMemoryError&) {
      stream = true;  // one did not fit after all
    }
    if (stream) {  // the DAGs do not fit: every recording in one pass
      try {
        read_all();
      } catch (const model::NotInOnePass& e) {
        throw OutOfMemoryError(paths[runs.size()] + ": " + not_in_one_pass_words(e));
      }
    }
  }
  if (runs.size() >= 2)
    for (auto& r : runs) add_task_types(*r);

  // Several recordings: one program, one metric, distinct thread counts.
  for (size_t i = 1; i < runs.size(); ++i) {
    const Run &a = *runs[0], &b = *runs[i];
    if (a.model.metric != b.model.metric)
      throw UsageError(fmt::format(
          "predict: {} measures {} and {} measures {}: record both with the same --metric",
          paths[0], a.model.metric, paths[i], b.model.metric));
    for (size_t k = 0; k < i; ++k)
      if (runs[k]->input.threads == b.input.threads)
        throw UsageError(fmt::format(
            "predict: {} and {} were both recorded with {} worker{}: the extrapolation needs one "
            "recording per thread count (OMP_NUM_THREADS=1, 2, 4 ...)",
            paths[k], paths[i], b.input.threads, b.input.threads == 1 ? "" : "s"));
    bool common = false;
    for (const auto& t : b.input.types)
      for (const auto& u : a.input.types) common = common || t.key == u.key;
    if (!common)
      throw UsageError(fmt::format(
          "predict: {} ({}) and {} ({}) have no task type in common: not recordings of one "
          "program",
          paths[0], report::basename_of(a.recording.info.program), paths[i],
          report::basename_of(b.recording.info.program)));
  }

  // Simulate the recording with the fewest workers: the least disturbed by contention.
  size_t from = 0;
  for (size_t i = 1; i < runs.size(); ++i)
    if (runs[i]->input.threads < runs[from]->input.threads) from = i;
  Run& simulated_run = *runs[from];
  const model::Model& m = simulated_run.model;
  report::PredictView view;
  view.metric = m.metric;
  view.tsc_hz = simulated_run.trace->tsc_hz();
  for (const auto& r : runs) view.recordings.push_back(r->recording);
  view.simulated_from = from;
  std::unique_ptr<analysis::Simulator> simulator;
  if (simulated_run.streamed) {
    analysis::StreamPredict::Result& g = *simulated_run.streamed;
    view.overheads = g.overheads;
    analysis::finish_overheads(view.overheads, m, g.timed_strands, g.workers);
    view.work_ticks = g.work;
    view.span_ticks = g.span;
    view.graph = {true,    g.strands,        g.graph.nodes.size(),
                  g.grain, g.collapsed_span, g.overheads_exact};
    load::Progress::global().phase("simulating " + paths[from]);
    simulator = std::make_unique<analysis::Simulator>(g.graph);
    g.graph = analysis::SimGraph{};
    view.notes.push_back(one_pass_note(view, simulated_run.info.span_mode == "robust"));
  } else {
    // The overheads are measured while the simulator is set up (both read the model only).
    std::future<analysis::Overheads> overheads =
        std::async(std::launch::async, [&m] { return analysis::measure_overheads(m); });
    const std::vector<uint64_t> dur = analysis::strand_durations(m);
    std::tie(view.work_ticks, view.span_ticks) = work_and_span(m, dur);
    simulator = std::make_unique<analysis::Simulator>(m, dur);
    view.overheads = overheads.get();
    view.graph = {false, m.strands.size(), m.strands.size(), 0, view.span_ticks};
  }
  if (!view.overheads.steal.measured)
    view.notes.push_back(
        runs[from]->workers == 1
            ? "steal cost not measured (the recording has one worker): taken to be the spawn "
              "cost; a recording with 2 workers or more measures it"
            : "steal cost not measured (no strand was taken by another worker in the "
              "recording): taken to be the spawn cost");
  // A recording whose elapsed time is mostly what tasklens took out measures little of the
  // program's own time: its `measured` is an estimate, which the user must know before comparing.
  for (size_t i = 0; i < runs.size(); ++i)
    if (auto note = report::removed_time_note(paths[i], runs[i]->removed_share))
      view.notes.push_back(*note);
  view.simulated_overheads = analysis::without_contention(view.overheads);
  const bool contention_removed = view.simulated_overheads.contention_removed;
  if (auto note = report::preemption_note(m, view.work_ticks, contention_removed))
    view.notes.push_back(*note);
  if (contention_removed) {
    const analysis::Overheads& o = view.overheads;
    view.notes.push_back(fmt::format(
        "every task is charged {}, what a task costs this program's runtime on one thread "
        "(measured by `record`), and every steal {}; not the gaps between strands above: on "
        "this recording's {} workers a spawned task waited {} to start ({:.1f} times the "
        "one-thread cost), and such gaps hold the workers' contention for the runtime's task "
        "queues, which changes from one run, build and machine to the next. The `with "
        "contention` columns charge those gaps at every start on P workers: expect them if "
        "your machine's workers contend as these did",
        report::format_amount(o.one_worker_task, view.tsc_hz),
        report::format_amount(view.simulated_overheads.steal.ticks, view.tsc_hz),
        runs[from]->workers, report::format_amount(o.spawn.ticks, view.tsc_hz),
        o.spawn.ticks / o.one_worker_task));
  }
  if (view.overheads.inside > 0)
    view.notes.push_back(fmt::format(
        "each overhead includes {:.0f} TSC ticks per strand of the OpenMP runtime's own cost "
        "that the work excludes (timed on empty tasks after the run)",
        view.overheads.inside));
  else if (runs[from]->workers == 1 && view.overheads.spawn.ticks < 1 &&
           view.overheads.sync.ticks < 1)
    view.notes.push_back(
        "one worker runs each task the moment it is created and returns from a taskwait at once: "
        "the runtime's cost of creating, starting and waiting for tasks is inside the strands' "
        "work, so the overheads show 0 and every prediction counts that cost once per task as "
        "work");
  if (m.metric != "tsc")
    view.notes.push_back("the metric is " + m.metric +
                         ": strand durations are their recorded start-to-end times");
  if (!m.loops_have_chunks)
    view.notes.push_back(
        "loops were recorded without chunks (one strand per thread's share): each share is "
        "taken as an even part of the loop's iterations");
  if (simulated_run.streamed ? simulated_run.streamed->divisible > 0 : !m.divisible.empty())
    view.notes.push_back(
        "loop iterations seen only together (a thread's share of a static loop, a chunk) are "
        "split evenly among the workers, as a static schedule on that many threads would");

  std::vector<analysis::ExtrapolationInput> inputs;
  for (const auto& r : runs) inputs.push_back(r->input);
  std::sort(inputs.begin(), inputs.end(),
            [](const auto& a, const auto& b) { return a.threads < b.threads; });
  std::optional<double> extrapolated_one;
  if (inputs.size() >= 2) {
    extrapolated_one = analysis::extrapolate(inputs, 1).time;
    if (inputs[0].threads == 1) extrapolated_one = double(inputs[0].elapsed);
  }

  // The simulations are independent: run them on every core (a million tasks take a few tenths
  // of a second each).
  // The largest counts first (they take longest); one worker is always simulated: the speedups'
  // base.
  std::vector<uint32_t> counts = threads;
  if (counts.front() != 1) counts.insert(counts.begin(), 1);
  // Each count with the program's costs, and with the recorded contention when those differ
  // (at 1 worker both are the one-thread task cost).
  std::vector<analysis::SimulationResult> by_count(counts.size()), contended(counts.size());
  {
    const size_t jobs = contention_removed ? 2 * counts.size() : counts.size();
    std::atomic<size_t> next{0};
    const auto worker = [&] {
      for (size_t k; (k = next.fetch_add(1)) < jobs;) {
        const size_t i = counts.size() - 1 - k % counts.size();
        if (k < counts.size())
          by_count[i] = simulator->run(counts[i], view.simulated_overheads);
        else
          contended[i] = simulator->run(counts[i], view.overheads);
      }
    };
    const size_t helpers =
        std::min<size_t>(jobs, std::max(1u, std::thread::hardware_concurrency())) - 1;
    std::vector<std::thread> pool;
    for (size_t i = 0; i < helpers; ++i) pool.emplace_back(worker);
    worker();
    for (std::thread& t : pool) t.join();
  }
  view.simulated_one = by_count.front().time;
  std::vector<analysis::SimulationResult> simulated(
      by_count.end() - static_cast<std::ptrdiff_t>(threads.size()), by_count.end());
  std::string raised;  // thread counts whose extrapolation was raised to the 1-thread time / P
  for (size_t i = 0; i < threads.size(); ++i) {
    const uint32_t p = threads[i];
    report::PredictRow row;
    row.threads = p;
    row.simulated = simulated[i];
    row.speedup = row.simulated.time ? double(view.simulated_one) / double(row.simulated.time) : 0;
    if (contention_removed) {
      row.with_contention = contended[counts.size() - threads.size() + i];
      if (row.with_contention->time)
        row.with_contention_speedup =
            double(view.simulated_one) / double(row.with_contention->time);
    }
    row.lower_bound = std::max(double(view.work_ticks) / p, double(view.span_ticks));
    row.greedy_bound = double(view.work_ticks) / p + double(view.span_ticks);
    for (const auto& r : runs)
      if (r->input.threads == p) row.measured = r->input.elapsed;
    if (inputs.size() >= 2) {
      row.extrapolated = analysis::extrapolate(inputs, p).time;
      // No schedule of P threads takes less than the one-thread time over P: the model's lines
      // can cross that when the task sizes they extrapolate shrink with P.
      if (*row.extrapolated < *extrapolated_one / p) {
        row.extrapolated = *extrapolated_one / p;
        raised += (raised.empty() ? "" : ", ") + std::to_string(p);
      }
      if (*row.extrapolated > 0) row.extrapolated_speedup = *extrapolated_one / *row.extrapolated;
    }
    view.rows.push_back(row);
  }
  if (!raised.empty()) {
    view.notes.push_back("the extrapolation at " + raised +
                         " threads gave a speedup above the thread count (its task sizes shrink "
                         "with the threads); it is shown at the 1-thread time over the threads");
  }
  std::string below;
  for (const report::PredictRow& row : view.rows)
    if (row.extrapolated && *row.extrapolated < row.lower_bound * 0.999)
      below += (below.empty() ? "" : ", ") + std::to_string(row.threads);
  if (!below.empty()) {
    view.notes.push_back("the extrapolation at " + below +
                         " threads is below the lower bound max(T1/P, Tinf): its model scales task "
                         "times without the critical path; trust the simulation there");
  }
  for (size_t i = 0; i < runs.size(); ++i)
    for (const std::string& w : runs[i]->model.warnings)
      view.warnings.push_back(runs.size() == 1 ? w : paths[i] + ": " + w);
  warn_beside_csv(format, view.warnings);
  write_and_exit(report::render_predict(view, format));
}

}  // namespace tasklens::cli
