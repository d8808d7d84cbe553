// What a reading in one pass says to the user and where it writes: its warnings on stderr
// beside a CSV, its temporary files in $TMPDIR, and a one-line refusal for what one pass cannot
// read (a detached task, a taskloop, a oneTBB recording without wrappers, units that are not in
// the recording). The readings' results against the DAG's: e2e_stream_test.cpp.
#include <algorithm>
#include <string>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

class Stream : public E2E {};

// A CSV has no place for the warnings: a one-pass reading's (its figures as measured, its
// percentiles approximate) come on stderr, one line each, and the CSV stays a CSV.
TEST_F(Stream, ACsvReadInOnePassSaysSoOnStderr) {
  const std::string fib = path("fib.tlens");
  ASSERT_TRUE(record(example("suite_fib", "clang"), {"16"}, fib).exited(0));
  for (const char* command : {"report", "tasks", "sched", "advise"}) {
    const RunResult r = run({TASKLENS_BIN, command, "--stream", "--format", "csv", fib});
    ASSERT_TRUE(r.exited(0)) << r.describe();
    // ("in passes" for report's robust span: e2e_stream_test's expect_same_robust_report)
    EXPECT_NE(r.err.find("tasklens: warning: read in "), std::string::npos)
        << command << ": " << r.err;
    EXPECT_EQ(r.out.find("warning"), std::string::npos) << command << ": " << r.out;
    EXPECT_NE(r.out.find(','), std::string::npos) << command << ": " << r.out;
  }
  const RunResult json_out = run({TASKLENS_BIN, "report", "--stream", "--format", "json", fib});
  EXPECT_EQ(json_out.err.find("warning"), std::string::npos) << json_out.err;
}

// The strands' times and the critical path's log of a one-pass reading go to $TMPDIR: a TMPDIR
// that cannot take them is named in one line (the C library's tmpfile() ignored TMPDIR, and they
// went to /tmp whatever the user said).
TEST_F(Stream, TemporaryFilesGoToTmpdir) {
  // (Large enough for both to spill: 1.59 M strands, the log's blocks and the sort's runs
  // taking a million and 2 M each.)
  const std::string fib = path("fib.tlens");
  ASSERT_TRUE(record(example("suite_fib", "clang"), {"27"}, fib).exited(0));
  EnvOverrides env = default_env();
  env["TMPDIR"] = "/nonexistent/tasklens-tmp";
  for (const char* command : {"report", "sched"}) {
    const RunResult r = run({TASKLENS_BIN, command, "--stream", fib}, env);
    EXPECT_FALSE(r.exited(0)) << command << ": " << r.describe();
    EXPECT_NE(r.err.find("/nonexistent/tasklens-tmp"), std::string::npos)
        << command << ": " << r.err;
    EXPECT_NE(r.err.find("set TMPDIR"), std::string::npos) << command << ": " << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << command << ": " << r.err;
  }
  env["TMPDIR"] = path("");
  const RunResult ok = run({TASKLENS_BIN, "sched", "--stream", fib}, env);
  EXPECT_TRUE(ok.exited(0)) << ok.describe();
}

