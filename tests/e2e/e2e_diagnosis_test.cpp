// End-to-end tests of the verdict that opens `report` and of the code locations every row must
// name: on bundled examples whose bottleneck is known, the diagnosis names it at the right place,
// and no row names a module offset. Whether a finding is given depends on the recording's
// timings (a share of the span, a task size): judged by the timing policy (e2e_timing.hpp); where
// it points, once given, is exact. (The findings' rules are tested exactly on synthetic models
// by the unit tests.)
#include <regex>

#include "e2e_util.hpp"

namespace tasklens::e2e {
namespace {

class Diagnosis : public E2E {
 protected:
  // The diagnosis item of `kind` in `report`, or null.
  static json find(const json& report, const std::string& kind) {
    if (report.is_object() && report.contains("diagnosis"))
      for (const json& d : report["diagnosis"])
        if (d["kind"] == kind) return d;
    return json();
  }
  // A recording of `exe args` whose diagnosis has a finding of `kind`, by the timing policy: its
  // absence is soft (a timing), `also` may add checks of the same recording. Returns the sample
  // judged last.
  Profiled with_finding(const std::string& exe, const std::vector<std::string>& args,
                        const std::string& kind, int threads = 2, const Check& also = nullptr,
                        Needs needs = Needs::RealTiming) {
    return profile_judged(
        exe, args, "a " + kind + " finding",
        [&](const Profiled& run) {
          Violations v = also ? also(run) : Violations();
          if (find(run.report, kind).is_null())
            v.soft += "no " + kind + " finding in " +
                      run.report.value("diagnosis", json::array()).dump(1) + "\n";
          return v;
        },
        default_env(threads), 0, needs);
  }
  // The diagnosis item of `kind`, or null (a test failure) when there is none.
  static json item(const json& report, const std::string& kind) {
    if (!report.contains("diagnosis")) {
      ADD_FAILURE() << "no diagnosis in the report";
      return json();
    }
    for (const json& d : report["diagnosis"])
      if (d["kind"] == kind) return d;
    ADD_FAILURE() << "no " << kind << " finding in " << report["diagnosis"].dump(1);
    return json();
  }
  // "file.c:L" or "file.c:L1-L2" in `file`, whose first line is within [lo, hi].
  static void expect_location(const json& d, const std::string& file, int lo, int hi) {
    ASSERT_FALSE(d.is_null());
    const std::string loc = d["location"].get<std::string>();
    std::smatch m;
    ASSERT_TRUE(std::regex_match(loc, m, std::regex(R"(([^:]+):(\d+)(-\d+)?)"))) << loc;
    EXPECT_EQ(m[1].str(), file) << loc;
    const int line = std::stoi(m[2].str());
    EXPECT_GE(line, lo) << loc;
    EXPECT_LE(line, hi) << loc;
    for (const char* key : {"finding", "evidence", "advice"})
      EXPECT_FALSE(d[key].get<std::string>().empty()) << key;
  }
  static void expect_no_offsets(const json& report) {
    for (const json& s : report["sites"]) {
      EXPECT_EQ(s["site"].get<std::string>().find("+0x"), std::string::npos) << s.dump();
      if (s.contains("fragments")) {
        for (const json& f : s["fragments"])
          EXPECT_EQ(f["fragment"].get<std::string>().find("+0x"), std::string::npos) << f.dump();
      }
    }
  }
};

// amdahl: serial code before and after the parallel part. The diagnosis names that code by its
// lines in amdahl.c, and the serial row lists its fragments with lines, not "(outside any
// construct)" alone.
TEST_F(Diagnosis, SerialCodeIsNamedByItsLines) {
  for (const char* cc : {"clang", "gcc"}) {
    SCOPED_TRACE(cc);
    const json r = with_finding(example("amdahl", cc), {"200000", "400000", "8"}, "serial-code", 2,
                                nullptr, Needs::SpinTiming)
                       .report;
    if (r.is_null() || find(r, "serial-code").is_null()) continue;
    expect_location(item(r, "serial-code"), "amdahl.c", 40, 80);
    expect_no_offsets(r);
    bool listed = false;
    for (const json& s : r["sites"])
      if (s["kind"] == "program" && s.contains("fragments") && !s["fragments"].empty()) {
        listed = true;
        EXPECT_NE(s["fragments"][0]["fragment"].get<std::string>().find("amdahl.c:"),
                  std::string::npos)
            << s.dump();
      }
    EXPECT_TRUE(listed) << "the serial row does not list its fragments";
  }
}

// health at a small size: tasks of tens of nanoseconds. The diagnosis says to raise the cut-off
// at the task's site (health.c's task pragma in sim_village).
TEST_F(Diagnosis, TinyTasksAreNamedAtTheirSite) {
  const json r = with_finding(example("suite_health", "clang"), {"5", "200"}, "tiny-tasks").report;
  if (r.is_null() || find(r, "tiny-tasks").is_null()) return;
  const json d = item(r, "tiny-tasks");
  expect_location(d, "health.c", 100, 200);
  if (!d.is_null()) {
    EXPECT_TRUE(contains_nocase(d["advice"], "cut-off")) << d.dump();
  }
  expect_no_offsets(r);
}

// A static loop whose second half costs twice the first: uneven shares at the loop's line.
TEST_F(Diagnosis, UnevenStaticSharesAreNamedAtTheLoop) {
  const json r = with_finding(example("loop_forms", "clang"), {"imbalanced"}, "uneven-shares", 2,
                              nullptr, Needs::SpinTiming)
                     .report;
  if (r.is_null() || find(r, "uneven-shares").is_null()) return;
  const int line = marker_line("loop_forms.c", "site: imbalanced");
  const json d = item(r, "uneven-shares");
  expect_location(d, "loop_forms.c", line, line);
  if (!d.is_null()) {
    EXPECT_TRUE(contains_nocase(d["advice"], "schedule(dynamic)")) << d.dump();
  }
}

// sparselu's `depend` form (KaStORS sparselu_task_dep) on small blocks: one single creates every
// task, each after its dependences are matched, and the tasks (2 x 2 blocks) end long before the
// next is made. The diagnosis names the single as a creator too slow for its tasks and asks for
// larger tiles; nothing asks to split the single (creating `depend` tasks from several threads
// would lose their order).
TEST_F(Diagnosis, ACreatorTooSlowForItsTasksIsNamedAtTheSingle) {
  const int line = marker_line("suite/sparselu.c", "tasks = sparselu_depend(m);");
  for (const char* cc : {"clang", "gcc"}) {
    SCOPED_TRACE(cc);
    const json r =
        with_finding(example("suite_sparselu", cc), {"60", "2", "2"}, "creation-bound").report;
    if (r.is_null() || find(r, "creation-bound").is_null()) continue;
    const json d = item(r, "creation-bound");
    expect_location(d, "sparselu.c", line - 2, line);
    EXPECT_NE(d["advice"].get<std::string>().find("larger tasks"), std::string::npos) << d.dump();
    EXPECT_NE(d["advice"].get<std::string>().find("`depend`"), std::string::npos) << d.dump();
    for (const json& x : r["diagnosis"])
      if (x["kind"] == "whatif-gain" || x["kind"] == "low-parallelism") {
        EXPECT_NE(x["location"], d["location"]) << x.dump();
      }
  }
}

// stencil with 2000 time steps of two `parallel for` over 2 cells of 1 unit: entering each
// region costs about as much as its loop. The diagnosis asks for the team to be created once,
// at a region's line, and nothing asks to split the regions' own strands. The gcc build's
// regions hold their loops' work in their own strands (gcc splits a static loop itself): that
// is team-bound, not region-entries.
TEST_F(Diagnosis, ARegionEnteredAgainAndAgainIsNamed) {
  const std::vector<std::string> args = {"2000", "2", "1", "1", "1"};
  // advise's steps through those regions' own code say what parallelizes them: a timing of the
  // same recording (the regions' own strands' share of a fragment's work).
  auto advise_notes = [](const Profiled& run) {
    Violations v;
    const json advice = tasklens_command_json("advise", {run.trace});
    bool noted = false;
    for (const json& n : advice.value("notes", json::array()))
      noted = noted || n.get<std::string>().find("#pragma omp parallel") != std::string::npos;
    if (!noted) v.soft = "advise has no note about entering the team once: " + advice.dump(1);
    return v;
  };
  Profiled clang = with_finding(example("stencil", "clang"), args, "region-entries", 2,
                                advise_notes, Needs::SpinTiming);
  const json& r = clang.report;
  if (!r.is_null() && !find(r, "region-entries").is_null()) {
    const json d = item(r, "region-entries");
    expect_location(d, "stencil.c", marker_line("stencil.c", "site: stencil-flux"),
                    marker_line("stencil.c", "site: stencil-update"));
    if (!d.is_null()) {
      EXPECT_NE(d["advice"].get<std::string>().find("#pragma omp parallel"), std::string::npos)
          << d.dump();
      EXPECT_NE(d["finding"].get<std::string>().find("entered 2000 times"), std::string::npos)
          << d.dump();
    }
    for (const json& x : r["diagnosis"]) {
      if (x["kind"] != "whatif-gain") continue;
      EXPECT_EQ(x["finding"].get<std::string>().find("splitting the parallel"), std::string::npos)
          << x.dump();
    }
  }
  const json g = profile(example("stencil", "gcc"), args).report;
  if (!g.is_null()) {
    for (const json& x : g["diagnosis"]) EXPECT_NE(x["kind"], "region-entries") << x.dump();
  }
}

// report --base: the false-sharing example's shared loop does several times its 1-thread work
// on 2 threads; the diagnosis names it. A base of another program is refused.
TEST_F(Diagnosis, WorkInflationFromABaseRecordingIsNamedAtItsLoop) {
  const std::string one = path("one.tlens"), two = path("two.tlens"), other = path("other.tlens");
  const std::string exe = example("false_sharing", "clang");
  // A base of another program is refused.
  ASSERT_TRUE(record(exe, {}, two, default_env(2)).exited(0));
  ASSERT_TRUE(record(example("fib", "clang"), {"8", "100"}, other).exited(0));
  RunResult bad = tasklens_command("report", {"--base", other, two});
  EXPECT_TRUE(bad.exited(2)) << bad.describe();
  EXPECT_NE(bad.err.find("not the same program"), std::string::npos) << bad.err;
  // A sample: the 1-thread base and the 2-thread recording (at real-time priority where the test
  // may use it, as e2e_diff_test.cpp's), judged only when the program's own times in those runs
  // show false sharing.
  std::vector<std::string> rt;
  if (realtime_available()) rt = {"/usr/bin/chrt", "-f", "10"};
  int n = 0;
  auto take = [&] {
    Profiles runs;
    ++n;
    for (int threads : {1, 2}) {
      Profiled p;
      p.trace = path("fs" + std::to_string(threads) + "-" + std::to_string(n) + ".tlens");
      std::vector<std::string> argv = rt;
      argv.insert(argv.end(), {TASKLENS_BIN, "record", "-o", p.trace, "--", exe});
      p.rec = run(argv, default_env(threads));
      EXPECT_TRUE(p.rec.exited(0)) << p.rec.describe();
      p.report = report_json(p.trace, &p.rep);
      runs.push_back(p);
    }
    return runs;
  };
  json r;
  auto judge = [&](const Profiles& runs) {
    Violations v;
    const FalseSharingProbe own = false_sharing_of_runs(runs[0].rec.out, runs[1].rec.out);
    if (!own.shows()) v.disturbed = "in these runs " + own.describe();
    r = tasklens_command_json("report", {"--base", runs[0].trace, runs[1].trace});
    if (find(r, "work-inflation").is_null())
      v.soft = "no work-inflation finding in " + r.value("diagnosis", json::array()).dump() + "\n";
    return v;
  };
  const Profiles runs = judge_profiles("report --base: the false-sharing loop's work inflation",
                                       take, judge, Needs::RealTiming);
  if (!find(r, "work-inflation").is_null()) {
    const int line = marker_line("false_sharing.c", "site: fs-shared");
    expect_location(item(r, "work-inflation"), "false_sharing.c", line, line);
  }
}

// A program with ample parallelism and nothing wrong has no finding about its code; the table
// opens with the diagnosis when there is one.
TEST_F(Diagnosis, TheTableOpensWithTheVerdict) {
  const Profiled p = with_finding(example("amdahl", "clang"), {"200000", "400000", "8"},
                                  "serial-code", 2, nullptr, Needs::SpinTiming);
  if (find(p.report, "serial-code").is_null()) return;
  RunResult r = tasklens_command("report", {p.trace});
  ASSERT_TRUE(r.exited(0)) << r.describe();
  const size_t header = r.out.find('\n');
  ASSERT_NE(header, std::string::npos);
  EXPECT_EQ(r.out.compare(header + 1, 9, "Diagnosis"), 0) << r.out.substr(0, 400);
  EXPECT_NE(r.out.find("1. "), std::string::npos);
}

// A header-only parallel library (examples/minipar/minipar.h) creates every construct inside its
// header. Under the program's source tree it is the program's code by default: rows name the
// header. Named as a library (--library-path, or TASKLENS_LIBRARY_PATH), the rows name the
// program's calls, with the library's line kept as detail (`library_site`).
class LibraryCode : public Diagnosis {
 protected:
  json report(const std::string& trace, const std::vector<std::string>& extra,
              const EnvOverrides& env = default_env()) {
    std::vector<std::string> argv = {TASKLENS_BIN, "report", "--format", "json"};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.push_back(trace);
    RunResult r = run(argv, env);
    EXPECT_TRUE(r.exited(0)) << r.describe();
    return json::parse(r.out, nullptr, false);
  }
  static json row(const json& report, const std::string& kind) {
    for (const json& s : report["sites"])
      if (s["kind"] == kind) return s;
    ADD_FAILURE() << "no " << kind << " row:\n" << site_list(report);
    return json();
  }
  void expect_at(const json& r, const std::string& kind, const std::string& file,
                 const std::string& marker) {
    const json s = row(r, kind);
    if (s.is_null()) return;
    EXPECT_EQ(s["site"], file + ":" + std::to_string(marker_line(file, marker))) << s.dump();
    ASSERT_TRUE(s.contains("library_site")) << s.dump();
    EXPECT_EQ(s["library_site"].get<std::string>().rfind("minipar.h:", 0), 0u) << s.dump();
  }
};

TEST_F(LibraryCode, OpenMPConstructsOfAHeaderOnlyLibraryNameTheCaller) {
  for (const char* cc : {"clang", "gcc"}) {
    SCOPED_TRACE(cc);
    const std::string trace = path(std::string("minipar_") + cc + ".tlens");
    RunResult rec = record(example("minipar_demo", cc), {}, trace);
    ASSERT_TRUE(rec.exited(0)) << rec.describe();
    // By default the header is the program's own code (it is in the program's source tree).
    const json plain = report(trace, {});
    const json task = row(plain, "task");
    if (!task.is_null()) {
      EXPECT_EQ(task["site"].get<std::string>().rfind("minipar.h:", 0), 0u) << task.dump();
      EXPECT_FALSE(task.contains("library_site"));
    }
    const json named = report(trace, {"--library-path", "minipar"});
    expect_at(named, "task", "minipar_demo.cpp", "site: demo-par-do");
    // gcc's line table gives its taskloop call the line of tl_work (a known gcc quirk).
    if (std::string(cc) == "clang")
      expect_at(named, "taskloop", "minipar_demo.cpp", "site: demo-for");
    // The same from the environment, and with an absolute path prefix.
    EnvOverrides env = default_env();
    env["TASKLENS_LIBRARY_PATH"] = std::string(TASKLENS_SOURCE_DIR) + "/examples/minipar/";
    expect_at(report(trace, {}, env), "task", "minipar_demo.cpp", "site: demo-par-do");
  }
}

TEST_F(LibraryCode, OneTbbCallsOfAHeaderOnlyLibraryNameTheCaller) {
  const std::string trace = path("minipar_tbb.tlens");
  RunResult rec = record(std::string(TASKLENS_EXAMPLES_DIR) + "/minipar_tbb", {}, trace);
  ASSERT_TRUE(rec.exited(0)) << rec.describe();
  expect_at(report(trace, {"--library-path", "minipar"}), "parallel_for", "minipar_tbb.cpp",
            "site: minipar-tbb-for");
}

}  // namespace
}  // namespace tasklens::e2e
