// `tasklens <command>`: record is a launcher; the other commands read a trace.
// Every error becomes one line on stderr ("tasklens: ...") and a non-zero exit code.
#include <fmt/format.h>
#include <malloc.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <cstdio>
#include <limits>
#include <string>

#include "cli/advise_cmd.hpp"
#include "cli/command_support.hpp"
#include "cli/diff_cmd.hpp"
#include "cli/export_cmd.hpp"
#include "cli/predict_cmd.hpp"
#include "cli/record_cmd.hpp"
#include "cli/record_repeat.hpp"
#include "cli/report_cmd.hpp"
#include "cli/sched_cmd.hpp"
#include "cli/tasks_cmd.hpp"
#include "cli/view_cmd.hpp"
#include "cli/whatif_cmd.hpp"
#include "errors.hpp"
#include "load/progress.hpp"
#include "load/recording.hpp"
#include "load/timings.hpp"
#include "model/builder.hpp"
#include "symbols/symbolizer.hpp"
#include "trace/reader.hpp"

namespace tasklens::cli {
namespace {

// The commands that compute a span take the robust model by default (load/recording.hpp).
constexpr const char* kRawSpanHelp =
    "Count every strand's work as measured. By default a strand far longer than the rest of its "
    "code fragment (a paused machine, page faults, interrupts) is counted at the fragment's "
    "median, so that one disturbance cannot decide the span (docs/robust-span.md)";

int run(int argc, char** argv) {
  std::vector<std::string> library_paths;  // --library-path of the reader commands
  CLI::App app{
      "tasklens: a parallelism profiler for OpenMP and oneTBB programs.\n"
      "Record a run of an unmodified program, then see its work, span (critical path) and\n"
      "parallelism for the whole program and for every construct site.\n\n"
      "  tasklens record -- ./app args     # writes tasklens.data\n"
      "  tasklens report                    # parallelism profile of tasklens.data\n"
      "  tasklens whatif --list             # what could be sped up\n"
      "  tasklens whatif --site fib.c:12    # parallelism if that task body were faster\n"
      "  tasklens advise                    # what to optimize to reach 8 x cores\n"
      "  tasklens tasks                     # task sizes and waiting times per task type\n"
      "  tasklens sched                     # work, delay, no-work; parallelism over time\n"
      "  tasklens predict                   # predicted time and speedup on 1..64 cores\n"
      "  tasklens export -o run.json        # timeline for ui.perfetto.dev (or --format "
      "json|csv)\n"
      "  tasklens diff one.tlens four.tlens # work inflation per site (1 thread against 4)\n"
      "  tasklens view                      # all of it as one HTML file (tasklens.html)\n",
      "tasklens"};
  app.set_version_flag("--version", std::string("tasklens ") + TASKLENS_VERSION);
  app.require_subcommand(1);

  RecordOptions rec;
  CLI::App* record = app.add_subcommand(
      "record",
      "Run a program and record its OpenMP or oneTBB execution into a trace file.\n"
      "Works on unmodified binaries built with clang -fopenmp or gcc -fopenmp: they run under\n"
      "LLVM 16's OpenMP runtime (preloaded) so that loop chunks are seen; and on unmodified\n"
      "binaries linked with Debian's oneTBB (-ltbb), or built with include/tasklens/tbb.h for\n"
      "exact call sites and loop chunks. The program's input, output, exit code and signals\n"
      "pass through unchanged; a summary line goes to stderr. An existing output file is kept\n"
      "as <file>.old.");
  record->add_option("-o,--output", rec.output, "Trace file to write")->capture_default_str();
  record
      ->add_option("--metric", rec.metric,
                   "Work metric: auto (default: cycles where the machine has hardware counters, "
                   "tsc otherwise), tsc (time-stamp counter), cycles, instructions, task-clock "
                   "(CPU time through perf, a syscall per event), or a comma-separated list of "
                   "perf's names (tsc,task-clock,page-faults; cycles,instructions,cache-misses): "
                   "the first is the report's metric, the others are recorded beside it")
      ->capture_default_str();
  record->add_option("--runtime", rec.runtime,
                     "OpenMP runtime to preload (path of a libomp.so.5), or 'program' to use the "
                     "program's own (default: the bundled LLVM 16 libomp)");
  record->add_option("--flush-ms", rec.flush_ms,
                     "How often buffered events reach the file, in ms (default 100); bounds what "
                     "a killed program loses");
  record
      ->add_option("--compression", rec.compression,
                   "How the trace's event blocks are compressed: zstd (the default, the "
                   "smaller files), lz4 (less CPU where the recorder compresses while the "
                   "program runs) or none")
      ->capture_default_str();
  record->add_flag("--no-runtime-calibration", rec.no_runtime_calibration,
                   "Do not take the OpenMP runtime's own cost out of the work (it is timed on "
                   "empty tasks once per machine and runtime, a tenth of a second): its cost of "
                   "creating, starting and joining tasks then stays in the work");
  record->add_flag("--recalibrate", rec.recalibrate,
                   "Time the OpenMP runtime's own cost again (three runs of empty tasks) instead "
                   "of taking the measure cached for this machine and runtime (kept a week in "
                   "TASKLENS_CACHE_DIR, else ~/.cache/tasklens)");
  record->add_option("--repeat", rec.repeat,
                     "Record the program N times in a row (2 to 100) and say how far its "
                     "parallelism moves from one run to the next: each recording is kept as "
                     "<output>.1, .2 ... (the number before the extension), and the output file "
                     "is the median one. A run that fails stops the series");
  record->add_option("command", rec.command, "The program and its arguments (after --)")
      ->required();
  record->allow_extras(false);
  record->positionals_at_end();

  ReportOptions rep;
  CLI::App* report = app.add_subcommand(
      "report",
      "Print the parallelism profile of a trace: the whole program's work, span and\n"
      "parallelism, then every construct site (file:line) sorted by its share of the\n"
      "critical path. Work is in the metric's unit (TSC ticks shown as time).");
  report->add_option("trace", rep.trace, "Trace file")->capture_default_str();
  report->add_option("--format", rep.format, "table, csv or json")->capture_default_str();
  report->add_option("--top", rep.top, "Show only the first N sites (table default: 20)");
  report->add_flag("--raw-span", rep.raw_span, kRawSpanHelp);
  report->add_option("--base", rep.base,
                     "A recording of the same program to compare with (typically with "
                     "OMP_NUM_THREADS=1): the diagnosis then says where work grows with the "
                     "threads (contention, false sharing), as `tasklens diff` does in full");
  report->add_flag(
      "--stream", rep.stream,
      "Read the recording in passes, with memory that follows what the run had live (the\n"
      "recursion's depth times the threads) rather than its task count: the same profile and\n"
      "robust span, without the diagnosis. One pass when no strand is far longer than the rest\n"
      "of its code, three when some are clipped (--raw-span: always one), one again when an\n"
      "earlier reading kept its clipping (in ~/.cache/tasklens; TASKLENS_CACHE=off: none).\n"
      "report does this by itself when the DAG does not fit in memory.\n"
      "For OpenMP tasks (depend included), taskwait, taskgroup, taskloops, parallel regions,\n"
      "barriers, worksharing loops, sections, single and masked, and user regions");

  WhatIfOptions wi;
  CLI::App* whatif = app.add_subcommand(
      "whatif",
      "What-if (causal) profile: how the program's work, span and parallelism would change if\n"
      "chosen code became k times faster, from the one recording. Units: user regions\n"
      "(TASKLENS_REGION_BEGIN/END), construct sites (the task body spawned at file:line, a\n"
      "loop's chunks) and code fragments (the code between two runtime events, file:L1-L2).\n"
      "Each unit is evaluated alone and all together at every factor, then the profile after\n"
      "all of them at the largest finite factor is shown. A unit may carry its own factor\n"
      "(--site fib.c:12=4). --list shows the units of the trace.");
  whatif->add_option("trace", wi.trace, "Trace file")->capture_default_str();
  whatif->add_option("--region", wi.regions, "User region NAME[=FACTOR] (repeatable)")
      ->allow_extra_args(false);
  whatif->add_option("--site", wi.sites, "Construct site file:line[=FACTOR] (repeatable)")
      ->allow_extra_args(false);
  whatif
      ->add_option("--fragment", wi.fragments,
                   "Code fragment file:L1-L2[=FACTOR] (repeatable; see --list)")
      ->allow_extra_args(false);
  whatif->add_option("--factors", wi.factors, "Factors to evaluate (numbers >= 1, or inf)")
      ->capture_default_str();
  whatif
      ->add_option("--mode", wi.mode,
                   "parallelize: the unit is split k ways (work unchanged, its time on every "
                   "path / k); speedup: its code becomes k times faster (work and time / k)")
      ->capture_default_str();
  whatif->add_option("--format", wi.format, "table, csv or json")->capture_default_str();
  whatif->add_option("--top", wi.top, "Rows of the profile after the what-if (table: 20)");
  whatif->add_flag("--list", wi.list, "List the regions, sites and fragments of the trace");
  whatif->add_flag("--raw-span", wi.raw_span, kRawSpanHelp);
  whatif->add_flag(
      "--stream", wi.stream,
      "Read the recording in passes, as `report --stream` does (memory that follows what the\n"
      "run had live, not its task count), with every kind of unit and the robust span (a second\n"
      "pass when strands are clipped; --raw-span: one). whatif does this by itself when the DAG\n"
      "does not fit in memory");

  AdviseOptions ad;
  CLI::App* advise = app.add_subcommand(
      "advise",
      "Adviser: repeatedly take the code fragment with the most work on the current critical\n"
      "path, apply a what-if to it (parallelize it --factor ways) and recompute, until the\n"
      "parallelism reaches the target, the candidate does less than K times the tasking\n"
      "overhead per strand (the overhead is estimated from the trace), nothing is left, or\n"
      "--max-steps. Prints each step and the burdened parallelism (every task start charged\n"
      "the tasking overhead, as Cilkview does). Then, for each recursion of tasks (task sites\n"
      "nested in each other), the cut-off depth to write for the target: the shallowest whose\n"
      "tasks still give it, computed from the recorded DAG.");
  advise->add_option("trace", ad.trace, "Trace file")->capture_default_str();
  advise->add_option("--target", ad.target,
                     "Target parallelism (default: 8 x the cores of this machine, or the threads "
                     "recorded if more)");
  advise->add_option("--max-steps", ad.max_steps, "Most steps to take")->capture_default_str();
  advise->add_option("--factor", ad.factor,
                     "What-if factor of each step (default: the target parallelism)");
  advise
      ->add_option("--k", ad.k,
                   "Stop at a candidate doing less than K x the tasking overhead per strand")
      ->capture_default_str();
  advise->add_option("--mode", ad.mode, "parallelize or speedup (see whatif)")
      ->capture_default_str();
  advise->add_option("--format", ad.format, "table, csv or json")->capture_default_str();
  advise->add_flag("--raw-span", ad.raw_span, kRawSpanHelp);
  advise->add_flag(
      "--stream", ad.stream,
      "Read the recording in one pass per step, as `report --stream` reads it (memory that\n"
      "follows what the run had live, not its task count), after one for the robust span\n"
      "(--raw-span: none): the same steps and burdened figures, and the cut-off advice by depth\n"
      "in a few passes more (not the size cut-off or the grouped form). advise does this by\n"
      "itself when the DAG does not fit in memory");

  TasksOptions tk;
  CLI::App* tasks = app.add_subcommand(
      "tasks",
      "Task sizes and waiting times per task type (spawn site; a loop's chunks count as tasks\n"
      "of the loop's site): count, total, mean, median and p90 size, log2 histograms of the\n"
      "sizes, of the waiting times (from ready to start) and of the workers' idle time before\n"
      "each task, and what they say (many tiny tasks: overhead; waiting longer than running:\n"
      "not enough parallelism or too few workers; few large tasks: imbalance). Given two\n"
      "recordings of the same program (base other, say 1 and 4 threads), compares the task\n"
      "sizes per type instead: tasks that grow with more threads point at contention.");
  tasks->add_option("traces", tk.traces, "Trace file (default tasklens.data), or two: base other");
  tasks->add_option("--bins", tk.bins, "Most bins per histogram (log2 of time)")
      ->capture_default_str();
  tasks->add_option("--format", tk.format, "table, csv or json")->capture_default_str();
  tasks->add_option("--top", tk.top, "Show only the first N task types (table default: 10)");
  tasks->add_flag(
      "--stream", tk.stream,
      "Read the recording in one pass, as `report --stream` does (memory that follows the task\n"
      "types, not the task count): medians and 90th percentiles to within 0.8%, the rest exact.\n"
      "tasks does this by itself when the DAG does not fit in memory");

  SchedOptions sc;
  CLI::App* sched = app.add_subcommand(
      "sched",
      "Scheduling delays: the cumulative time P x elapsed (P workers, elapsed from\n"
      "the first strand's start to the last one's end) split per worker into work (running a\n"
      "strand), delay (idle while a ready strand waited), no-work-sched (idle with nothing\n"
      "ready while the ready path waited for a worker) and no-work-app (idle, the program had\n"
      "nothing ready); T1, T-infinity and the greedy bound T1/P + T-infinity beside the observed\n"
      "time; the running and ready parallelism over time (sparklines; a time series in csv and\n"
      "json).");
  sched->add_option("trace", sc.trace, "Trace file")->capture_default_str();
  sched->add_option("--format", sc.format, "table, csv or json")->capture_default_str();
  sched->add_option("--points", sc.points, "Points of the time series (csv/json)")
      ->capture_default_str();
  sched->add_flag(
      "--stream", sc.stream,
      "Read the recording in one pass, as `report --stream` does (memory that follows what the\n"
      "run had live, not its task count; the strands' times wait on disk, in $TMPDIR, to be\n"
      "swept in time order): the same figures. sched does this by itself when the DAG does not\n"
      "fit in memory");

  PredictOptions pr;
  CLI::App* predict = app.add_subcommand(
      "predict",
      "Predicted time and speedup on P cores: a greedy work-stealing schedule of the recorded\n"
      "DAG simulated on P workers, each strand start charged the runtime overhead measured in\n"
      "the trace (spawn, steal, sync), with the work/span bounds beside it. Given recordings at\n"
      "several thread counts (OMP_NUM_THREADS=1, 2, 4 ...), also an extrapolation of task sizes\n"
      "and idle times (after Hoffmann and Rauber), and the measured time where a recording has\n"
      "that count.");
  predict->add_option("traces", pr.traces, "Trace files (default tasklens.data)");
  predict->add_option("--threads", pr.threads, "Thread counts to predict, comma-separated")
      ->capture_default_str();
  predict->add_option("--format", pr.format, "table, csv or json")->capture_default_str();
  predict->add_flag("--raw-span", pr.raw_span, kRawSpanHelp);
  predict->add_flag(
      "--stream", pr.stream,
      "Read the recordings in one pass, as `report --stream` does (memory bounded whatever the\n"
      "task count; the robust span's clipping takes a pass first, --raw-span: none): the\n"
      "simulation runs on a graph of at most --max-nodes nodes, strands\n"
      "collapsed into nodes run by one worker when there are more; the output says by how much\n"
      "that can move the predictions. predict does this by itself when the DAGs do not fit in\n"
      "memory");
  predict
      ->add_option("--max-nodes", pr.max_nodes,
                   "The most nodes the one-pass reading simulates (its memory grows with them)")
      ->capture_default_str()
      ->check(CLI::Range(16u, 1u << 30));
  ExportOptions ex;
  CLI::App* exp = app.add_subcommand(
      "export",
      "Export the recorded run for other tools. perfetto (default): Chrome Trace Event JSON that\n"
      "opens in ui.perfetto.dev and chrome://tracing: one track per worker, each strand a slice\n"
      "named by its construct site, arrows for spawns, joins, dependences and barriers. json:\n"
      "the DAG of strands and the construct tree. csv: one row per strand. Contracts:\n"
      "docs/export.md.");
  exp->add_option("trace", ex.trace, "Trace file")->capture_default_str();
  exp->add_option("--format", ex.format, "perfetto, json or csv")->capture_default_str();
  exp->add_option("-o,--output", ex.output, "File to write (default, or -: standard output)");
  exp->add_option("--window", ex.window,
                  "perfetto: only the slices of a part of the run, FROM:TO since the recording's "
                  "start with a unit (1.2s:1.5s, 300ms:, :40ms), and the arrows between them");
  exp->add_flag("--stream", ex.stream,
                "perfetto: read the recording in one pass, holding no DAG (as export does by "
                "itself when the DAG does not fit in the memory): the same timeline, its "
                "strands numbered in the order the pass met them");
  ViewOptions vw;
  CLI::App* view = app.add_subcommand(
      "view",
      "Write one self-contained HTML file (no network needed to open it) with every view of a\n"
      "trace: the sortable profile, what-if curves and the adviser's steps, running and ready\n"
      "parallelism over time, a per-worker timeline, the construct hierarchy (expands level by\n"
      "level), task size and waiting time histograms and the scheduling breakdown. --compare\n"
      "shows a second recording side by side. What-if units as in `tasklens whatif` (default:\n"
      "the user regions and the sites with most of the critical path).");
  view->add_option("trace", vw.trace, "Trace file")->capture_default_str();
  view->add_option("-o,--output", vw.output, "HTML file to write (- for standard output)")
      ->capture_default_str();
  view->add_option("--compare", vw.compare, "A second trace to show beside the first");
  view->add_option("--whatif", vw.whatif,
                   "What-if unit UNIT[=FACTOR] (repeatable): a code fragment file:L1-L2, a "
                   "construct site file:line, else a user region; or say it with region:, site:, "
                   "fragment:")
      ->allow_extra_args(false);
  view->add_option("--region", vw.regions, "What-if: user region NAME[=FACTOR] (repeatable)")
      ->allow_extra_args(false);
  view->add_option("--site", vw.sites, "What-if: construct site file:line[=FACTOR] (repeatable)")
      ->allow_extra_args(false);
  view->add_option("--fragment", vw.fragments, "What-if: code fragment file:L1-L2[=FACTOR]")
      ->allow_extra_args(false);
  view->add_option("--factors", vw.factors, "What-if factors (numbers >= 1, or inf)")
      ->capture_default_str();
  view->add_option("--mode", vw.mode, "What-if mode: parallelize or speedup")
      ->capture_default_str();
  view->add_option("--tree-nodes", vw.tree_nodes,
                   "Most aggregated nodes of the construct hierarchy (deeper levels are cut)")
      ->capture_default_str();
  view->add_option("--slices", vw.slices,
                   "Most timeline slices; beyond, strands merge into time buckets per worker")
      ->capture_default_str();
  view->add_flag("--raw-span", vw.raw_span, kRawSpanHelp);
  view->add_flag("--stream", vw.stream,
                 "Read the recordings in passes, holding no DAG (as view does by itself when "
                 "they do not fit in the memory): the same page, without the diagnosis or the "
                 "construct groups' spans (the robust span's clipping takes a pass first; "
                 "--raw-span: none)");
  DiffOptions df;
  CLI::App* diff = app.add_subcommand(
      "diff",
      "Differential analysis (as in OMP-WHIP): two recordings of the same program, typically 1\n"
      "thread (the oracle) against P threads. For the whole program, each construct site and\n"
      "each code fragment: the work in base and in other, their ratio and the inflation, for\n"
      "every metric both recordings have, sorted by the inflation's cost on other's critical\n"
      "path (how much shorter it would be if the unit did only base's work). Secondary\n"
      "effects of parallel execution (contention, false sharing, lost locality) show where\n"
      "they happen. Units under --min-share of the work in both are set apart as noise.");
  diff->add_option("traces", df.traces, "Two trace files: base other");
  diff->add_option("--format", df.format, "table, csv or json")->capture_default_str();
  diff->add_option("--top", df.top, "Rows per list (table default: 15)");
  diff->add_option("--min-share", df.min_share,
                   "Percent of the program's work under which a unit (in both recordings) is "
                   "noise and set apart")
      ->capture_default_str();
  diff->add_option("--metric", df.metric,
                   "The metric that sorts and decides the threshold (default: the first both "
                   "recordings have)");
  diff->add_flag("--raw-span", df.raw_span, kRawSpanHelp);
  diff->add_flag(
      "--stream", df.stream,
      "Read the recordings in passes, as `report --stream` reads one (memory that follows what\n"
      "the runs had live, not their task counts): each recording once (twice when the robust\n"
      "span clips strands; --raw-span: once), then other once more for the costs. diff does\n"
      "this by itself when the two DAGs do not fit in memory together");

  // Every command that reads traces builds their models the same way.
  for (CLI::App* sub : {report, whatif, advise, tasks, sched, predict, exp, view, diff})
    sub->add_option("--library-path", library_paths,
                    "Code under this path is a library's, not the program's (repeatable; an "
                    "absolute path is a prefix, another name a directory anywhere in a path): a "
                    "construct created in it is shown at the program's line that called it. "
                    "System directories (/usr/include ...) and oneTBB's and the C++ library's "
                    "headers always are; TASKLENS_LIBRARY_PATH adds more (colon separated)")
        ->allow_extra_args(false);
  for (CLI::App* sub : {report, whatif, advise, tasks, sched, predict, exp, view, diff})
    sub->add_flag("--blocked-as-work", load::model_settings().blocked_as_work,
                  "Count the time a thread spent blocked inside a task (sleeping, waiting for "
                  "I/O or a lock the runtime does not see) as work, as wall time would; by "
                  "default it is taken out, since a blocked thread does no work");
  for (CLI::App* sub : {report, whatif, advise, tasks, sched, predict, exp, view, diff})
    sub->add_flag("--keep-slow-faults", load::model_settings().keep_slow_faults,
                  "Count the time of page faults that took far longer than the thread's usual "
                  "ones as work; by default the part beyond a usual fault is taken out, like "
                  "preemption: the machine held the thread (paging memory in, reclaim)");
  for (CLI::App* sub : {report, whatif, advise, tasks, sched, predict, exp, view, diff})
    sub->add_flag("--keep-runtime-cost", load::model_settings().keep_runtime_cost,
                  "Count the OpenMP runtime's own cost between events (creating, starting and "
                  "joining tasks, fetching loop chunks: measured by `record` on empty tasks) as "
                  "work; by default it is taken out, so that the work is the program's own");

  // CLI11 reads an unsigned option with strtoull, which takes "-3" as 2^64 - 3; and a floating
  // one with strtod, which takes "nan" and "inf" (a NaN target once silently meant the default).
  for (CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; }))
    for (CLI::Option* o : sub->get_options([](const CLI::Option*) { return true; })) {
      if (o->get_type_name().rfind("UINT", 0) == 0)
        o->check(CLI::Validator(
            [](std::string& v) {
              return !v.empty() && v[0] == '-' ? "must be 0 or more, not " + v : std::string();
            },
            "", "count"));
      if (o->get_type_name() == "FLOAT")
        o->check(CLI::Validator(
            [](std::string& v) {
              char* end = nullptr;
              const double x = std::strtod(v.c_str(), &end);
              return std::isfinite(x) ? std::string() : "must be a finite number, not " + v;
            },
            "", "number"));
    }
  if (argc > 1 && argv[1][0] != '-') {
    bool known = false;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
      known |= sub->get_name() == argv[1];
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr,
                   "tasklens: unknown command '%s'; the commands are %s (tasklens --help)\n",
                   argv[1], names.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // --help and --version are "errors" that succeed; a real one gets the tool's one line (what
    // is wrong, where to look) and the usage exit status, like every other bad input.
    if (e.get_exit_code() == 0) return app.exit(e);
    std::string where = "tasklens";
    for (const CLI::App* sub : app.get_subcommands()) where += " " + sub->get_name();
    std::string what = e.what();
    while (!what.empty() && (what.back() == '\n' || what.back() == ' ')) what.pop_back();
    for (char& c : what)
      if (c == '\n') c = ' ';
    std::fprintf(stderr, "tasklens: %s; see `%s --help`\n", what.c_str(), where.c_str());
    return 2;
  }
  symbols::set_library_paths(library_paths);
  if (!*record) load::Progress::global().start();  // a reader: its progress line, if it is long
  if (*record) return rec.repeat == 1 ? run_record(rec) : run_record_repeated(rec);
  if (*report) run_report(rep);
  if (*whatif) run_whatif(wi);
  if (*advise) run_advise(ad);
  if (*tasks) run_tasks(tk);
  if (*sched) run_sched(sc);
  if (*predict) run_predict(pr);
  if (*exp) run_export(ex);
  if (*view) run_view(vw);
  if (*diff) run_diff(df);
  return 2;
}

}  // namespace
}  // namespace tasklens::cli

