// End-to-end tests of user region annotations (include/tasklens/tasklens.h) on
// examples/regions.c and examples/regions_cpp.cpp, for the clang and the gcc builds: the programs
// run normally without tasklens (nothing linked, the weak references stay null) and with the
// recorder loaded but not recording; `tasklens record` stores their regions as RegionBegin and
// RegionEnd events whose name ids the trace's RegionNames records name, balanced and properly
// nested on every thread; nothing is recorded in a forked child or after the recorder ended its
// trace; and a killed program's trace still names every region its events use.
#include "e2e_util.hpp"
#include "trace/reader.hpp"

namespace tasklens::e2e {
namespace {

// The regions of a trace, by name, and what is wrong with them (one line per problem).
struct RegionLog {
  std::map<std::string, int> begins, ends;
  std::vector<std::string> names;  // TraceFile::region_names()
  std::string problems;
  int events = 0;
};

RegionLog read_regions(const std::string& path) {
  RegionLog log;
  try {
    trace::TraceFile t = trace::TraceFile::open(path);
    log.names = t.region_names();
    for (uint32_t thread = 0; thread < t.stream_count(); ++thread) {
      std::vector<uint8_t> bytes = t.stream(thread);
      trace::EventDecoder d = t.decoder(bytes);
      trace::Event e;
      std::vector<std::string> open;  // the thread's open regions, innermost last
      const std::string where = "thread " + std::to_string(thread) + ": ";
      while (d.next(e)) {
        if (e.kind != trace::EventKind::RegionBegin && e.kind != trace::EventKind::RegionEnd)
          continue;
        ++log.events;
        const uint64_t id = e.f[0];
        const std::string name = id < log.names.size() ? log.names[id] : "";
        if (name.empty()) log.problems += where + "name id " + std::to_string(id) + " unnamed\n";
        if (e.kind == trace::EventKind::RegionBegin) {
          ++log.begins[name];
          open.push_back(name);
        } else {
          ++log.ends[name];
          if (open.empty())
            log.problems += where + "end of '" + name + "' outside any region\n";
          else if (open.back() != name)
            log.problems += where + "end of '" + name + "' inside '" + open.back() + "'\n";
          else
            open.pop_back();
        }
      }
      for (const std::string& name : open) log.problems += where + "'" + name + "' never ends\n";
    }
  } catch (const trace::TraceError& e) {
    log.problems += std::string("unreadable trace: ") + e.what() + "\n";
  }
  return log;
}

std::string counts(const std::map<std::string, int>& m) {
  std::string s;
  for (const auto& [name, n] : m) s += " " + name + "=" + std::to_string(n);
  return s;
}

class Regions : public E2E, public ::testing::WithParamInterface<std::string> {
 protected:
  std::string exe(const std::string& name) const { return example(name, GetParam()); }

