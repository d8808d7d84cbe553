// Shared helpers of the end-to-end tests (tests/e2e_*_test.cpp): run a command with environment
// overrides and capture its output and status, a fresh temporary directory per test, `tasklens
// record` / `tasklens report --format json`, and checks of a report against the analytic work
// and span of the example programs (examples/, docs/examples.md), judged by the timing policy of
// e2e_timing.hpp.
//
// Compile definitions (tests/CMakeLists.txt): TASKLENS_BIN, TASKLENS_EXAMPLES_DIR,
// TASKLENS_SOURCE_DIR.
#pragma once

#include <fcntl.h>
#include <gtest/gtest.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <x86intrin.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "e2e_timing.hpp"

extern char** environ;

namespace tasklens::e2e {

using nlohmann::json;

// TSC ticks per second, measured once against the steady clock (to turn units into seconds for
// messages and the few checks that compare with the system's clocks).
inline double tsc_ticks_per_second() {
  static const double rate = [] {
    const auto t0 = std::chrono::steady_clock::now();
    const uint64_t c0 = __rdtsc();
    while (std::chrono::steady_clock::now() - t0 < std::chrono::milliseconds(30)) {
    }
    const uint64_t c1 = __rdtsc();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return static_cast<double>(c1 - c0) / s;
  }();
  return rate;
}

// ---------------------------------------------------------------------------------------------
// Running commands

struct RunResult {
  std::string command;  // for messages
  int exit_code = -1;   // exit status when the process exited, -1 when killed by a signal
  int signal = 0;       // terminating signal, 0 when the process exited
  bool timed_out = false;
  bool exec_failed = false;
  double seconds = 0;          // wall time
  double cpu_seconds = 0;      // user + system time of the command and the children it waited for
  uint64_t max_rss_bytes = 0;  // peak resident memory of the command (or its largest child)
  std::string out, err;

  bool exited(int code) const { return signal == 0 && !timed_out && exit_code == code; }
  std::string status() const {
    if (timed_out) return "timed out";
    if (signal != 0) return "killed by signal " + std::to_string(signal);
    return "exit " + std::to_string(exit_code);
  }
  // Everything a failure message needs.
  std::string describe() const {
    std::ostringstream s;
    s << "`" << command << "`: " << status() << " after " << seconds << " s\n--- stdout ---\n"
      << out.substr(0, 4000) << "\n--- stderr ---\n"
      << err.substr(0, 4000);
    return s.str();
  }
};

// Environment changes for one command: a value sets the variable, nullopt removes it.
using EnvOverrides = std::map<std::string, std::optional<std::string>>;

// The environment every test program runs in: 2 OpenMP threads on the 2-core test machines, and
// none of the user's OpenMP settings that would change the analytic values.
inline EnvOverrides default_env(int threads = 2) {
  return {{"OMP_NUM_THREADS", std::to_string(threads)},
          {"OMP_MAX_ACTIVE_LEVELS", std::nullopt},
          {"OMP_NESTED", std::nullopt},
          {"OMP_SCHEDULE", std::nullopt},
          {"OMP_DYNAMIC", std::nullopt},
          {"OMP_THREAD_LIMIT", std::nullopt},
          {"OMP_TOOL", std::nullopt},
          {"OMP_TOOL_LIBRARIES", std::nullopt},
          {"LD_PRELOAD", std::nullopt}};
}

inline std::string shell_quote_join(const std::vector<std::string>& argv) {
  std::string s;
  for (const auto& a : argv) {
    if (!s.empty()) s += ' ';
    if (a.find_first_of(" \t'\"\\$") == std::string::npos && !a.empty()) {
      s += a;
    } else {
      s += '\'';
      for (char c : a) s += c == '\'' ? std::string("'\\''") : std::string(1, c);
      s += '\'';
    }
  }
  return s;
}

// Runs argv[0] (a path) with argv, the current environment changed by `env`, stdin from
// /dev/null, and captures stdout and stderr. The child runs in its own process group, which is
// killed if the command outlives `timeout_s`.
inline RunResult run(const std::vector<std::string>& argv, const EnvOverrides& env = default_env(),
                     double timeout_s = 120) {
  RunResult r;
  r.command = shell_quote_join(argv);
  if (argv.empty()) return r;

  // Build argv and envp before forking (nothing but async-signal-safe calls after fork).
  std::vector<std::string> env_strings;
  for (char** e = environ; *e; ++e) {
    std::string kv = *e;
    const std::string key = kv.substr(0, kv.find('='));
    if (env.count(key) == 0) env_strings.push_back(kv);
  }
  for (const auto& [key, value] : env)
    if (value) env_strings.push_back(key + "=" + *value);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);

