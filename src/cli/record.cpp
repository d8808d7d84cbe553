// `tasklens record`: a launcher. It starts the program with the recorder (and, by default, LLVM
// 16's OpenMP runtime) preloaded, passes its stdin/stdout/stderr, exit code and signals through
// unchanged, and adds a LaunchStatus record and a one-line summary at the end.
#include "cli/record.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include "cli/errors.hpp"
#include "cli/output_file.hpp"
#include "recorder/metric.hpp"
#include "recorder/switches.hpp"
#include "trace/reader.hpp"

namespace tasklens::cli {
namespace fs = std::filesystem;
namespace {

std::string exe_dir() {
  std::error_code ec;
  fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : p.parent_path().string();
}

std::string find_recorder() {
  if (const char* env = getenv("TASKLENS_RECORDER"); env && *env) return env;
  std::string dir = exe_dir();
  for (const std::string& c :
       {dir + "/libtasklens_recorder.so", dir + "/../lib/tasklens/libtasklens_recorder.so"})
    if (fs::exists(c)) return fs::canonical(c).string();
  throw EnvironmentError("cannot find libtasklens_recorder.so next to " + dir +
                         " or in ../lib/tasklens; set TASKLENS_RECORDER to its path");
}

// The OpenMP runtime to preload. "program" means: none, use the program's own.
std::string find_runtime(const std::string& requested) {
  if (requested == "program") return "";
  if (!requested.empty()) {
    if (!fs::exists(requested))
      throw UsageError("--runtime " + requested + ": no such file; give the path of a libomp.so.5");
    return fs::canonical(requested).string();
  }
  std::string dir = exe_dir();
  for (const std::string& c :
       {std::string(TASKLENS_OMP_RUNTIME), dir + "/../lib/tasklens/libomp.so.5",
        std::string(TASKLENS_SYSTEM_LIBOMP)})
    if (!c.empty() && fs::exists(c)) return fs::canonical(c).string();
  throw EnvironmentError(
      "no LLVM OpenMP runtime found to record with; run scripts/fetch-libomp16.sh or install "
      "libomp5-14 (apt-get install libomp-dev), or pass --runtime program for clang binaries");
}

std::string known_metrics() {
  std::string names;
  for (int i = 0; i < trace::kMetricCount; ++i)
    names += std::string(i ? ", " : "") + trace::to_string(static_cast<trace::Metric>(i));
  return names;
}

// `--metric a,b,c`: perf's names or aliases, the first the primary metric. `auto` (the default)
// is cycles where the machine has them, the TSC otherwise, and only allowed alone.
std::vector<trace::Metric> parse_metrics(const std::string& list) {
  if (list == "auto")  // counters measure only the program's own work: prefer them
    return {recorder::probe_metric(trace::Metric::Cycles) == 0 ? trace::Metric::Cycles
                                                               : trace::Metric::Tsc};
  std::vector<trace::Metric> metrics;
  std::vector<std::string> given;
  size_t pos = 0;
  for (;;) {
    size_t comma = list.find(',', pos);
    std::string name =
        list.substr(pos, comma == std::string::npos ? std::string::npos : comma - pos);
    if (name.empty())
      throw UsageError(fmt::format(
          "--metric {}: empty metric name at position {}; give a comma-separated list of "
          "metrics such as tsc,task-clock",
          list, metrics.size() + 1));
    if (name == "auto")
      throw UsageError("--metric " + list +
                       ": auto chooses one metric and cannot be combined with others; name the "
                       "metrics instead (tsc, cycles, ...)");
    trace::Metric m;
    if (!trace::metric_from_name(name.data(), name.size(), m))
      throw UsageError(fmt::format("--metric {}: unknown metric '{}'; use auto or a list of: {}",
                                   list, name, known_metrics()));
    for (size_t i = 0; i < metrics.size(); ++i)
      if (metrics[i] == m)
        throw UsageError(fmt::format(
            "--metric {}: metric '{}' is listed twice{}; name each metric once", list, name,
            given[i] == name ? std::string()
                             : fmt::format(" ('{}' is perf's alias of '{}')",
                                           given[i] == trace::to_string(m) ? name : given[i],
                                           trace::to_string(m))));
    metrics.push_back(m);
    given.push_back(name);
    if (comma == std::string::npos) break;
    pos = comma + 1;
  }
  if (metrics.size() > size_t(trace::kMaxMetrics))
    throw UsageError(fmt::format("--metric {}: {} metrics, at most {} can be recorded together",
                                 list, metrics.size(), trace::kMaxMetrics));
  return metrics;
}

// Refuses, before the program starts, metrics this machine cannot count (the recorder inside
// the program could only record zeros).
void check_metrics_available(const std::vector<trace::Metric>& metrics) {
  std::vector<trace::Metric> counters;
  for (trace::Metric m : metrics) {
    if (int err = recorder::probe_metric(m); err != 0)
      throw EnvironmentError(fmt::format(
          "metric '{}' is not available on this machine (perf_event_open: {}); use --metric tsc",
          trace::to_string(m), std::strerror(err)));
    if (m != trace::Metric::Tsc) counters.push_back(m);
  }
  if (int err = recorder::probe_metric_group(counters.data(), int(counters.size())); err != 0) {
    std::string names;
    for (trace::Metric m : counters)
      names += std::string(names.empty() ? "" : ",") + trace::to_string(m);
    throw EnvironmentError(fmt::format(
        "metrics {} cannot be counted together on this machine (perf_event_open: {}); record "
        "fewer hardware metrics at a time",
        names,
        err == EBUSY ? "the group never ran: fewer hardware counters than metrics"
                     : std::strerror(err)));
  }
}

std::string human_bytes(uint64_t b) {
  if (b < 10 * 1024) return fmt::format("{} B", b);
  if (b < 10 * 1024 * 1024) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.1f} MiB", b / (1024.0 * 1024.0));
}

// Tasks of a trace without the recorder's Finish record (a killed program): counted from the
// events, the only place they are.
uint64_t count_created_tasks(const std::string& path) {
  trace::TraceFile t = trace::TraceFile::open(path);
  uint64_t n = 0;
  for (uint32_t i = 0; i < t.stream_count(); ++i) {
    trace::EventDecoder d = t.decoder(i);
    trace::Event e;
    while (d.next(e))
      if (e.kind == trace::EventKind::TaskCreate) ++n;
  }
  return n;
}

}  // namespace

