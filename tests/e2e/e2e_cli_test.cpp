// The command line end to end: runtime choice, metrics, output files, formats, help.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "e2e_util.hpp"
#include "trace/format.hpp"

namespace tasklens::e2e {
namespace {

class Cli : public E2E {};

const char* const kLibomp14 = "/usr/lib/llvm-14/lib/libomp.so.5";

// With libomp 14 (no dispatch callback) a loop is seen as one strand per thread: a dynamic,1
// loop of 32 equal iterations on 2 threads then looks 2-way parallel, and the report says why.
TEST_F(Cli, OldRuntimeWithoutDispatchSaysLoopsArePerThread) {
  if (!std::filesystem::exists(kLibomp14)) GTEST_SKIP() << kLibomp14 << " is not installed";
  // Each thread's share is taken as an even part of the 32 iterations: the loop's parallelism
  // is its iteration count, not the 2 threads it was recorded with (a band, by the policy).
  auto even_shares = [](const Profiled& run) {
    Violations v;
    const double par = num(run.report["program"], "parallelism");
    if (!(par > 32 / 1.15 && par < 32 * 1.15))
      v.soft = "parallelism " + std::to_string(par) + ", not that of 32 even shares\n";
    return v;
  };
  const Profiled p = profile_judged_with(example("sem_loop_dynamic", "clang"), {"32", "20000"},
                                         {"--runtime", kLibomp14}, "even shares", even_shares);
  const json& j = p.report;
  ASSERT_FALSE(j.is_null());
  EXPECT_FALSE(j["loops_have_chunks"].get<bool>());
  bool warned = false;
  for (const auto& w : j["warnings"]) warned = warned || contains_nocase(w, "dispatch");
  EXPECT_TRUE(warned) << j["warnings"].dump();
}

// task-clock goes through the same perf_event path as cycles and instructions, so it checks that
// path on machines without hardware counters: the work is CPU time, in nanoseconds.
TEST_F(Cli, TaskClockMetricMeasuresCpuTimeThroughPerf) {
  // fib(10) with 4000 units per call: C = 2 F(11) - 1 = 177 calls.
  const double expected_ns = 177 * 4000 * kUnitTicks / tsc_ticks_per_second() * 1e9;
  auto cpu_time = [&](const Profiled& run) {
    Violations v;
    const double work = num(run.report["program"], "work");
    const double par = num(run.report["program"], "parallelism");
    std::ostringstream m;
    m << "work " << work << " ns against " << expected_ns << ", parallelism " << par
      << " against 17.7\n";
    if (work < 0.9 * expected_ns) v.hard = m.str();
    if (work > 1.6 * expected_ns || std::abs(par - 17.7) > 0.25 * 17.7) v.soft = m.str();
    return v;
  };
  const Profiled p = profile_judged_with(example("fib", "clang"), {"10", "4000"},
                                         {"--metric", "task-clock"}, "CPU time", cpu_time);
  ASSERT_FALSE(p.report.is_null());
  EXPECT_EQ(p.report["metric"], "task-clock");
}

TEST_F(Cli, ExistingTraceIsKeptAsOld) {
  const std::string trace = path("tasklens.data");
  ASSERT_TRUE(record(example("fib", "clang"), {"5", "10"}, trace).exited(0));
  std::string first = read_file(trace);
  ASSERT_TRUE(record(example("fib", "clang"), {"6", "10"}, trace).exited(0));
  EXPECT_EQ(read_file(trace + ".old"), first);
  EXPECT_NE(read_file(trace), first);
  // A third recording replaces the .old (deleted in the background while the program runs).
  std::string second = read_file(trace);
  ASSERT_TRUE(record(example("fib", "clang"), {"7", "10"}, trace).exited(0));
  EXPECT_EQ(read_file(trace + ".old"), second);
  EXPECT_NE(read_file(trace), second);
  size_t files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(path("")))
    files += entry.path().filename().string().rfind("tasklens.data", 0) == 0;
  EXPECT_EQ(files, 2u) << "only the trace and its .old";
}

// The CPUs allowed to a thread, from /proc/<pid>/task/<tid>/status ("0-1,3" -> {0, 1, 3}).
std::set<int> allowed_cpus(const std::filesystem::path& task_dir) {
  std::ifstream in(task_dir / "status");
  std::set<int> cpus;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
    std::stringstream list(line.substr(line.find(':') + 1));
    for (std::string item; std::getline(list, item, ',');) {
      const size_t dash = item.find('-');
      const int a = std::stoi(item),
                b = dash == std::string::npos ? a : std::stoi(item.substr(dash + 1));
      for (int c = a; c <= b; ++c) cpus.insert(c);
    }
  }
  return cpus;
}