int main(int argc, char** argv) {
  using namespace tasklens;
  // The readers build models of millions of strands in vectors of hundreds of megabytes, and
  // free the builder's as the model's are allocated. glibc maps each such block on its own and
  // unmaps it when freed, so every one costs its size in fresh page faults (a third of the time
  // of `report` on a large trace). From the heap, and without giving memory back, freed blocks
  // are reused instead. (A short-lived process: what it keeps, it frees at exit.) Where the
  // kernel has transparent huge pages, blocks of 4 MiB or more bypass malloc and live in huge
  // pages instead, faulted in six times faster (platform/platform.hpp).
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
  load::Timings::global();  // TASKLENS_TIMINGS: phases are timed from here
  // An error is one line: the progress line (load/progress.hpp) is erased before it.
  auto fail = [](int status, const std::string& line) {
    load::Progress::global().stop();
    fmt::print(stderr, "tasklens: {}\n", line);
    return status;
  };
  try {
    return cli::run(argc, argv);
  } catch (const UsageError& e) {
    return fail(2, e.what());
  } catch (const EnvironmentError& e) {
    return fail(3, e.what());
  } catch (const trace::TraceError& e) {
    return fail(4, e.what());
  } catch (const model::ModelError& e) {
    return fail(5, e.what());
  } catch (const OutOfMemoryError& e) {
    return fail(6, e.what());
  } catch (const std::bad_alloc&) {
    return fail(6,
                "out of memory: this machine could not give tasklens the memory it asked for; "
                "read the trace on a machine with more memory (a reader holds about 500 bytes "
                "per task), or record a shorter run");
  } catch (const std::exception& e) {
    return fail(70, std::string("internal error: ") + e.what());
  }
}