int run_record(const RecordOptions& opt) {
  if (opt.command.empty())
    throw UsageError("record needs a program to run: tasklens record [options] -- ./app args");
  if (opt.compression != "lz4" && opt.compression != "zstd" && opt.compression != "none")
    throw UsageError("--compression " + opt.compression +
                     ": unknown compression; use lz4 (the default), zstd or none");
  const std::vector<trace::Metric> metrics = parse_metrics(opt.metric);
  check_metrics_available(metrics);
  std::string metric_names;  // for the recorder: perf's names, comma-separated
  for (trace::Metric m : metrics)
    metric_names += std::string(metric_names.empty() ? "" : ",") + trace::to_string(m);
  const bool has_tsc =
      std::find(metrics.begin(), metrics.end(), trace::Metric::Tsc) != metrics.end();
  std::string recorder_lib = find_recorder();
  std::string runtime = find_runtime(opt.runtime);

  // Only a trace file is kept as .old: a directory or a device named by mistake (-o /tmp,
  // -o /dev/null) would be renamed away. A symlink is followed, as export's -o is
  // (output_file.hpp): the trace goes to its target, which is what is kept as .old, and the link
  // stays.
  const OutputTarget target = resolve_output(opt.output, "run.tlens");
  if (target.kind == OutputTarget::Kind::Stdout)
    throw UsageError(
        "-o -: a trace cannot go to standard output (the recorder writes it from inside the "
        "program, then completes it in place); give a file name, e.g. -o run.tlens");
  if (target.kind == OutputTarget::Kind::Stream)
    throw UsageError(
        fmt::format("-o {}: exists and is not a regular file (a device or a FIFO: a trace is "
                    "completed in place after the run); give a file name for the trace",
                    opt.output));
  fs::path out = fs::absolute(target.path);
  std::error_code ec;
  // Replacing the previous .old frees its pages, milliseconds for a large trace: it is unlinked
  // while held open here and closed while the program runs, which is when the kernel frees it.
  int previous_old = -1;
  const bool out_exists = target.kind == OutputTarget::Kind::Regular;
  // The recorder opens the trace inside the program: a directory it cannot write in is found
  // now, not after the run (which then said the program had never started OpenMP).
  const fs::path out_dir = out.parent_path();
  if (!fs::is_directory(out_dir, ec))
    throw UsageError(
        fmt::format("-o {}: there is no directory {}; create it or choose another "
                    "path",
                    opt.output, out_dir.string()));
  {  // Making a file there is the only sure test (access(2) says yes to root everywhere, even
     // in /proc). A file beside it, not it: an existing read-only trace is renamed, not opened.
    std::string probe = out.string() + ".probe-XXXXXX";
    const int fd = mkstemp(probe.data());
    if (fd < 0)
      throw UsageError(
          fmt::format("-o {}: cannot write the trace there ({}); choose a writable path",
                      opt.output, std::strerror(errno)));
    ::close(fd);
    ::unlink(probe.c_str());
  }
  if (out_exists) {
    const std::string old = out.string() + ".old";
    previous_old = ::open(old.c_str(), O_RDONLY | O_CLOEXEC);
    if (previous_old >= 0 && ::unlink(old.c_str()) != 0) {
      ::close(previous_old);
      previous_old = -1;
    }
    fs::rename(out, fs::path(old), ec);
    if (ec)
      throw EnvironmentError(fmt::format("cannot rename the existing {} to {}.old: {}",
                                         out.string(), out.string(), ec.message()));
  }

  std::string preload = recorder_lib;
  if (!runtime.empty()) preload += ":" + runtime;
  const char* old_preload = getenv("LD_PRELOAD");
  if (old_preload && *old_preload) preload += std::string(":") + old_preload;

  timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid < 0) throw EnvironmentError(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    setenv("TASKLENS_OUTPUT", out.c_str(), 1);
    setenv("TASKLENS_METRIC", metric_names.c_str(), 1);
    if (opt.flush_ms > 0) setenv("TASKLENS_FLUSH_MS", std::to_string(opt.flush_ms).c_str(), 1);
    setenv("TASKLENS_COMPRESSION", opt.compression.c_str(), 1);
    setenv("TASKLENS_SAVED_LD_PRELOAD", old_preload ? old_preload : "", 1);
    setenv("LD_PRELOAD", preload.c_str(), 1);
    std::vector<char*> argv;
    for (const std::string& a : opt.command) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    int err = errno;
    fmt::print(stderr, "tasklens: cannot run '{}': {}\n", opt.command[0], std::strerror(err));
    _exit(err == ENOENT ? 127 : 126);
  }
  // The first context-switch watcher in the system switches a kernel-wide static key on, with
  // an RCU grace period: 10-20 ms here, which would otherwise stall the program inside its first
  // parallel region. Holding one open across the run makes the recorder's own cheap; opening it
  // on a thread while the program starts overlaps the two (the key's lock serializes whoever
  // comes second).
  recorder::SwitchRing* arm = nullptr;
  std::thread background([&arm, has_tsc, previous_old] {
    if (has_tsc) arm = recorder::switch_ring_open();
    if (previous_old >= 0) ::close(previous_old);
  });
  // Like time(1): the terminal's signals go to the program; we wait for it either way.
  struct sigaction ignore {
  }, old_int{}, old_quit{};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, &old_int);
  sigaction(SIGQUIT, &ignore, &old_quit);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  background.join();
  recorder::switch_ring_close(arm);
  sigaction(SIGINT, &old_int, nullptr);
  sigaction(SIGQUIT, &old_quit, nullptr);

  trace::LaunchStatus ls{};
  ls.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 0;
  ls.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
  ls.wall_ns = static_cast<uint64_t>(t1.tv_sec - t0.tv_sec) * 1000000000ull +
               static_cast<uint64_t>(t1.tv_nsec - t0.tv_nsec);
  bool exec_failed =
      WIFEXITED(status) && (ls.exit_code == 127 || ls.exit_code == 126) && !fs::exists(out, ec);

  if (!exec_failed) {
    if (!fs::exists(out, ec)) {
      fmt::print(stderr,
                 "tasklens: no trace written: '{}' never started the OpenMP runtime and does not "
                 "link oneTBB (is it an OpenMP program built with -fopenmp, or a oneTBB program "
                 "linked with -ltbb, dynamically linked?)\n",
                 opt.command[0]);
    } else {
      std::vector<uint8_t> rec;
      trace::append_record(rec, trace::RecordType::LaunchStatus, &ls, sizeof ls);
      int fd = ::open(out.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
      // A program killed in the middle of the recorder's write leaves half a record: cut it
      // off so that the trace stays readable (and is reported as incomplete).
      trace::TraceFile::Scan scan = trace::TraceFile::scan(out.string());
      if (fd >= 0 && scan.whole_bytes > 0 && scan.whole_bytes < scan.file_bytes) {
        if (ftruncate(fd, static_cast<off_t>(scan.whole_bytes)) != 0)
          fmt::print(stderr, "tasklens: warning: could not repair the end of {}\n", out.string());
        scan.file_bytes = scan.whole_bytes;
      }
      if (fd >= 0) {
        if (::write(fd, rec.data(), rec.size()) != static_cast<ssize_t>(rec.size())) {
          fmt::print(stderr, "tasklens: warning: could not append the exit status to {}\n",
                     out.string());
        }
        ::close(fd);
      }
      try {
        int killed_by = ls.signal;  // a packed field: formatted by value
        uint64_t tasks = scan.has_finish ? scan.tasks_created : count_created_tasks(out.string());
        fmt::print(stderr, "tasklens: wrote {} ({}, {} tasks, {} threads{}){}\n", opt.output,
                   human_bytes(scan.file_bytes + rec.size()), tasks, scan.streams,
                   scan.has_finish ? "" : ", incomplete",
                   killed_by ? fmt::format("; the program was killed by signal {}", killed_by)
                             : std::string());
      } catch (const trace::TraceError& e) {
        fmt::print(stderr, "tasklens: the trace {} is unreadable: {}\n", opt.output, e.what());
      }
    }
  }
  if (WIFSIGNALED(status)) {
    // Die the same way, so that shells and scripts see the same termination.
    rlimit no_core{0, 0};
    setrlimit(RLIMIT_CORE, &no_core);  // the program already dumped its core, if it could
    signal(ls.signal, SIG_DFL);
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, ls.signal);
    sigprocmask(SIG_UNBLOCK, &set, nullptr);
    kill(getpid(), ls.signal);
    return 128 + ls.signal;
  }
  return ls.exit_code;
}

}  // namespace tasklens::cli