  int out_pipe[2], err_pipe[2];
  if (pipe2(out_pipe, O_CLOEXEC) != 0 || pipe2(err_pipe, O_CLOEXEC) != 0) {
    r.err = std::string("pipe: ") + strerror(errno);
    return r;
  }
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid < 0) {
    r.err = std::string("fork: ") + strerror(errno);
    return r;
  }
  if (pid == 0) {
    setpgid(0, 0);
    const int devnull = open("/dev/null", O_RDONLY);
    if (devnull >= 0) dup2(devnull, 0);
    dup2(out_pipe[1], 1);
    dup2(err_pipe[1], 2);
    execve(args[0], args.data(), envp.data());
    const char msg[] = "e2e: execve failed\n";
    (void)!write(2, msg, sizeof msg - 1);
    _exit(127);
  }
  setpgid(pid, pid);  // also from the parent, so that the group exists before any kill
  close(out_pipe[1]);
  close(err_pipe[1]);

  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&r.out, &r.err};
  bool open_fd[2] = {true, true};
  int status = 0;
  rusage usage{};
  bool reaped = false;
  double reaped_at = 0;
  char buf[65536];
  while (open_fd[0] || open_fd[1]) {
    for (int i = 0; i < 2; i++) fds[i].fd = open_fd[i] ? (i == 0 ? out_pipe[0] : err_pipe[0]) : -1;
    const int n = poll(fds, 2, 50);
    if (n < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; i++) {
      if (!open_fd[i] || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = read(fds[i].fd, buf, sizeof buf);
      if (got > 0) {
        sinks[i]->append(buf, static_cast<size_t>(got));
      } else if (got == 0 || (errno != EINTR && errno != EAGAIN)) {
        open_fd[i] = false;
      }
    }
    if (!reaped && wait4(pid, &status, WNOHANG, &usage) == pid) {
      reaped = true;
      reaped_at = elapsed();
    }
    // A grandchild that outlives the command may hold the pipes open: stop reading a little
    // after the command itself has ended.
    if (reaped && elapsed() - reaped_at > 2.0) break;
    if (!reaped && elapsed() > timeout_s) {
      r.timed_out = true;
      kill(-pid, SIGKILL);
    }
  }
  close(out_pipe[0]);
  close(err_pipe[0]);
  if (!reaped) wait4(pid, &status, 0, &usage);
  r.seconds = elapsed();
  r.max_rss_bytes = static_cast<uint64_t>(usage.ru_maxrss) * 1024;  // (Linux: in KiB)
  r.cpu_seconds = static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
                  1e-6 * static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec);
  if (WIFEXITED(status)) {
    r.exit_code = WEXITSTATUS(status);
    r.exec_failed = r.exit_code == 127 && r.err.find("e2e: execve failed") != std::string::npos;
  } else if (WIFSIGNALED(status)) {
    r.signal = WTERMSIG(status);
  }
  return r;
}

// ---------------------------------------------------------------------------------------------
// Paths

// A built example: TASKLENS_EXAMPLES_DIR/<name>_<compiler>, compiler "clang" or "gcc".
inline std::string example(const std::string& name, const std::string& compiler) {
  return std::string(TASKLENS_EXAMPLES_DIR) + "/" + name + "_" + compiler;
}

inline std::string example_source(const std::string& file) {
  return std::string(TASKLENS_SOURCE_DIR) + "/examples/" + file;
}