// What one pass cannot read yet is refused in one line that says what and what to do; a
// recording too large for the memory goes to one pass by itself, or gets one line if it cannot.
TEST_F(Stream, WhatOnePassCannotReadIsSaidInOneLine) {
  const std::string detach = path("detach.tlens");
  ASSERT_TRUE(record(example("sem_detach", "clang"), {}, detach).exited(0));
  for (const char* command : {"report", "tasks", "advise", "sched", "predict"})
    expect_one_line(run({TASKLENS_BIN, command, "--stream", detach}), 5,
                    "detach.tlens: the recording has detached tasks (detach clauses), which "
                    "tasklens cannot read in one pass yet");
  // A taskloop whose tasks' share of its iterations is known only at its end holds them until
  // then: more than 262144 of them are refused (300000 tasks on one thread, no dispatch events).
  const std::string taskloop = path("taskloop.tlens");
  EnvOverrides one_thread = default_env();
  one_thread["OMP_NUM_THREADS"] = "1";
  ASSERT_TRUE(record(example("loop_forms", "clang"), {"taskloop_grainsize", "1200000", "1"},
                     taskloop, one_thread)
                  .exited(0));
  expect_one_line(run({TASKLENS_BIN, "report", "--stream", taskloop}), 5,
                  "taskloop.tlens: the recording has a taskloop of more than 262144 tasks without "
                  "dispatch events");
  RunResult base = run({TASKLENS_BIN, "report", "--stream", "--base", detach, detach});
  EXPECT_TRUE(base.exited(2)) << base.describe();

  EnvOverrides tight = default_env();
  tight["TASKLENS_MEMORY_LIMIT"] = "400K";  // below the DAG's need, above one pass's
  const std::string fib = path("fib.tlens");
  ASSERT_TRUE(record(example("suite_fib", "clang"), {"16"}, fib).exited(0));  // 3192 tasks
  const json j = json_of_run({TASKLENS_BIN, "report", "--format", "json", fib}, tight);
  ASSERT_FALSE(j.is_null());
  // (In one pass, or in passes for the robust span when it clips strands.)
  EXPECT_NE(j["warnings"].dump().find("(--stream, or its DAG does not fit in the memory)"),
            std::string::npos)
      << j["warnings"];
  EXPECT_EQ(j["tasks"], 3192);
  const json tasks = json_of_run({TASKLENS_BIN, "tasks", "--format", "json", fib}, tight);
  ASSERT_FALSE(tasks.is_null());
  EXPECT_NE(tasks["warnings"].dump().find("read in one pass"), std::string::npos)
      << tasks["warnings"];
  EXPECT_EQ(tasks["tasks"], 3192);
  // diff too, in passes.
  const json d = json_of_run({TASKLENS_BIN, "diff", "--format", "json", fib, fib}, tight);
  ASSERT_FALSE(d.is_null());
  EXPECT_NE(d["other"]["warnings"].dump().find("read in passes"), std::string::npos)
      << d["other"]["warnings"];
  expect_one_line(run({TASKLENS_BIN, "diff", "--stream", fib, detach}), 5,
                  "detach.tlens: the recording has detached tasks (detach clauses), which "
                  "tasklens cannot read in one pass yet");
  // advise too, one pass per step.
  const json advice = json_of_run({TASKLENS_BIN, "advise", "--format", "json", fib}, tight);
  ASSERT_FALSE(advice.is_null());
  EXPECT_NE(advice["warnings"].dump().find("read in one pass"), std::string::npos)
      << advice["warnings"];
  EXPECT_GT(advice["program"]["work"].get<uint64_t>(), 0u);
  // whatif too, with site, fragment and region units.
  const json w = json_of_run({TASKLENS_BIN, "whatif", "--format", "json", "--site", "fib.c:19",
                              "--fragment", "fib.c:19-21", fib},
                             tight);
  ASSERT_FALSE(w.is_null());
  EXPECT_NE(w["warnings"].dump().find("(--stream, or its DAG does not fit in the memory)"),
            std::string::npos)
      << w["warnings"];
  EXPECT_EQ(w["units"].size(), 3u) << w.dump();  // each alone, and both
  for (const EnvOverrides& env : {tight, default_env()})
    expect_one_line(run({TASKLENS_BIN, "whatif", "--stream", "--region", "solve", fib}, env), 2,
                    "--region solve: the trace has no regions; mark them with "
                    "TASKLENS_REGION_BEGIN/END");
  const std::string regions = path("regions.tlens");  // 3000 tasks: a DAG over 400 KiB
  ASSERT_TRUE(record(example("regions", "clang"), {"3000", "10"}, regions).exited(0));
  const json r = json_of_run(
      {TASKLENS_BIN, "whatif", "--format", "json", "--region", "leaf=4", regions}, tight);
  ASSERT_FALSE(r.is_null());
  EXPECT_NE(r["warnings"].dump().find("(--stream, or its DAG does not fit in the memory)"),
            std::string::npos)
      << r["warnings"];
  ASSERT_EQ(r["units"].size(), 2u) << r.dump();  // alone, and at its own factor
  EXPECT_EQ(r["units"][0]["unit"], "region leaf");
  EXPECT_GT(r["units"][0]["work"].get<uint64_t>(), 0u);
  expect_one_line(run({TASKLENS_BIN, "whatif", "--stream", "--region", "nowhere", regions}), 2,
                  "--region nowhere: no region of that name; `tasklens whatif --list` shows the "
                  "recorded ones");
  expect_one_line(run({TASKLENS_BIN, "whatif", "--stream", "--fragment", "fib.c:1-2", fib}), 2,
                  "--fragment fib.c:1-2: no code fragment file:L1-L2 like that");
  expect_one_line(run({TASKLENS_BIN, "whatif", "--stream", "--site", "nowhere.c:1", fib}), 2,
                  "--site nowhere.c:1: no construct site there");
  expect_one_line(run({TASKLENS_BIN, "whatif", "--stream", "--site", "x.c:1", detach}), 5,
                  "detach.tlens: the recording has detached tasks (detach clauses), which "
                  "tasklens cannot read in one pass yet");

  const std::string tbb = path("tbb.tlens");  // a parallel_pipeline of 1024 items: over 400 KiB
  ASSERT_TRUE(record(std::string(TASKLENS_EXAMPLES_DIR) + "/tbb_flow",
                     {"pipeline", "1024", "1", "1", "1", "1", "1"}, tbb)
                  .exited(0));
  for (const char* command : {"report", "tasks", "advise"})
    expect_one_line(run({TASKLENS_BIN, command, tbb}, tight), 6,
                    "tbb.tlens: the DAG of this recording does not fit in the memory, and it has "
                    "oneTBB parallel_pipeline calls");
  expect_one_line(run({TASKLENS_BIN, "report", "--stream", tbb}), 5,
                  "tbb.tlens: the recording has oneTBB parallel_pipeline calls, which tasklens "
                  "cannot read in one pass yet");
}

}  // namespace
}  // namespace tasklens::e2e
