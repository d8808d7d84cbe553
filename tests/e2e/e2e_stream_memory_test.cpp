// What a reading in passes holds: memory that follows what the run had live, not its task count
// (docs/design-scale.md). The readings' results against the DAG's: e2e_stream_test.cpp.
#include <filesystem>
#include <fstream>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

class StreamMemory : public E2E {};

// A recording's off-CPU intervals (every context switch of a program thread: millions in a long
// run on a busy machine) are read a record at a time, not held: 4 M of them added to a small
// recording as the recorder writes them (a thousand per record, in time order; here for a thread
// with no events, before the run, so that they change no figure) cost a reading in one pass
// under 16 MB more (held whole, they took about 160 MB), and `predict --stream` likewise.
TEST_F(StreamMemory, OffCpuIntervalsAreNotHeldWhole) {
  const std::string trace = path("fib20.tlens"), busy = path("fib20_busy.tlens");
  ASSERT_TRUE(record(example("suite_fib", "clang"), {"20"}, trace).exited(0));
  {
    std::ifstream in(trace, std::ios::binary);
    std::ofstream out(busy, std::ios::binary);
    out << in.rdbuf();
    constexpr uint32_t kRecords = 4000, kPerRecord = 1000, kPreemptions = 9, kThread = 5;
    std::vector<uint64_t> pairs(2 * kPerRecord);
    for (uint32_t r = 0; r < kRecords; ++r) {
      const uint32_t head[4] = {kPreemptions, 8 + 8 + kPerRecord * 16, kThread, kPerRecord};
      for (uint32_t i = 0; i < kPerRecord; ++i) {
        pairs[2 * i] = 2 * (uint64_t(r) * kPerRecord + i) + 1;
        pairs[2 * i + 1] = pairs[2 * i] + 1;
      }
      out.write(reinterpret_cast<const char*>(head), sizeof head);
      out.write(reinterpret_cast<const char*>(pairs.data()), std::streamsize(pairs.size() * 8));
    }
    ASSERT_TRUE(out.good());
  }
  for (const char* command : {"report", "predict"}) {
    const RunResult plain =
        run({TASKLENS_BIN, command, "--stream", "--format", "json", trace}, default_env(), 300);
    const RunResult many =
        run({TASKLENS_BIN, command, "--stream", "--format", "json", busy}, default_env(), 300);
    ASSERT_TRUE(plain.exited(0)) << plain.describe();
    ASSERT_TRUE(many.exited(0)) << many.describe();
    json a = json::parse(plain.out, nullptr, false), b = json::parse(many.out, nullptr, false);
    ASSERT_FALSE(a.is_null());
    ASSERT_FALSE(b.is_null());
    for (json* j : {&a, &b}) {  // the traces' names
      j->erase("trace");
      j->erase("simulated_from");
      if (j->contains("recordings"))
        for (json& recording : (*j)["recordings"]) recording.erase("trace");
    }
    EXPECT_EQ(a, b) << command;
    EXPECT_LT(many.max_rss_bytes, plain.max_rss_bytes + (uint64_t{16} << 20))
        << command << ": " << plain.max_rss_bytes << " bytes resident, with 4 M intervals more "
        << many.max_rss_bytes;
  }
}