// 1-based number of the first line of examples/<file> that ends with `marker` (the examples mark
// their construct lines with a comment at the end, like `// site: fib-task-1`); 0 (and a test
// failure) when there is none.
inline int marker_line(const std::string& file, const std::string& marker) {
  std::ifstream in(example_source(file));
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back()))) line.pop_back();
    if (line.size() >= marker.size() &&
        line.compare(line.size() - marker.size(), marker.size(), marker) == 0)
      return n;
  }
  ADD_FAILURE() << "no line containing '" << marker << "' in " << example_source(file);
  return 0;
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline void write_file(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

// Lines of `text` without the empty last one: "a\n" and "a" are one line.
inline std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  while (!lines.empty() && lines.back().empty()) lines.pop_back();
  return lines;
}

inline bool contains_nocase(std::string haystack, std::string needle) {
  auto lower = [](std::string& s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  };
  lower(haystack);
  lower(needle);
  return haystack.find(needle) != std::string::npos;
}

// ---------------------------------------------------------------------------------------------
// tasklens record / report

// `TASKLENS_BIN record [flags] -o <out> -- <exe> <args>`.
inline RunResult record(const std::string& exe, const std::vector<std::string>& args,
                        const std::string& out, const EnvOverrides& env = default_env(),
                        const std::vector<std::string>& flags = {}) {
  std::vector<std::string> argv = {TASKLENS_BIN, "record"};
  argv.insert(argv.end(), flags.begin(), flags.end());
  argv.insert(argv.end(), {"-o", out, "--", exe});
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, env);
}

// `TASKLENS_BIN report <trace> --format json`, parsed. On failure (non-zero exit, unparsable
// output) adds a test failure and returns a null json; `raw` receives the run either way.
inline json report_json(const std::string& trace, RunResult* raw = nullptr) {
  RunResult r = run({TASKLENS_BIN, "report", trace, "--format", "json"});
  if (raw) *raw = r;
  if (!r.exited(0)) {
    ADD_FAILURE() << "report failed: " << r.describe();
    return json();
  }
  try {
    return json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "report output is not JSON (" << e.what() << "): " << r.describe();
    return json();
  }
}

// `tasklens <command> args...`.
inline RunResult tasklens_command(const std::string& command,
                                  const std::vector<std::string>& args) {
  std::vector<std::string> argv = {TASKLENS_BIN, command};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv);
}

// `argv` run with `env`, its output parsed; a failed command or output that is not JSON is a
// test failure and gives a null json.
inline json json_of_run(const std::vector<std::string>& argv,
                        const EnvOverrides& env = default_env()) {
  const RunResult r = run(argv, env);
  if (!r.exited(0)) {
    ADD_FAILURE() << r.describe();
    return json();
  }
  try {
    return json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "): " << r.describe();
    return json();
  }
}

// `tasklens <command> args... --format json`, parsed as json_of_run does.
inline json tasklens_command_json(const std::string& command, std::vector<std::string> args) {
  std::vector<std::string> argv = {TASKLENS_BIN, command};
  argv.insert(argv.end(), args.begin(), args.end());
  argv.insert(argv.end(), {"--format", "json"});
  return json_of_run(argv);
}

// A refusal as every command gives one: exit `code`, nothing on stdout, one line on stderr that
// says `says`.
inline void expect_one_line(const RunResult& r, int code, const std::string& says) {
  EXPECT_TRUE(r.exited(code)) << r.describe();
  EXPECT_EQ(lines_of(r.err).size(), 1u) << r.describe();
  EXPECT_NE(r.err.find(says), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "") << r.describe();
}

// ---------------------------------------------------------------------------------------------
// Checks on a report

inline const std::vector<std::string>& site_kinds() {
  static const std::vector<std::string> kinds = {
      "program",         "parallel",        "task",          "taskloop",      "loop",
      "sections",        "single",          "taskgroup",     "masked",        "parallel_for",
      "parallel_reduce", "parallel_invoke", "parallel_sort", "tbb_algorithm", "arena_execute",
      "thread"};
  return kinds;
}