  // Records `name args`, checks the run (stdout as without tasklens, exit 0) and returns the
  // trace's regions.
  RegionLog record_regions(const std::string& name, const std::vector<std::string>& args) {
    std::vector<std::string> argv = {exe(name)};
    argv.insert(argv.end(), args.begin(), args.end());
    RunResult plain = run(argv);
    EXPECT_TRUE(plain.exited(0)) << plain.describe();
    const std::string trace = path(name + ".tlens");
    RunResult rec = record(exe(name), args, trace);
    EXPECT_TRUE(rec.exited(0)) << rec.describe();
    EXPECT_EQ(rec.out, plain.out) << "stdout changed by record";
    EXPECT_NE(rec.err.find("annotations live"), std::string::npos) << rec.describe();
    return read_regions(trace);
  }
};

// Nothing of tasklens is linked: without the recorder the annotations are inert, and with the
// recorder loaded but not recording (no `tasklens record`) they are live calls that do nothing.
TEST_P(Regions, ExamplesRunWithoutTasklensAndWithAnIdleRecorder) {
  for (const std::string name : {"regions", "regions_cpp"}) {
    SCOPED_TRACE(name);
    RunResult plain = run({exe(name)});
    ASSERT_TRUE(plain.exited(0)) << plain.describe();
    EXPECT_NE(plain.out.find("8 of 8 tasks ran"), std::string::npos) << plain.describe();
    EXPECT_NE(plain.out.find(": ok"), std::string::npos) << plain.describe();
    EXPECT_NE(plain.err.find("annotations off"), std::string::npos) << plain.describe();

    EnvOverrides env = default_env();
    env["LD_PRELOAD"] = TASKLENS_RECORDER_LIB;
    RunResult idle = run({exe(name)}, env);
    EXPECT_TRUE(idle.exited(0)) << idle.describe();
    EXPECT_EQ(idle.out, plain.out) << idle.describe();
    EXPECT_NE(idle.err.find("annotations live"), std::string::npos) << idle.describe();
  }
}

// Every region of regions.c, with its name, balanced and nested on every thread. The program
// forks a child that runs region "forked-child", and a destructor runs "after-finish" after the
// recorder ended the trace: neither may appear, not even as a name.
TEST_P(Regions, CRegionsAreRecordedWithTheirNamesBalancedPerThread) {
  RegionLog log = record_regions("regions", {"8", "200", "1"});
  EXPECT_EQ(log.problems, "");
  const std::map<std::string, int> want = {{"setup", 1},  {"tasks", 1},      {"combine", 1},
                                           {"leaf", 8},   {"leaf-inner", 8}, {"phase-0", 1},
                                           {"phase-1", 1}};
  EXPECT_EQ(log.begins, want) << "begins:" << counts(log.begins);
  EXPECT_EQ(log.ends, want) << "ends:" << counts(log.ends);
  std::vector<std::string> names = log.names, want_names;
  for (const auto& [name, n] : want) want_names.push_back(name);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(names, want_names) << "region_names() holds exactly the names of recorded regions";
}

TEST_P(Regions, CppScopeGuardsAreRecordedBalancedPerThread) {
  RegionLog log = record_regions("regions_cpp", {"8", "200"});
  EXPECT_EQ(log.problems, "");  // includes: cpp-inner-2 ends before cpp-inner (reverse order)
  const std::map<std::string, int> want = {{"cpp-main", 1},  {"cpp-spawn", 1},   {"cpp-leaf", 8},
                                           {"cpp-inner", 8}, {"cpp-inner-2", 8}, {"cpp-n8", 1},
                                           {"cpp-throw", 1}};
  EXPECT_EQ(log.begins, want) << "begins:" << counts(log.begins);
  EXPECT_EQ(log.ends, want) << "ends:" << counts(log.ends);
}

// Region events are extra events inside strands: the profile of the program stays its analytic
// one (regions.c, n=8, g=2000: W = 40000, S = 12000 units).
TEST_P(Regions, RegionEventsLeaveTheProfileUnchanged) {
  auto p = profile_analytic(exe("regions"), {}, {40000, 12000});
  expect_report_invariants(p.report);
  EXPECT_EQ(read_regions(p.trace).problems, "");
}

// A program killed with SIGKILL: its trace has no recorder end, but every name id that its
// flushed events use is named (a name's record is written before any event can carry its id).
TEST_P(Regions, KilledProgramsTraceNamesEveryRegionItRecorded) {
  const std::string trace = path("killed.tlens");
  RunResult rec = record(exe("regions"), {"8", "200", "2"}, trace);
  EXPECT_TRUE(rec.signal == SIGKILL || rec.exited(128 + SIGKILL)) << rec.describe();
  EXPECT_NE(rec.out.find("raising SIGKILL"), std::string::npos) << rec.describe();
  RegionLog log = read_regions(trace);
  EXPECT_EQ(log.problems, "");
  // Everything was flushed during the 300 ms pause before the kill.
  EXPECT_EQ(log.events, 2 * (5 + 2 * 8)) << "begins:" << counts(log.begins);
}

INSTANTIATE_TEST_SUITE_P(Compilers, Regions, ::testing::Values("clang", "gcc"), compiler_name);

}  // namespace
}  // namespace tasklens::e2e