// The memory bound, on a recording of 18.4 million tasks (fib 34, a task per call): read in one
// pass (report, tasks, sched) or in passes (view), the reader holds at most 16 bytes per task
// (against some 330 for the DAG in memory; what one pass takes on other shapes:
// docs/benchmarks.md), and about what it holds on a recording a ninth of the size. The threads'
// switches and slow faults are recorded: on a loaded machine they grow with the time the run
// takes, and the reader holds a record of them at a time (OffCpuIntervalsAreNotHeldWhole).
TEST_F(StreamMemory, OnePassHoldsAtMostSixteenBytesPerTaskOnTwentyMillionTasks) {
  // Every reading decides its own clipping (none kept from the one before:
  // load/clipping_cache.hpp), its census's pass included.
  EnvOverrides fresh = default_env();
  fresh["TASKLENS_CACHE"] = "off";
  const std::string trace = path("fib34.tlens");
  ASSERT_TRUE(record(example("suite_fib", "clang"), {"34"}, trace).exited(0));
  const RunResult r =
      run({TASKLENS_BIN, "report", "--stream", "--format", "json", trace}, fresh, 300);
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const json j = json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_null());
  const uint64_t tasks = j["tasks"].get<uint64_t>();
  EXPECT_EQ(tasks, 18454928u);  // fib(34)'s calls, less the first: 2 F(35) - 2
  const uint64_t file = std::filesystem::file_size(trace);
  EXPECT_LE(r.max_rss_bytes, 16 * tasks)
      << "peak resident " << r.max_rss_bytes
      << " bytes: " << double(r.max_rss_bytes) / double(tasks)
      << " per task (the trace's file: " << double(file) / double(tasks) << ")";
  EXPECT_GT(j["program"]["work"].get<uint64_t>(), j["program"]["span"].get<uint64_t>());
  // `tasks` in one pass too: a few sketches per task type beside the builder's live state.
  const RunResult t =
      run({TASKLENS_BIN, "tasks", "--stream", "--format", "json", trace}, fresh, 300);
  ASSERT_TRUE(t.exited(0)) << t.describe();
  const json tj = json::parse(t.out, nullptr, false);
  ASSERT_FALSE(tj.is_null());
  EXPECT_EQ(tj["tasks"], tasks);
  EXPECT_LE(t.max_rss_bytes, 16 * tasks)
      << "tasks --stream: peak resident " << t.max_rss_bytes << " bytes, "
      << double(t.max_rss_bytes) / double(tasks) << " per task";
  // `sched` in one pass: its sort's run and the logs' blocks beside the builder's live state (the
  // strands' times wait on disk).
  const RunResult sc =
      run({TASKLENS_BIN, "sched", "--stream", "--format", "json", trace}, fresh, 300);
  ASSERT_TRUE(sc.exited(0)) << sc.describe();
  EXPECT_LE(sc.max_rss_bytes, 16 * tasks)
      << "sched --stream: peak resident " << sc.max_rss_bytes << " bytes, "
      << double(sc.max_rss_bytes) / double(tasks) << " per task";
  // What it holds does not grow with the task count: a recording of a ninth of the tasks (fib
  // 30, 2.7 M tasks) takes about as much, though its file is tens of MB smaller (the event
  // blocks are read back from the file as they are decoded, not held).
  const std::string small = path("fib30.tlens");
  ASSERT_TRUE(record(example("suite_fib", "clang"), {"30"}, small).exited(0));
  const RunResult s = run({TASKLENS_BIN, "report", "--stream", small}, fresh, 300);
  ASSERT_TRUE(s.exited(0)) << s.describe();
  const uint64_t small_file = std::filesystem::file_size(small);
  ASSERT_GT(file, small_file + (uint64_t{32} << 20));
  EXPECT_LT(r.max_rss_bytes, s.max_rss_bytes + (uint64_t{24} << 20))
      << "18.5 M tasks: " << r.max_rss_bytes << " bytes resident, 2.7 M: " << s.max_rss_bytes
      << "; the files: " << file << " and " << small_file;
  const RunResult ss = run({TASKLENS_BIN, "sched", "--stream", small}, fresh, 300);
  ASSERT_TRUE(ss.exited(0)) << ss.describe();
  EXPECT_LT(sc.max_rss_bytes, ss.max_rss_bytes + (uint64_t{24} << 20))
      << "sched --stream, 18.5 M tasks: " << sc.max_rss_bytes
      << " bytes resident, 2.7 M: " << ss.max_rss_bytes;
  // `view` in passes: the first pass's sinks (the schedule's among them), then the structure's
  // and the what-ifs', then advise's; the page is small whatever the run.
  const std::string page = path("fib34.html"), small_page = path("fib30.html");
  const RunResult v = run({TASKLENS_BIN, "view", "--stream", "-o", page, trace}, fresh, 600);
  ASSERT_TRUE(v.exited(0)) << v.describe();
  EXPECT_LE(v.max_rss_bytes, 16 * tasks)
      << "view --stream: peak resident " << v.max_rss_bytes << " bytes, "
      << double(v.max_rss_bytes) / double(tasks) << " per task";
  EXPECT_LT(std::filesystem::file_size(page), uint64_t{4} << 20);
  const RunResult vs = run({TASKLENS_BIN, "view", "--stream", "-o", small_page, small}, fresh, 300);
  ASSERT_TRUE(vs.exited(0)) << vs.describe();
  EXPECT_LT(v.max_rss_bytes, vs.max_rss_bytes + (uint64_t{24} << 20))
      << "view --stream, 18.5 M tasks: " << v.max_rss_bytes
      << " bytes resident, 2.7 M: " << vs.max_rss_bytes;
  // `export`'s timeline in one pass: 10 ms of the run (some 10^5 slices whatever its length).
  const std::vector<std::string> window = {"--stream", "--window", "100ms:110ms", "-o",
                                           "/dev/null"};
  std::vector<std::string> argv = {TASKLENS_BIN, "export", trace};
  argv.insert(argv.end(), window.begin(), window.end());
  const RunResult x = run(argv, fresh, 600);
  ASSERT_TRUE(x.exited(0)) << x.describe();
  EXPECT_LE(x.max_rss_bytes, 16 * tasks)
      << "export --stream: peak resident " << x.max_rss_bytes << " bytes, "
      << double(x.max_rss_bytes) / double(tasks) << " per task";
  argv[2] = small;
  const RunResult xs = run(argv, fresh, 300);
  ASSERT_TRUE(xs.exited(0)) << xs.describe();
  EXPECT_LT(x.max_rss_bytes, xs.max_rss_bytes + (uint64_t{24} << 20))
      << "export --stream, 18.5 M tasks: " << x.max_rss_bytes
      << " bytes resident, 2.7 M: " << xs.max_rss_bytes;
}

}  // namespace
}  // namespace tasklens::e2e