// The structural facts every report must satisfy, whatever the program: the JSON contract
// (docs/report-json.md), critical_path_percent summing to 100, no site with more
// work than the program.
inline void expect_report_invariants(const json& j, bool expect_complete = true) {
  ASSERT_TRUE(j.is_object()) << "no report";
  EXPECT_TRUE(j.contains("tasklens_version") && j["tasklens_version"].is_string() &&
              !j["tasklens_version"].get<std::string>().empty())
      << "tasklens_version missing";
  EXPECT_EQ(j.value("metric", ""), "tsc");
  ASSERT_TRUE(j.contains("complete") && j["complete"].is_boolean()) << "complete missing";
  if (expect_complete) {
    EXPECT_TRUE(j["complete"].get<bool>()) << "trace reported incomplete";
  }
  ASSERT_TRUE(j.contains("program") && j["program"].is_object()) << "program missing";
  const json& p = j["program"];
  const double work = num(p, "work"), span = num(p, "span"), par = num(p, "parallelism");
  ASSERT_FALSE(std::isnan(work) || std::isnan(span) || std::isnan(par))
      << "program work/span/parallelism missing: " << p.dump();
  EXPECT_GT(work, 0);
  EXPECT_GT(span, 0);
  EXPECT_LE(span, work * (1 + 1e-9)) << "span larger than work";
  if (span > 0) {
    EXPECT_NEAR(par, work / span, 1e-6 * work / span) << "parallelism != work/span";
  }

  ASSERT_TRUE(j.contains("sites") && j["sites"].is_array()) << "sites missing";
  double percent = 0;
  for (const json& s : j["sites"]) {
    const std::string name = s.value("site", "");
    const std::string kind = s.value("kind", "");
    EXPECT_FALSE(name.empty()) << "site without a name: " << s.dump();
    EXPECT_NE(std::find(site_kinds().begin(), site_kinds().end(), kind), site_kinds().end())
        << "unknown kind: " << s.dump();
    EXPECT_TRUE(s.contains("function")) << "site without function: " << s.dump();
    const double sw = num(s, "work"), ss = num(s, "span"), sp = num(s, "parallelism"),
                 count = num(s, "count"), cp = num(s, "critical_path_percent");
    EXPECT_FALSE(std::isnan(sw) || std::isnan(ss) || std::isnan(sp) || std::isnan(count) ||
                 std::isnan(cp))
        << "site field missing: " << s.dump();
    EXPECT_GE(count, 1) << s.dump();
    EXPECT_LE(sw, work * (1 + 1e-9)) << "site has more work than the program: " << s.dump();
    EXPECT_GE(cp, -1e-9) << s.dump();
    if (ss > 0) {
      EXPECT_NEAR(sp, sw / ss, 1e-6 * sw / ss + 1e-9) << s.dump();
    }
    percent += cp;
  }
  EXPECT_NEAR(percent, 100.0, 0.5) << "critical_path_percent does not sum to 100";
}

inline std::string site_file(const std::string& site) {
  const auto colon = site.rfind(':');
  return std::filesystem::path(site.substr(0, colon)).filename().string();
}
inline int site_line(const std::string& site) {
  const auto colon = site.rfind(':');
  if (colon == std::string::npos) return 0;
  return std::atoi(site.c_str() + colon + 1);
}

// Line window for a construct site. Both clang and gcc attribute the runtime call of a construct
// to the line of its pragma (measured: fib.c's task sites are reported at the `#pragma omp task`
// lines, the parallel at `#pragma omp parallel`); a compiler may instead use the line of the
// statement the pragma applies to, so a site is accepted on its pragma's line or the next one.
// (Not more: fib.c's two task pragmas are 2 lines apart.)
inline constexpr int kSiteLineSlack = 1;

// Rows of `kind` whose site is examples/<file> at a line within [line, line + kSiteLineSlack].
inline std::vector<json> sites_at(const json& j, const std::string& file, int line,
                                  const std::string& kind) {
  std::vector<json> found;
  if (!j.is_object() || !j.contains("sites")) return found;
  for (const json& s : j["sites"]) {
    const std::string name = s.value("site", "");
    if (s.value("kind", "") != kind || site_file(name) != file) continue;
    const int l = site_line(name);
    if (l >= line && l <= line + kSiteLineSlack) found.push_back(s);
  }
  return found;
}