// A program kept to CPU 0 (taskset) leaves CPU 1 idle: the recorder's writer thread, which
// compresses the events, runs there and takes none of the program's CPU time.
TEST_F(Cli, WriterRunsOutsideTheProgramsCpus) {
  if (sysconf(_SC_NPROCESSORS_ONLN) < 2) GTEST_SKIP() << "one CPU: nowhere else to go";
  if (!std::filesystem::exists("/usr/bin/taskset")) GTEST_SKIP() << "taskset is not installed";
  const std::string trace = path("pinned.tlens");
  RunResult rec;
  std::thread recording([&] {
    rec = run({"/usr/bin/taskset", "-c", "0", TASKLENS_BIN, "record", "-o", trace, "--",
               example("fib", "clang"), "12", "1500"});
  });
  // Find the program by its trace path (TASKLENS_OUTPUT in its environment), then its writer.
  std::set<int> writer_cpus, main_cpus;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (writer_cpus.empty() && std::chrono::steady_clock::now() < deadline) {
    std::error_code ec;
    for (const auto& proc : std::filesystem::directory_iterator("/proc", ec)) {
      std::ifstream env(proc.path() / "environ");
      std::string all((std::istreambuf_iterator<char>(env)), std::istreambuf_iterator<char>());
      if (all.find("TASKLENS_OUTPUT=" + trace + '\0') == std::string::npos) continue;
      for (const auto& task : std::filesystem::directory_iterator(proc.path() / "task", ec)) {
        std::ifstream comm(task.path() / "comm");
        std::string name;
        std::getline(comm, name);
        if (name == "tasklens-writer") writer_cpus = allowed_cpus(task.path());
        if (task.path().filename() == proc.path().filename()) main_cpus = allowed_cpus(task.path());
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  recording.join();
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  ASSERT_FALSE(writer_cpus.empty()) << "no thread named tasklens-writer seen in the program";
  EXPECT_EQ(main_cpus, std::set<int>{0});
  EXPECT_EQ(writer_cpus.count(0), 0u) << "the writer shares the program's CPU";
}

TEST_F(Cli, DefaultTraceNameInTheCurrentDirectory) {
  std::string cwd = std::filesystem::current_path();
  std::filesystem::current_path(path(""));
  RunResult rec = run({TASKLENS_BIN, "record", "--", example("fib", "clang"), "5", "10"});
  RunResult rep = run({TASKLENS_BIN, "report"});
  std::filesystem::current_path(cwd);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  EXPECT_TRUE(std::filesystem::exists(path("tasklens.data")));
  EXPECT_TRUE(rep.exited(0)) << rep.describe();
  EXPECT_NE(rep.out.find("<whole program>"), std::string::npos) << rep.out;
}

// A trace whose model cannot fit in the memory the machine (or TASKLENS_MEMORY_LIMIT) gives is
// refused before it is read, in one line with exit code 6, rather than ended by the kernel's
// out-of-memory killer; within the budget it is read as before, or in one pass. So are two that
// `diff` and `predict` would hold at once.
TEST_F(Cli, ATraceTooLargeForTheMemoryIsRefusedBeforeItIsRead) {
  const std::string trace = path("t.tlens");
  ASSERT_TRUE(record(example("suite_fib", "clang"), {"16"}, trace).exited(0));  // 3192 tasks
  EnvOverrides small = default_env();
  small["TASKLENS_MEMORY_LIMIT"] = "64K";
  for (const char* format : {"json", "csv"}) {
    RunResult r = run({TASKLENS_BIN, "export", "--format", format, trace}, small);
    EXPECT_TRUE(r.exited(6)) << r.describe();
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.describe();
    EXPECT_NE(r.err.find("t.tlens: reading this trace needs at least"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("TASKLENS_MEMORY_LIMIT is 0.1 MiB"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("record a shorter run"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("every command but `tasklens export --format json|csv` reads such a "
                         "recording in one pass or in passes by itself"),
              std::string::npos)
        << r.err;
    EXPECT_EQ(r.out, "");
  }
  // `report`, `tasks`, `sched` and `view` read it in one pass or in passes instead
  // (e2e_stream_test), which needs a block of the critical path's log and a window of the file:
  // not even that fits in 64 KiB.
  for (const char* command : {"report", "tasks", "sched", "view"}) {
    RunResult r = run({TASKLENS_BIN, command, trace}, small);
    EXPECT_TRUE(r.exited(6)) << r.describe();
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.describe();
    EXPECT_NE(r.err.find("t.tlens: reading this trace even in one pass needs at least"),
              std::string::npos)
        << r.err;
  }
  EnvOverrides roomy = default_env();
  roomy["TASKLENS_MEMORY_LIMIT"] = "1G";
  EXPECT_TRUE(run({TASKLENS_BIN, "report", trace}, roomy).exited(0));
  // `diff` and `predict` hold the models at once: two traces that each fit alone do not fit
  // together (each needs at least 1.1 MiB: 3192 tasks at 360 bytes). `diff` then reads them in
  // passes (e2e_stream_test), `predict` each in one pass, and both say so.
  EnvOverrides pair = default_env();
  pair["TASKLENS_MEMORY_LIMIT"] = "1600K";
  EXPECT_TRUE(run({TASKLENS_BIN, "report", trace}, pair).exited(0));
  RunResult both = run({TASKLENS_BIN, "diff", trace, trace}, pair);
  EXPECT_TRUE(both.exited(0)) << both.describe();
  EXPECT_NE(both.out.find("read in passes"), std::string::npos) << both.out;
  EXPECT_TRUE(run({TASKLENS_BIN, "diff", trace, trace}, roomy).exited(0));
  // `view` holds the DAG of each run it shows: where two do not fit together, the page of the
  // two comes from passes, and says so in each run's sections. (Its passes need some 60 MiB
  // whatever the recording, the schedule's sort above all: 150,048 tasks, whose DAGs need 54 MiB
  // each, fit one at a time in 96 MiB but not together.)
  const std::string larger = path("t24.tlens");
  ASSERT_TRUE(record(example("suite_fib", "clang"), {"24"}, larger).exited(0));
  EnvOverrides passes = default_env();
  passes["TASKLENS_MEMORY_LIMIT"] = "96M";
  RunResult page = run({TASKLENS_BIN, "view", "-o", "-", larger, "--compare", larger}, passes);
  EXPECT_TRUE(page.exited(0)) << page.describe();
  EXPECT_NE(page.out.find("read in passes (view --stream"), std::string::npos);
  EXPECT_NE(page.out.find("id=\"tl-0-diff\""), std::string::npos);
  EXPECT_NE(page.out.find("id=\"tl-1-structure\""), std::string::npos);
  const std::string one = path("t1.tlens");
  EnvOverrides one_thread = default_env();
  one_thread["OMP_NUM_THREADS"] = "1";
  ASSERT_TRUE(record(example("suite_fib", "clang"), {"16"}, one, one_thread).exited(0));
  // `predict`'s one pass holds its graph (each recording's strands as nodes): at 1.6 MiB not
  // even that fits; at 1.95 MiB it does, and the two DAGs (2.2 MiB) still do not.
  RunResult tight = run({TASKLENS_BIN, "predict", "--threads", "2", one, trace}, pair);
  EXPECT_TRUE(tight.exited(6)) << tight.describe();
  EXPECT_NE(tight.err.find("reading this trace even in one pass needs at least"), std::string::npos)
      << tight.err;
  EnvOverrides pair_of_passes = default_env();
  pair_of_passes["TASKLENS_MEMORY_LIMIT"] = "2000K";
  RunResult predicted =
      run({TASKLENS_BIN, "predict", "--threads", "2", one, trace}, pair_of_passes);
  EXPECT_TRUE(predicted.exited(0)) << predicted.describe();
  EXPECT_NE(predicted.out.find("read in passes"), std::string::npos) << predicted.out;
  EXPECT_NE(predicted.out.find("extrapolated"), std::string::npos) << predicted.out;
  // `export`'s timeline in one pass: a DAG that does not fit in 1000 KiB, and a window of the
  // run's first 200 slices that does (the whole run's 9,000 would not).
  EnvOverrides no_dag = default_env();
  no_dag["TASKLENS_MEMORY_LIMIT"] = "1000K";
  const RunResult dag = run({TASKLENS_BIN, "export", trace}, roomy);
  ASSERT_TRUE(dag.exited(0)) << dag.describe();
  std::vector<double> starts;
  const auto dag_json = nlohmann::json::parse(dag.out);
  for (const auto& e : dag_json["traceEvents"])
    if (e["ph"] == "X" && e["cat"] != "preemption") starts.push_back(e["ts"].get<double>());
  ASSERT_GT(starts.size(), 2000u);
  const std::string window = fmt::format(":{:.3f}us", starts[200]);
  RunResult whole = run({TASKLENS_BIN, "export", trace}, no_dag);
  EXPECT_TRUE(whole.exited(6)) << whole.describe();
  EXPECT_EQ(lines_of(whole.err).size(), 2u) << whole.describe();  // (the note, the refusal)
  EXPECT_NE(whole.err.find("export a shorter part of the run with --window"), std::string::npos)
      << whole.err;
  EXPECT_NE(whole.err.find("made 3192 tasks: a window of about"), std::string::npos) << whole.err;
  // (A window as long as the run: refused in the pass, once it holds too many slices.)
  RunResult all = run({TASKLENS_BIN, "export", "--window", "0ns:", trace}, no_dag);
  EXPECT_TRUE(all.exited(6)) << all.describe();
  EXPECT_EQ(lines_of(all.err).size(), 2u) << all.describe();
  EXPECT_NE(all.err.find("the timeline of this window holds more than"), std::string::npos)
      << all.err;
  RunResult part = run({TASKLENS_BIN, "export", "--window", window, trace}, no_dag);
  ASSERT_TRUE(part.exited(0)) << part.describe();
  EXPECT_NE(part.err.find("the timeline is read in one pass"), std::string::npos) << part.err;
  const auto windowed = nlohmann::json::parse(part.out);
  EXPECT_EQ(windowed["otherData"]["strand_ids"], "met");
  EXPECT_EQ(windowed["otherData"]["slices"],
            std::count_if(starts.begin(), starts.end(), [&](double s) { return s < starts[200]; }))
      << window;
  // Not even one pass fits in 64 KiB.
  RunResult refused = run({TASKLENS_BIN, "predict", trace}, small);
  EXPECT_TRUE(refused.exited(6)) << refused.describe();
  EXPECT_EQ(lines_of(refused.err).size(), 1u) << refused.describe();
  EXPECT_NE(refused.err.find("t.tlens: reading this trace even in one pass needs at least"),
            std::string::npos)
      << refused.err;
  EnvOverrides wrong = default_env();
  wrong["TASKLENS_MEMORY_LIMIT"] = "lots";
  RunResult bad = run({TASKLENS_BIN, "report", trace}, wrong);
  EXPECT_TRUE(bad.exited(2)) << bad.describe();
  EXPECT_NE(bad.err.find("TASKLENS_MEMORY_LIMIT=lots is not a size"), std::string::npos) << bad.err;
}

TEST_F(Cli, TableCsvAndTopAgreeWithJson) {
  const std::string trace = path("t.tlens");
  ASSERT_TRUE(record(example("treesum", "clang"), {}, trace).exited(0));
  json j = report_json(trace);
  ASSERT_FALSE(j.is_null());
  // The recorder read the hypervisor's steal over the run (/proc/stat): a share, 0 on bare metal.
  ASSERT_TRUE(j["host_steal_percent"].is_number()) << j["host_steal_percent"];
  EXPECT_GE(j["host_steal_percent"].get<double>(), 0);
  EXPECT_LE(j["host_steal_percent"].get<double>(), 100);
  RunResult table = run({TASKLENS_BIN, "report", trace});
  ASSERT_TRUE(table.exited(0)) << table.describe();
  EXPECT_NE(table.out.find("crit.%"), std::string::npos);
  EXPECT_NE(table.out.find(j["sites"][0]["site"].get<std::string>()), std::string::npos);
  RunResult csv = run({TASKLENS_BIN, "report", trace, "--format", "csv"});
  ASSERT_TRUE(csv.exited(0)) << csv.describe();
  std::vector<std::string> rows = lines_of(csv.out);
  ASSERT_EQ(rows.size(), j["sites"].size() + 2);  // header, whole program, sites
  EXPECT_EQ(rows[0].rfind("site,file,line,function,kind,count,work,span", 0), 0u) << rows[0];
  EXPECT_NE(rows[1].find("," + std::to_string(j["program"]["work"].get<uint64_t>()) + ","),
            std::string::npos);
  RunResult top = run({TASKLENS_BIN, "report", trace, "--format", "json", "--top", "1"});
  ASSERT_TRUE(top.exited(0)) << top.describe();
  EXPECT_EQ(json::parse(top.out)["sites"].size(), 1u);
}

// The robust span (docs/robust-span.md) on a real recording: the JSON gives both figures and
// what was clipped, --raw-span gives the measured ones (the same measured span both ways), and
// every other span-computing command says which model it used.
TEST_F(Cli, RobustAndRawSpansAgreeOnTheMeasuredFigures) {
  const std::string trace = path("fib.tlens");
  ASSERT_TRUE(record(example("fib", "clang"), {"14", "2000"}, trace).exited(0));
  json robust = report_json(trace);
  ASSERT_FALSE(robust.is_null());
  json raw = tasklens_command_json("report", {trace, "--raw-span"});
  ASSERT_FALSE(raw.is_null());
  EXPECT_EQ(robust["span_mode"], "robust");
  EXPECT_EQ(raw["span_mode"], "raw");
  const json& p = robust["program"];
  EXPECT_EQ(p["span_raw"], raw["program"]["span"]);
  EXPECT_EQ(p["work_raw"], raw["program"]["work"]);
  EXPECT_LE(p["span"].get<uint64_t>(), p["span_raw"].get<uint64_t>());
  EXPECT_EQ(p["work"].get<uint64_t>() + robust["clipped_work"].get<uint64_t>(),
            p["work_raw"].get<uint64_t>());
  const size_t clipped = robust["clipped_count"].get<size_t>();
  EXPECT_EQ(robust["clipped_strands"].size(), std::min<size_t>(clipped, 20));
  for (const json& c : robust["clipped_strands"]) {
    EXPECT_GT(c["work_raw"].get<uint64_t>(), c["work_clipped"].get<uint64_t>());
    EXPECT_FALSE(c["fragment"].get<std::string>().empty());
  }
  if (clipped == 0) {
    EXPECT_EQ(p["span"], p["span_raw"]);
    EXPECT_EQ(p["parallelism"], p["parallelism_raw"]);
  }
  EXPECT_EQ(raw["clipped_count"], 0);
  EXPECT_EQ(raw["program"]["span_raw"], raw["program"]["span"]);
  EXPECT_EQ(tasklens_command_json("advise", {trace})["span_mode"], "robust");
  EXPECT_EQ(tasklens_command_json("advise", {trace, "--raw-span"})["span_mode"], "raw");
  std::string site;
  for (const json& row : robust["sites"])
    if (site.empty() && row["kind"] != "program") site = row["site"];
  ASSERT_FALSE(site.empty()) << robust.dump();
  json wi = tasklens_command_json("whatif", {trace, "--site", site});
  EXPECT_EQ(wi["span_mode"], "robust");
  EXPECT_EQ(wi["program"]["span"], p["span"]);
  EXPECT_EQ(tasklens_command_json("predict", {trace, "--raw-span"})["span_mode"], "raw");
}

// TASKLENS_TIMINGS=1: one more line on stderr with each phase's time; the report is the same.
TEST_F(Cli, TimingsGoToStderrOnRequest) {
  const std::string trace = path("t.tlens");
  ASSERT_TRUE(record(example("treesum", "clang"), {}, trace).exited(0));
  RunResult plain = run({TASKLENS_BIN, "report", trace, "--format", "json"});
  ASSERT_TRUE(plain.exited(0)) << plain.describe();
  EXPECT_EQ(plain.err.find("timings"), std::string::npos) << plain.err;
  EnvOverrides env = default_env();
  env["TASKLENS_TIMINGS"] = "1";
  RunResult timed = run({TASKLENS_BIN, "report", trace, "--format", "json"}, env);
  ASSERT_TRUE(timed.exited(0)) << timed.describe();
  EXPECT_EQ(json::parse(timed.out)["program"], json::parse(plain.out)["program"]);
  const std::vector<std::string> err = lines_of(timed.err);
  ASSERT_EQ(err.size(), 1u) << timed.err;
  EXPECT_EQ(err[0].rfind("tasklens: timings: open ", 0), 0u) << err[0];
  for (const char* phase :
       {", model ", ", symbols ", ", profile ", ", render ", ", write ", "; total "})
    EXPECT_NE(err[0].find(phase), std::string::npos) << phase << " in " << err[0];
  // Other readers time their phases too, `diff` (two recordings loaded at once) its main
  // thread's: one of each phase.
  RunResult sched = run({TASKLENS_BIN, "sched", trace, "--format", "json"}, env);
  ASSERT_TRUE(sched.exited(0)) << sched.describe();
  EXPECT_NE(sched.err.find("tasklens: timings: open "), std::string::npos) << sched.err;
  RunResult diff = run({TASKLENS_BIN, "diff", trace, trace, "--format", "json"}, env);
  ASSERT_TRUE(diff.exited(0)) << diff.describe();
  const std::vector<std::string> diff_err = lines_of(diff.err);
  ASSERT_EQ(diff_err.size(), 1u) << diff.err;
  EXPECT_EQ(diff_err[0].rfind("tasklens: timings: open ", 0), 0u) << diff_err[0];
  EXPECT_EQ(diff_err[0].find("open ", 25), std::string::npos) << diff_err[0];
}

// A reader's progress line: on a terminal only (script(1) gives the command one), rewritten in
// place, and erased before the output; TASKLENS_PROGRESS=0 turns it off.
TEST_F(Cli, ProgressShowsOnATerminalOnlyAndIsErasedBeforeTheOutput) {
  const std::string trace = path("t.tlens");
  ASSERT_TRUE(record(example("treesum", "clang"), {}, trace).exited(0));
  EnvOverrides env = default_env();
  env["TASKLENS_PROGRESS_AFTER_MS"] = "0";  // at once (2 s by default)
  RunResult piped = run({TASKLENS_BIN, "report", trace, "--format", "json"}, env);
  ASSERT_TRUE(piped.exited(0)) << piped.describe();
  EXPECT_EQ(piped.err, "");
  const std::string out = path("report.json");
  const std::string command =
      std::string(TASKLENS_BIN) + " report " + trace + " --format json > " + out;
  RunResult tty = run({"/usr/bin/script", "-qec", command, "/dev/null"}, env);
  ASSERT_TRUE(tty.exited(0)) << tty.describe();
  // script(1) writes what the terminal got: the line(s) (the phase the first one names depends
  // on how soon its thread runs), then their erasure.
  EXPECT_EQ(tty.out.rfind("\rtasklens: ", 0), 0u) << tty.out;
  EXPECT_NE(tty.out.find(" t.tlens"), std::string::npos) << tty.out;
  ASSERT_GE(tty.out.size(), 4u);
  EXPECT_EQ(tty.out.substr(tty.out.size() - 4), "\r\033[K") << tty.out;
  EXPECT_EQ(json::parse(read_file(out))["program"], json::parse(piped.out)["program"]);
  env["TASKLENS_PROGRESS"] = "0";
  RunResult off = run({"/usr/bin/script", "-qec", command, "/dev/null"}, env);
  ASSERT_TRUE(off.exited(0)) << off.describe();
  EXPECT_EQ(off.out, "");
}

TEST_F(Cli, HelpAndVersion) {
  RunResult v = run({TASKLENS_BIN, "--version"});
  EXPECT_TRUE(v.exited(0));
  EXPECT_NE(v.out.find("tasklens"), std::string::npos);
  RunResult h = run({TASKLENS_BIN, "--help"});
  EXPECT_TRUE(h.exited(0));
  for (const char* word : {"record", "report"}) EXPECT_NE(h.out.find(word), std::string::npos);
  RunResult rh = run({TASKLENS_BIN, "record", "--help"});
  EXPECT_TRUE(rh.exited(0));
  for (const char* word : {"--metric", "--output", "--runtime", "tsc"})
    EXPECT_NE(rh.out.find(word), std::string::npos) << word;
  RunResult bad = run({TASKLENS_BIN, "report", "--format", "xml", path("x")});
  EXPECT_FALSE(bad.exited(0));
  EXPECT_EQ(lines_of(bad.err).size(), 1u) << bad.describe();
  RunResult none = run({TASKLENS_BIN, "record"});
  EXPECT_FALSE(none.exited(0));
}

// What the command line parser refuses gets the tool's one line and exit status 2, like all bad
// input (CLI11 printed two lines and exited 106 to 109).
TEST_F(Cli, CommandLineMistakesAreOneLineWithStatusTwo) {
  const std::string trace = path("t.tlens");
  ASSERT_TRUE(record(example("fib", "clang"), {"6", "10"}, trace).exited(0));
  struct Case {
    std::vector<std::string> args;
    std::string says;
  };
  const std::vector<Case> cases = {
      {{"bogus"}, "unknown command 'bogus'"},
      {{"report", trace, "extra"}, "extra"},
      {{"whatif", "--speedup", "2", trace}, "--speedup"},
      {{"report", "--top", "abc", trace}, "--top"},
      // An unsigned option took "-3" as 2^64 - 3 (and showed every row).
      {{"report", "--top", "-3", trace}, "must be 0 or more"},
      {{"tasks", "--bins", "-1", trace}, "must be 0 or more"},
      // A floating option took "nan" (a NaN target silently meant the default) and "inf".
      {{"advise", "--target", "nan", trace}, "must be a finite number, not nan"},
      {{"advise", "--k", "inf", trace}, "must be a finite number, not inf"},
      {{"advise", "--factor", "-inf", trace}, "must be a finite number"},
      {{"diff", "--min-share", "NaN", trace, trace}, "must be a finite number"},
  };
  for (const Case& c : cases) {
    std::vector<std::string> argv = {TASKLENS_BIN};
    argv.insert(argv.end(), c.args.begin(), c.args.end());
    RunResult r = run(argv);
    EXPECT_TRUE(r.exited(2)) << r.describe();
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(c.says), std::string::npos) << r.err;
    EXPECT_EQ(r.err.rfind("tasklens: ", 0), 0u) << r.err;
    EXPECT_TRUE(r.out.empty()) << r.out;
  }
}

// File names are bytes, not always UTF-8: a program so named is recorded and every JSON output
// stays valid, the bad byte replaced (the serializer threw: "internal error", exit 70).
TEST_F(Cli, ANonUtf8ProgramNameKeepsTheJsonValid) {
  const std::string exe = path("fib\xff");
  std::filesystem::copy_file(example("fib", "clang"), exe);
  const std::string trace = path("u.tlens");
  ASSERT_TRUE(record(exe, {"6", "10"}, trace).exited(0));
  for (const char* command : {"report", "tasks", "sched", "predict"}) {
    RunResult r = run({TASKLENS_BIN, command, trace, "--format", "json"});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    json j = json::parse(r.out);  // throws on invalid UTF-8 too
    if (std::string(command) == "report") {
      // The byte that is not UTF-8 is shown escaped, as in the table (report/printable.hpp).
      EXPECT_NE(j["executable"].get<std::string>().find("fib\\xff"), std::string::npos)
          << j["executable"];
    }
  }
}

// A repeatable option takes one value per use: `whatif --site fib.c:31 run.tlens` took the
// trace for a second site and then looked for tasklens.data.
TEST_F(Cli, RepeatableOptionsLeaveTheTraceAlone) {
  const std::string trace = path("t.tlens");
  ASSERT_TRUE(record(example("fib", "clang"), {"6", "10"}, trace).exited(0));
  RunResult list = run({TASKLENS_BIN, "whatif", "--list", trace});
  ASSERT_TRUE(list.exited(0)) << list.describe();
  // fib's two task sites, as --list names them.
  std::vector<std::string> sites;
  for (size_t at = list.out.find("fib.c:"); at != std::string::npos && sites.size() < 2;
       at = list.out.find("fib.c:", at + 1)) {
    const std::string site = list.out.substr(at, list.out.find(' ', at) - at);
    if (list.out.compare(list.out.find_first_not_of(' ', at + site.size()), 4, "task") == 0)
      sites.push_back(site);
  }
  ASSERT_EQ(sites.size(), 2u) << list.out;
  const std::string& site = sites[0];
  RunResult one = run({TASKLENS_BIN, "whatif", "--site", site, trace, "--format", "json"});
  EXPECT_TRUE(one.exited(0)) << one.describe();
  EXPECT_NE(one.out.find("\"unit\": \"" + site + "\""), std::string::npos) << one.out;
  RunResult two = run({TASKLENS_BIN, "whatif", "--site", site + "=4", "--site", sites[1], trace,
                       "--format", "json"});
  EXPECT_TRUE(two.exited(0)) << two.describe();
  for (const std::string& s : sites)
    EXPECT_NE(two.out.find("\"unit\": \"" + s + "\""), std::string::npos) << s << two.out;
  RunResult view = run({TASKLENS_BIN, "view", "--site", site, trace, "-o", path("v.html")});
  EXPECT_TRUE(view.exited(0)) << view.describe();
  // The same unit twice has two factors (or one and the curve's): refused, not one picked.
  RunResult twice = run({TASKLENS_BIN, "whatif", "--site", site + "=4", "--site", site, trace});
  EXPECT_TRUE(twice.exited(2)) << twice.describe();
  EXPECT_NE(twice.err.find("--site " + site + " is given twice"), std::string::npos) << twice.err;
  EXPECT_EQ(std::count(twice.err.begin(), twice.err.end(), '\n'), 1) << twice.err;
}

// A tiny buffer pool (1 MiB: 4 chunks for 2 threads) makes the program wait for the writer
// instead of growing: the trace must still hold every task.
TEST_F(Cli, BoundedBuffersLoseNothing) {
  EnvOverrides env = default_env();
  env["TASKLENS_BUFFER_MB"] = "1";
  const std::string trace = path("small.tlens");
  RunResult rec = record(example("fib", "clang"), {"20", "0"}, trace, env);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  json j = report_json(trace);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j["tasks"].get<uint64_t>(), 2u * 10946 - 2);  // C(20) - 1 tasks
  EXPECT_TRUE(j["complete"].get<bool>());
}

// The compression codes of a trace's event blocks, read record by record.
std::set<int> block_compressions(const std::string& trace) {
  std::string bytes = read_file(trace);
  std::set<int> codes;
  trace::FileHeader fh;
  std::memcpy(&fh, bytes.data(), sizeof fh);
  for (size_t pos = fh.header_size; pos + sizeof(trace::RecordHeader) <= bytes.size();) {
    trace::RecordHeader rh;
    std::memcpy(&rh, bytes.data() + pos, sizeof rh);
    if (rh.size < sizeof rh) break;
    if (rh.type == static_cast<uint32_t>(trace::RecordType::EventBlock)) {
      trace::EventBlockHeader bh;
      std::memcpy(&bh, bytes.data() + pos + sizeof rh, sizeof bh);
      codes.insert(bh.compression);
    }
    pos += rh.size;
  }
  return codes;
}

// `--compression`: zstd by default, LZ4 or none on request; every trace reads the same tasks,
// and the sizes come in the expected order. One thread, so that the four recordings hold the
// same events (with two, how the tasks spread over the threads changed a trace's size by more
// than zstd gains over LZ4 on so small a run).
TEST_F(Cli, CompressionIsZstdByDefaultLz4OrNoneOnRequest) {
  std::map<std::string, size_t> size;
  EnvOverrides env = default_env();
  env["OMP_NUM_THREADS"] = "1";
  for (std::string c : {"", "lz4", "zstd", "none"}) {
    const std::string trace = path("c-" + c + ".tlens");
    std::vector<std::string> flags;
    if (!c.empty()) flags = {"--compression", c};
    RunResult rec = record(example("fib", "clang"), {"18", "0"}, trace, env, flags);
    ASSERT_TRUE(rec.exited(0)) << rec.describe();
    // A block that does not shrink is stored as it is (0) whatever the choice.
    const int expected = c == "lz4" ? 2 : c == "none" ? 0 : 1;
    std::set<int> codes = block_compressions(trace);
    EXPECT_TRUE(codes.count(expected)) << "--compression " << c;
    codes.erase(0);
    codes.erase(expected);
    EXPECT_TRUE(codes.empty()) << "--compression " << c << ": another codec used";
    json j = report_json(trace);
    ASSERT_FALSE(j.is_null());
    EXPECT_EQ(j["tasks"].get<uint64_t>(), 2u * 4181 - 2) << c;  // C(18) - 1 tasks
    size[c] = std::filesystem::file_size(trace);
  }
  EXPECT_LT(size["zstd"], size["lz4"]);
  EXPECT_LT(size["lz4"], size["none"]);
  RunResult bad = record(example("fib", "clang"), {"5", "0"}, path("bad.tlens"), default_env(),
                         {"--compression", "gzip"});
  EXPECT_TRUE(bad.exited(2)) << bad.describe();
  EXPECT_EQ(bad.err,
            "tasklens: --compression gzip: unknown compression; use zstd (the default), "
            "lz4 or none\n");
  EXPECT_FALSE(std::filesystem::exists(path("bad.tlens")));
}

// An -o that cannot take a trace is refused before the program runs, with one line, and
// nothing is renamed: `-o /tmp` renamed the directory to /tmp.old (as an existing trace is kept),
// and a missing directory was reported after the run as a program without OpenMP.
TEST_F(Cli, OutputThatCannotBeATraceIsRefusedBeforeTheRun) {
  namespace fs = std::filesystem;
  const std::string dir = path("results");
  fs::create_directory(dir);
  write_file(dir + "/keep.txt", "user data");
  const std::string fifo = path("a-fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {dir, "is a directory"},
      {fifo, "not a regular file"},
      {path("no/such/dir/run.tlens"), "no directory"},
  };
  for (const auto& [out, why] : cases) {
    RunResult r = record(example("fib", "clang"), {"5", "10"}, out);
    EXPECT_TRUE(r.exited(2)) << out << ": " << r.describe();
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty()) << "the program must not have run: " << r.out;
    EXPECT_FALSE(fs::exists(out + ".old")) << out << " was renamed";
  }
  EXPECT_EQ(read_file(dir + "/keep.txt"), "user data");
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_FALSE(fs::exists(path("no")));
}

// A symlink given as the trace is followed (the trace goes to its target, which is what is kept
// as .old) and stays a symlink; `-o -` cannot take a trace and is refused before the run.
TEST_F(Cli, ASymlinkGivenAsTheTraceIsFollowedAndStays) {
  namespace fs = std::filesystem;
  const std::string target = path("real.tlens"), link = path("link.tlens");
  write_file(target, "previous");
  fs::create_symlink("real.tlens", link);
  RunResult r = record(example("fib", "clang"), {"5", "10"}, link);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  EXPECT_TRUE(fs::is_symlink(link)) << "the symlink was replaced";
  EXPECT_EQ(read_file(target + ".old"), "previous");
  EXPECT_FALSE(fs::exists(link + ".old")) << "the link itself was renamed";
  json j = report_json(link);
  EXPECT_TRUE(j.is_object());

  RunResult dash = record(example("fib", "clang"), {"5", "10"}, "-");
  EXPECT_TRUE(dash.exited(2)) << dash.describe();
  EXPECT_EQ(lines_of(dash.err).size(), 1u) << dash.err;
  EXPECT_NE(dash.err.find("standard output"), std::string::npos) << dash.err;
  EXPECT_TRUE(dash.out.empty()) << "the program must not have run: " << dash.out;
}

// `tasklens <args>` under a 1 GiB address-space limit and a 20 s timeout: a reader that reads a
// device to its end, waits on a FIFO or reads a large file whole cannot pass unnoticed (report
// /dev/zero grew to 15 GB until the OOM killer ended it).
RunResult limited(const std::vector<std::string>& args, const std::string& as = "1073741824") {
  std::vector<std::string> argv = {"/usr/bin/prlimit", "--as=" + as, TASKLENS_BIN};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, default_env(), 20);
}

// Inputs that are not regular files are refused at once with one line saying what to do, by
// every reader, and a file that is not a trace by its first bytes.
TEST_F(Cli, DevicesPipesAndLargeNonTracesAreRefusedAtOnce) {
  const std::string trace = path("run.tlens");
  RunResult rec = record(example("fib", "clang"), {"5", "10"}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  const std::vector<std::vector<std::string>> commands = {
      {"report", "/dev/zero"},
      {"diff", trace, "/dev/zero"},
      {"diff", "/dev/zero", trace},
      {"tasks", "/dev/zero"},
      {"sched", "/dev/zero"},
      {"predict", "/dev/zero"},
      {"export", "/dev/zero", "-o", path("x.json")},
      {"view", "/dev/zero", "-o", path("x.html")},
  };
  for (const auto& args : commands) {
    RunResult r = limited(args);
    EXPECT_TRUE(r.exited(4)) << r.describe();
    EXPECT_EQ(lines_of(r.err).size(), 1u) << r.err;
    EXPECT_NE(r.err.find("/dev/zero: is a character device"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("copy it to one first"), std::string::npos) << r.err;
    EXPECT_LT(r.seconds, 10) << r.describe();
  }
  for (const auto& entry :
       std::filesystem::directory_iterator(std::filesystem::path(trace).parent_path()))
    EXPECT_EQ(entry.path().filename().string().find(".tmp-"), std::string::npos)
        << "temporary left behind: " << entry.path();

  // A FIFO without a writer: opening it waited forever; it is at its end at once.
  const std::string fifo = path("fifo");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  RunResult from_fifo = limited({"report", fifo});
  EXPECT_TRUE(from_fifo.exited(4)) << from_fifo.describe();
  EXPECT_EQ(lines_of(from_fifo.err).size(), 1u) << from_fifo.err;
  EXPECT_NE(from_fifo.err.find("is a FIFO"), std::string::npos) << from_fifo.err;
  EXPECT_LT(from_fifo.seconds, 10) << from_fifo.describe();

  // A pipe still reads (a trace through one: tests/unit/trace_test.cpp), but only as far as a
  // header that is not a trace's.
  RunResult from_pipe = run({"/bin/bash", "-c",
                             std::string("/usr/bin/prlimit --as=1073741824 ") + TASKLENS_BIN +
                                 " report <(cat /dev/zero)"},
                            default_env(), 20);
  EXPECT_TRUE(from_pipe.exited(4)) << from_pipe.describe();
  EXPECT_EQ(lines_of(from_pipe.err).size(), 1u) << from_pipe.err;
  EXPECT_NE(from_pipe.err.find("bad magic"), std::string::npos) << from_pipe.err;

  // A pipe with a trace's header and then no end (a trace followed by /dev/zero) grew until the
  // kernel killed a process; it stops at a quarter of the address space the reader may have.
  RunResult endless = run({"/bin/bash", "-c",
                           std::string("/usr/bin/prlimit --as=1073741824 ") + TASKLENS_BIN +
                               " report <(cat '" + trace + "' /dev/zero)"},
                          default_env(), 60);
  EXPECT_TRUE(endless.exited(4)) << endless.describe();
  EXPECT_EQ(lines_of(endless.err).size(), 1u) << endless.err;
  EXPECT_NE(endless.err.find("the pipe sent"), std::string::npos) << endless.err;
  EXPECT_NE(endless.err.find("does not end"), std::string::npos) << endless.err;

  // 1 GiB of zeros (sparse), refused by its first bytes under a 512 MiB limit: it was read whole
  // before "bad magic".
  const std::string big = path("big.bin");
  write_file(big, "");
  ASSERT_EQ(truncate(big.c_str(), 1ll << 30), 0) << strerror(errno);
  RunResult from_big = limited({"report", big}, "536870912");
  EXPECT_TRUE(from_big.exited(4)) << from_big.describe();
  EXPECT_EQ(lines_of(from_big.err).size(), 1u) << from_big.err;
  EXPECT_NE(from_big.err.find("bad magic"), std::string::npos) << from_big.err;
  EXPECT_LT(from_big.seconds, 10) << from_big.describe();

  // The limits leave room for a real trace.
  RunResult fine = limited({"report", trace}, "536870912");
  EXPECT_TRUE(fine.exited(0)) << fine.describe();
}

TEST_F(Cli, ProgramThatCannotBeRunIsReported) {
  RunResult r = record(path("no-such-program"), {}, path("x.tlens"));
  EXPECT_TRUE(r.exited(127)) << r.describe();
  EXPECT_NE(r.err.find("no-such-program"), std::string::npos);
}

// A source file in a directory whose name holds a newline: addr2line prints the path as it is,
// over two lines, and the sites still get their file and line (printed with the newline
// escaped), not the module and offset.
TEST_F(Cli, SourcePathsWithANewlineStillNameTheirLines) {
  const std::string dir = path("odd\ndir");
  std::filesystem::create_directories(dir);
  std::filesystem::copy_file(std::string(TASKLENS_SOURCE_DIR) + "/examples/fib.c", dir + "/fib.c");
  const std::string exe = path("fib_odd");
  RunResult cc =
      run({"/usr/bin/clang", "-g", "-O1", "-fopenmp", "-I",
           std::string(TASKLENS_SOURCE_DIR) + "/examples/common", dir + "/fib.c", "-o", exe});
  ASSERT_TRUE(cc.exited(0)) << cc.describe();
  const std::string trace = path("odd.tlens");
  ASSERT_TRUE(record(exe, {"10", "100"}, trace).exited(0));
  const json j = report_json(trace);
  ASSERT_TRUE(j.contains("sites")) << j.dump();
  bool task_site = false;
  for (const json& s : j["sites"]) {
    if (s.value("kind", "") != "task") continue;
    task_site = true;
    const std::string file = s.value("file", "");
    EXPECT_NE(file.find("odd\\x0adir/fib.c"), std::string::npos) << s.dump();
    EXPECT_GT(s.value("line", 0), 0) << s.dump();
  }
  EXPECT_TRUE(task_site) << j.dump();
}

}  // namespace
}  // namespace tasklens::e2e