inline std::vector<json> sites_of_kind(const json& j, const std::string& kind) {
  std::vector<json> found;
  if (!j.is_object() || !j.contains("sites")) return found;
  for (const json& s : j["sites"])
    if (s.value("kind", "") == kind) found.push_back(s);
  return found;
}

inline std::string site_list(const json& j) {
  std::ostringstream s;
  if (j.is_object() && j.contains("sites"))
    for (const json& site : j["sites"])
      s << "  " << site.value("kind", "?") << " " << site.value("site", "?") << " ("
        << site.value("function", "?") << ") count " << num(site, "count") << " work "
        << num(site, "work") / kUnitTicks << " u, span " << num(site, "span") / kUnitTicks
        << " u, cp " << num(site, "critical_path_percent") << "%\n";
  return s.str();
}

// Rows are per construct site (file:line and kind): a construct the compiler duplicated (a loop
// around a task pragma unrolled, a function with a parallel region inlined at two calls) must
// not be split into several rows.
inline void expect_one_row_per_site(const json& j) {
  ASSERT_TRUE(j.is_object() && j.contains("sites")) << "no report";
  std::map<std::pair<std::string, std::string>, int> rows;
  for (const json& s : j["sites"]) {
    const std::string name = s.value("site", "");
    if (name.find(':') == std::string::npos || name.find("+0x") != std::string::npos) continue;
    rows[std::make_pair(name, s.value("kind", ""))]++;
  }
  for (const auto& [key, n] : rows)
    EXPECT_EQ(n, 1) << n << " rows for the " << key.second << " site " << key.first << ":\n"
                    << site_list(j);
}

// The one site of `kind` at examples/<file>:<line of marker>; adds a failure (listing the
// report's sites) and returns a null json when there is not exactly one.
inline json expect_site(const json& j, const std::string& file, const std::string& marker,
                        const std::string& kind) {
  const int line = marker_line(file, marker);
  auto found = sites_at(j, file, line, kind);
  if (found.size() != 1) {
    ADD_FAILURE() << "expected one " << kind << " site at " << file << ":" << line << " (+"
                  << kSiteLineSlack << "), found " << found.size() << "; sites:\n"
                  << site_list(j);
    return json();
  }
  return found[0];
}

// ---------------------------------------------------------------------------------------------
// Fixture

// A fresh temporary directory per test; kept (and named in the output) when the test fails.
class E2E : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string templ = (std::filesystem::temp_directory_path() / "tasklens-e2e-XXXXXX").string();
    ASSERT_NE(mkdtemp(templ.data()), nullptr) << strerror(errno);
    dir_ = templ;
  }
  void TearDown() override {
    if (dir_.empty()) return;
    if (HasFailure()) {
      std::cerr << "[ e2e      ] kept " << dir_ << " for inspection\n";
    } else {
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  std::string path(const std::string& name) const { return dir_ + "/" + name; }

 public:
  struct Profiled {
    RunResult rec;  // the `tasklens record` run
    RunResult rep;  // the `tasklens report` run
    json report;    // null when the report failed
    std::string trace;
    Verdict verdict = Verdict::Pass;  // profile_analytic's judgement of its timing
    SpinOverrun overrun;              // the program's own account of its spins (work.h)
  };
  // A test's own timing check of a profiled run (profile_analytic's `also`), by the policy of
  // e2e_timing.hpp: hard violations (exact facts, lower bounds) and soft ones (bands).
  using Check = std::function<Violations(const Profiled&)>;

 protected:
  // Records `exe args` (record must end with the program's exit code `expect_exit`, or, when it
  // is negative, like a program killed by signal -expect_exit: by it, or with 128 + it; and its
  // stderr must name the trace), reports it, and returns the parsed report.
  Profiled profile(const std::string& exe, const std::vector<std::string>& args,
                   const EnvOverrides& env = default_env(), int expect_exit = 0,
                   const std::vector<std::string>& record_flags = {}) {
    Profiled p;
    p.trace = path("run" + std::to_string(++runs_) + ".tlens");
    const std::string spins = path("run" + std::to_string(runs_) + ".spins");
    EnvOverrides with_report = env;
    with_report["TL_SPIN_REPORT"] = spins;
    p.rec = record(exe, args, p.trace, with_report, record_flags);
    p.overrun = SpinOverrun::read(spins);
    if (expect_exit >= 0) {
      EXPECT_TRUE(p.rec.exited(expect_exit)) << p.rec.describe();
    } else {
      EXPECT_TRUE(p.rec.signal == -expect_exit || p.rec.exited(128 - expect_exit))
          << p.rec.describe();
    }
    EXPECT_NE(p.rec.err.find(p.trace), std::string::npos)
        << "record's summary on stderr does not name the trace " << p.trace << ": "
        << p.rec.describe();
    p.report = report_json(p.trace, &p.rep);
    return p;
  }

  // profile(), with the recording's timing judged by `check` under the timing policy
  // (e2e_timing.hpp). Returns the recording judged last, for the test's exact checks.
  Profiled profile_judged(const std::string& exe, const std::vector<std::string>& args,
                          const std::string& what, const Check& check,
                          const EnvOverrides& env = default_env(), int expect_exit = 0,
                          Needs needs = Needs::SpinTiming) {
    Profiled judged;
    const std::string name =
        std::filesystem::path(exe).filename().string() + " " + shell_quote_join(args) + ": " + what;
    judged.verdict = judge_timing<Profiled>(
        name, needs, [&] { return profile(exe, args, env, expect_exit); }, check,
        [](const Profiled& run) { return std::vector<json>{run.report}; }, &judged);
    return judged;
  }

  // Several recordings judged together (a comparison: two builds, thread counts) by the timing
  // policy: `take` records a sample's recordings, `check` compares them; any one of them
  // disturbed makes the sample disturbed. Returns the sample judged last.
  using Profiles = std::vector<Profiled>;
  Profiles judge_profiles(const std::string& what, const std::function<Profiles()>& take,
                          const std::function<Violations(const Profiles&)>& check,
                          Needs needs = Needs::SpinTiming, Verdict* verdict = nullptr) {
    Profiles judged;
    const Verdict v = judge_timing<Profiles>(
        what, needs, take, check,
        [](const Profiles& runs) {
          std::vector<json> reports;
          for (const Profiled& r : runs) reports.push_back(r.report);
          return reports;
        },
        &judged);
    if (verdict) *verdict = v;
    return judged;
  }

  // profile_judged() with flags for `tasklens record` (--metric, --runtime...).
  Profiled profile_judged_with(const std::string& exe, const std::vector<std::string>& args,
                               const std::vector<std::string>& record_flags,
                               const std::string& what, const Check& check,
                               const EnvOverrides& env = default_env(),
                               Needs needs = Needs::SpinTiming) {
    Profiled judged;
    const std::string name =
        std::filesystem::path(exe).filename().string() + " " + shell_quote_join(args) + ": " + what;
    judged.verdict = judge_timing<Profiled>(
        name, needs, [&] { return profile(exe, args, env, 0, record_flags); }, check,
        [](const Profiled& run) { return std::vector<json>{run.report}; }, &judged);
    return judged;
  }

  // profile_judged() against `a`, the program's analytic profile, and `also`, a test's own
  // timing check of the same recording.
  Profiled profile_analytic(const std::string& exe, const std::vector<std::string>& args,
                            const Analytic& a, const EnvOverrides& env = default_env(),
                            int expect_exit = 0, const Check& also = nullptr,
                            Needs needs = Needs::SpinTiming) {
    return profile_judged(
        exe, args, "its analytic profile",
        [&](const Profiled& run) {
          Violations v = analytic_violations(run.report, a, run.overrun);
          if (also) add_violations(v, also(run));
          if (!v.hard.empty() || !v.soft.empty()) v.soft += "sites:\n" + site_list(run.report);
          return v;
        },
        env, expect_exit, needs);
  }

  // A check for profile_analytic's `also`: the one `kind` site at file:marker (hard: there must
  // be one) has at least 0.99 times `work` units (hard) and at most 1 + `over` times (soft).
  static Check site_work_check(const std::string& file, const std::string& marker,
                               const std::string& kind, double work, double over = 0.10) {
    return [=](const Profiled& run) {
      Violations v;
      auto found = sites_at(run.report, file, marker_line(file, marker), kind);
      std::ostringstream m;
      if (found.size() != 1) {
        m << "expected one " << kind << " site at " << file << " (" << marker << "), found "
          << found.size() << "\n";
        v.hard = m.str();
        return v;
      }
      const double units = num(found[0], "work") / kUnitTicks;
      m << kind << " at " << file << " (" << marker << "): work " << units << " units, want "
        << 0.99 * work << " to " << (1 + over) * work << "\n";
      if (units < 0.99 * work) v.hard = m.str();
      if (units > (1 + over) * work) v.soft = m.str();
      return v;
    };
  }

 private:
  std::string dir_;
  int runs_ = 0;
};

// Compilers the examples are built with; the name generator for parameterized tests.
inline std::string compiler_name(const ::testing::TestParamInfo<std::string>& info) {
  return info.param;
}

// Whether the test may run programs at real-time priority (root or CAP_SYS_NICE): then both
// threads of a 2-thread run hold both cores.
inline bool realtime_available() {
  static const bool ok = run({"/usr/bin/chrt", "-f", "10", "/bin/true"}).exited(0);
  return ok;
}

// What the false_sharing example's two loops did in a 1-thread and a 2-thread run, from the times
// each run printed ("loop seconds: shared S padded P"): the growth of each loop's work (threads x
// its time) from 1 thread to 2. False sharing showed when the shared loop's work grew at least
// 1.5x and twice as much as the padded loop's: two virtual CPUs on the two hardware threads of
// one core show none, and threads that did not run at once show none either.
struct FalseSharingProbe {
  double shared = 0, padded = 0;  // work ratios, 2 threads over 1 (0: a run printed no times)
  // Whether the program's own times show false sharing clearly: 10% beyond the bands the tests
  // hold tasklens's figures to (the shared loop's ratio 1.5 and twice the padded loop's, the
  // padded loop's within [0.6, 1.8]). tasklens's figures are another reading of the same loops,
  // a few percent apart: a sample whose own times sit on a band's edge cannot tell tasklens's
  // error from that difference. The padded loop is the control: when its own work grows or
  // shrinks beyond its band, the machine's speed changed between the two runs
  // (docs/examples.md), and the sample judges nothing.
  bool shows() const {
    return shared >= 1.5 * 1.1 && shared >= 2 * 1.1 * padded && padded >= 0.6 * 1.1 &&
           padded <= 1.8 / 1.1;
  }
  std::string describe() const {
    std::ostringstream s;
    s << "the program's own shared loop's work grew x" << shared << " on 2 threads and its "
      << "padded loop's x" << padded << " (false sharing shows at x" << 1.5 * 1.1
      << " and twice the padded loop's; the padded loop, the control, outside [" << 0.6 * 1.1
      << ", " << 1.8 / 1.1 << "] means the machine's speed changed between the runs)";
    return s.str();
  }
};
inline FalseSharingProbe false_sharing_of_runs(const std::string& out1, const std::string& out2) {
  auto times = [](const std::string& out, double& shared, double& padded) {
    const size_t at = out.find("loop seconds: shared ");
    return at != std::string::npos &&
           std::sscanf(out.c_str() + at, "loop seconds: shared %lf padded %lf", &shared, &padded) ==
               2 &&
           shared > 0 && padded > 0;
  };
  FalseSharingProbe p;
  double s1, p1, s2, p2;
  if (times(out1, s1, p1) && times(out2, s2, p2)) {
    p.shared = 2 * s2 / s1;
    p.padded = 2 * p2 / p1;
  }
  return p;
}

}  // namespace tasklens::e2e
