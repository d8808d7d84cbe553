// `tasklens record`: a launcher. It starts the program with the recorder (and, by default, LLVM
// 16's OpenMP runtime) preloaded, passes its stdin/stdout/stderr, exit code and signals through
// unchanged, and adds a LaunchStatus record and a one-line summary at the end.
#include "cli/record_cmd.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
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

#include "cli/command_support.hpp"
#include "errors.hpp"
#include "launch/runtime_calibration.hpp"
#include "launch/runtime_compat.hpp"
#include "model/model.hpp"
#include "platform/platform.hpp"
#include "recorder/metric.hpp"
#include "recorder/switches.hpp"
#include "trace/losses.hpp"
#include "trace/reader.hpp"
#include "trace/repack.hpp"

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
  // An installed tasklens's own runtime first (cmake/install.cmake), then the build tree's.
  for (const std::string& c :
       {dir + "/../lib/tasklens/libomp.so.5", std::string(TASKLENS_OMP_RUNTIME),
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

// `<out>.lock`, held (flock) from before anything touches the output until the summary: a
// second `record -o` of the same file refuses instead of renaming the first's trace away and
// writing into it. The file is removed at the end; whoever opened it just before that finds, once
// it has the lock, that the path no longer names it, and opens it again.
class OutputLock {
 public:
  explicit OutputLock(const fs::path& out, const std::string& given)
      : path_(out.string() + ".lock") {
    for (;;) {
      fd_ = ::open(path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
      if (fd_ < 0)
        throw UsageError(
            fmt::format("-o {}: cannot create the lock file {} ({}); choose a "
                        "writable path",
                        given, path_, std::strerror(errno)));
      if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
        const int err = errno;
        char owner[32] = {};
        ssize_t n = ::pread(fd_, owner, sizeof owner - 1, 0);
        ::close(fd_);
        fd_ = -1;
        if (err == EWOULDBLOCK)
          throw EnvironmentError(fmt::format(
              "-o {}: another `tasklens record`{} is writing this trace; wait for it to end or "
              "choose another -o",
              given, n > 0 ? fmt::format(" (pid {})", std::string(owner, size_t(n))) : ""));
        throw EnvironmentError(
            fmt::format("-o {}: cannot lock {} ({})", given, path_, std::strerror(err)));
      }
      struct stat held {
      }, named{};
      if (::fstat(fd_, &held) == 0 && ::stat(path_.c_str(), &named) == 0 &&
          held.st_ino == named.st_ino && held.st_dev == named.st_dev)
        break;
      ::close(fd_);  // removed by its previous holder meanwhile: lock the new one
    }
    const std::string pid = std::to_string(getpid());
    if (::ftruncate(fd_, 0) == 0 && ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    }
  }
  ~OutputLock() {
    if (fd_ < 0) return;
    ::unlink(path_.c_str());  // before the unlock: nobody can lock this path's file after it
    ::close(fd_);
  }
  OutputLock(const OutputLock&) = delete;
  OutputLock& operator=(const OutputLock&) = delete;

 private:
  std::string path_;
  int fd_ = -1;
};

// A little space on the trace's file system, freed just before the exit status is appended:
// on a disk the program filled, that append still fits. -1 if it cannot be made.
int make_reserve(const fs::path& out) {
  std::string path = out.string() + ".reserve-XXXXXX";
  const int fd = mkostemp(path.data(), O_CLOEXEC);
  if (fd < 0) return -1;
  ::unlink(path.c_str());
  if (posix_fallocate(fd, 0, 16 * 1024) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// The program while it runs, for the forwarding handler (0: none yet).
volatile sig_atomic_t g_child = 0;

// SIGTERM, SIGHUP (and SIGINT, SIGQUIT sent with kill) to `tasklens record` go to the program:
// it ends the way it would without tasklens, and tasklens then reports that and dies the same
// way. The terminal's SIGINT and SIGQUIT reach the whole foreground process group, the program
// too: those (sent by the kernel, not by kill) are not sent a second time.
void forward_signal(int sig, siginfo_t* info, void*) {
  if ((sig == SIGINT || sig == SIGQUIT) && info && info->si_code == SI_KERNEL) return;
  const pid_t child = g_child;
  if (child > 0) ::kill(child, sig);
}

constexpr int kForwarded[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};

}  // namespace

int run_record(const RecordOptions& opt) {
  if (opt.command.empty())
    throw UsageError("record needs a program to run: tasklens record [options] -- ./app args");
  if (opt.compression != "lz4" && opt.compression != "zstd" && opt.compression != "none")
    throw UsageError("--compression " + opt.compression +
                     ": unknown compression; use zstd (the default), lz4 or none");
  const std::vector<trace::Metric> metrics = parse_metrics(opt.metric);
  check_metrics_available(metrics);
  std::string metric_names;  // for the recorder: perf's names, comma-separated
  for (trace::Metric m : metrics)
    metric_names += std::string(metric_names.empty() ? "" : ",") + trace::to_string(m);
  const bool has_tsc =
      std::find(metrics.begin(), metrics.end(), trace::Metric::Tsc) != metrics.end();
  std::string recorder_lib = find_recorder();
  std::string runtime = find_runtime(opt.runtime);
  // A program the preloaded runtime cannot run is refused before it runs, not crashed
  // (launch/runtime_compat.hpp); an explicit --runtime runs it anyway.
  if (!runtime.empty() && opt.runtime.empty()) {
    const char* path_list = getenv("PATH");
    const std::string program =
        platform::find_command(opt.command[0], path_list ? path_list : "/bin:/usr/bin");
    if (!program.empty())
      if (std::string why =
              launch::gomp_incompatibility(opt.command[0], platform::read_elf_dynamic(program));
          !why.empty())
        throw EnvironmentError(why);
  }

  // Only a trace file is kept as .old: a directory or a device named by mistake (-o /tmp,
  // -o /dev/null) would be renamed away. A symlink is followed, as export's -o is
  // (platform/platform.hpp): the trace goes to its target, which is what is kept as .old, and the
  // link stays.
  const platform::OutputTarget target = platform::resolve_output(opt.output, "run.tlens");
  if (target.kind == platform::OutputTarget::Kind::Stdout)
    throw UsageError(
        "-o -: a trace cannot go to standard output (the recorder writes it from inside the "
        "program, then completes it in place); give a file name, e.g. -o run.tlens");
  if (target.kind == platform::OutputTarget::Kind::Stream)
    throw UsageError(
        fmt::format("-o {}: exists and is not a regular file (a device or a FIFO: a trace is "
                    "completed in place after the run); give a file name for the trace",
                    opt.output));
  fs::path out = fs::absolute(target.path);
  std::error_code ec;
  // Replacing the previous .old frees its pages, milliseconds for a large trace: it is unlinked
  // while held open here and closed while the program runs, which is when the kernel frees it.
  int previous_old = -1;
  const bool out_exists = target.kind == platform::OutputTarget::Kind::Regular;
  // The recorder opens the trace inside the program: a directory it cannot write in is found
  // now, not after the run (which then said the program had never started OpenMP).
  const fs::path out_dir = out.parent_path();
  if (!fs::is_directory(out_dir, ec))
    throw UsageError(
        fmt::format("-o {}: there is no directory {}; create it or choose another "
                    "path",
                    opt.output, out_dir.string()));
  OutputLock lock(out, opt.output);
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
  const std::string runtime_preload = preload;  // without the user's: the runtime calibration's
  const std::string runtime_alone = runtime;    // without the recorder: the task cost's
  const char* old_preload = getenv("LD_PRELOAD");
  if (old_preload && *old_preload) preload += std::string(":") + old_preload;

  int reserve = make_reserve(out);
  uint64_t raw_budget_mb = 4096;
  struct statvfs fs_room;
  if (statvfs(out_dir.c_str(), &fs_room) == 0)
    raw_budget_mb = std::min<uint64_t>(
        raw_budget_mb, uint64_t(fs_room.f_bavail) * fs_room.f_frsize / 4 / (1024 * 1024));

  // The forwarding handlers are in place before the program exists; signals wait (blocked)
  // until its pid is known.
  sigset_t forwarded, old_mask;
  sigemptyset(&forwarded);
  for (int sig : kForwarded) sigaddset(&forwarded, sig);
  sigprocmask(SIG_BLOCK, &forwarded, &old_mask);
  struct sigaction forward {
  }, old_actions[std::size(kForwarded)];
  forward.sa_sigaction = forward_signal;
  forward.sa_flags = SA_SIGINFO | SA_RESTART;
  sigfillset(&forward.sa_mask);
  for (size_t i = 0; i < std::size(kForwarded); ++i)
    sigaction(kForwarded[i], &forward, &old_actions[i]);
  const pid_t launcher = getpid();

  timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid < 0) throw EnvironmentError(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // The program dies with tasklens even when tasklens cannot forward anything (SIGKILL): an
    // orphan would go on writing a trace nobody finishes. If tasklens died before the prctl,
    // the program is already an orphan: do not start it.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) _exit(128 + SIGKILL);
    // The program starts with tasklens's own dispositions and mask (exec keeps both).
    for (size_t i = 0; i < std::size(kForwarded); ++i)
      sigaction(kForwarded[i], &old_actions[i], nullptr);
    sigprocmask(SIG_SETMASK, &old_mask, nullptr);
    setenv("TASKLENS_OUTPUT", out.c_str(), 1);
    setenv("TASKLENS_METRIC", metric_names.c_str(), 1);
    if (opt.flush_ms > 0) setenv("TASKLENS_FLUSH_MS", std::to_string(opt.flush_ms).c_str(), 1);
    setenv("TASKLENS_COMPRESSION", opt.compression.c_str(), 1);
    // The recorder stores event blocks raw while the program runs and this launcher compresses
    // them after it (trace/repack.hpp): compressing beside the program slows it. The raw
    // bytes are bounded by a quarter of the file system's free room (4 GiB at most); past that
    // the recorder compresses as it goes. TASKLENS_DEFER_COMPRESSION=0 compresses as it goes
    // from the start.
    if (opt.compression != "none") {
      setenv("TASKLENS_DEFER_COMPRESSION", "1", 0);
      setenv("TASKLENS_RAW_BUDGET_MB", std::to_string(raw_budget_mb).c_str(), 1);
    }
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
  // an RCU grace period (milliseconds), which would otherwise stall the program inside its first
  // parallel region. Holding one open across the run makes the recorder's own cheap; opening it
  // on a thread while the program starts overlaps the two (the key's lock serializes whoever
  // comes second).
  recorder::SwitchRing* arm = nullptr;
  std::thread background([&arm, has_tsc, previous_old] {
    if (has_tsc) arm = recorder::switch_ring_open();
    if (previous_old >= 0) ::close(previous_old);
  });
  g_child = pid;
  sigprocmask(SIG_SETMASK, &old_mask, nullptr);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  background.join();
  g_child = 0;
  for (size_t i = 0; i < std::size(kForwarded); ++i)
    sigaction(kForwarded[i], &old_actions[i], nullptr);
  if (reserve >= 0) ::close(reserve);  // its space is for the exit status appended below

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
      bool appended = false;
      if (fd >= 0) {
        const ssize_t n = ::write(fd, rec.data(), rec.size());
        appended = n == static_cast<ssize_t>(rec.size());
        if (!appended) {
          const int err = n < 0 ? errno : ENOSPC;
          if (n > 0 && ftruncate(fd, static_cast<off_t>(scan.file_bytes)) != 0) {
          }
          fmt::print(stderr, "tasklens: warning: could not append the exit status to {} ({}){}\n",
                     out.string(), std::strerror(err),
                     err == ENOSPC || err == EDQUOT ? "; free space on that file system" : "");
        }
        ::close(fd);
      }
      uint64_t file_bytes = scan.file_bytes + (appended ? rec.size() : 0);
      // A record appended after the program (`added` bytes, or -1 with errno set): counted in
      // the trace's size, or a note of what it means for the reports.
      auto count_appended = [&](int64_t added, const char* what, const char* then) {
        if (added >= 0)
          file_bytes += uint64_t(added);
        else
          fmt::print(stderr, "tasklens: note: could not append {} to {} ({}): {}\n", what,
                     out.string(), std::strerror(errno), then);
      };
      // The OpenMP runtime's own cost between events, timed on empty tasks now that the
      // program has ended, under the same runtime and recorder (launch/runtime_calibration.hpp).
      if (!opt.no_runtime_calibration && scan.openmp && scan.primary == trace::Metric::Tsc &&
          appended) {
        const std::string program = launch::find_calibration_program(recorder_lib, scan.libgomp);
        const launch::RuntimeCalibration c =
            program.empty() ? launch::RuntimeCalibration{{},
                                                         0,
                                                         0,
                                                         "the calibration program is not "
                                                         "installed next to the recorder",
                                                         {},
                                                         "no calibration program"}
                            : launch::cached_calibration(program, runtime_preload, runtime_alone,
                                                         out_dir.string(), opt.recalibrate);
        if (c.entries.empty())
          fmt::print(stderr,
                     "tasklens: note: the OpenMP runtime's own cost was not measured ({}): it "
                     "stays in the work\n",
                     c.why);
        else
          count_appended(launch::append_runtime_cost(out.string(), c), "the OpenMP runtime's cost",
                         "it stays in the work");
      }
      // What a oneTBB task costs, measured now without the recorder (launch/runtime_calibration
      // .hpp): the tasking overhead the report, advise, tasks and predict charge per task.
      if (!opt.no_runtime_calibration && scan.tbb && !scan.openmp &&
          scan.primary == trace::Metric::Tsc && appended) {
        const std::string program = launch::find_tbb_calibration_program(recorder_lib);
        std::string why = "the calibration program is not installed next to the recorder";
        const trace::TaskCost cost =
            program.empty() ? trace::TaskCost{}
                            : launch::measure_tbb_task_cost(program, out_dir.string(), &why);
        if (cost.pico_per_task == 0)
          fmt::print(stderr,
                     "tasklens: note: what a oneTBB task costs was not measured ({}): the "
                     "reports estimate it from the shortest task strands\n",
                     why);
        else
          count_appended(launch::append_task_cost(out.string(), cost), "what a oneTBB task costs",
                         "the reports estimate it from the shortest task strands");
      }
      // The event blocks the recorder stored raw, compressed now that the program has ended.
      if (opt.compression != "none") {
        const trace::RepackResult packed = trace::compress_raw_blocks(
            out.string(),
            opt.compression == "zstd" ? trace::Compression::Zstd : trace::Compression::Lz4);
        if (packed.rewritten) file_bytes = packed.bytes_out;
        if (!packed.error.empty())
          fmt::print(
              stderr,
              "tasklens: warning: the trace {} was left uncompressed ({}): it reads the same, "
              "only larger\n",
              opt.output, packed.error);
      }
      try {
        int killed_by = ls.signal;  // a packed field: formatted by value
        // After a failed write the Finish record counts tasks the trace does not hold.
        const bool cut = scan.has_stats && scan.stats.write_errors > 0;
        uint64_t tasks =
            scan.has_finish && !cut ? scan.tasks_created : count_created_tasks(out.string());
        std::string why;
        if (killed_by)
          why = fmt::format("; the program was killed by signal {}", killed_by);
        else if (scan.has_finish && scan.finish_reason == uint32_t(trace::FinishReason::Exec))
          why = "; the program called exec";
        fmt::print(stderr, "tasklens: wrote {} ({}, {} tasks{}, {} threads{}){}\n", opt.output,
                   human_bytes(file_bytes), tasks,
                   cut && scan.has_finish ? fmt::format(" of {} run", scan.tasks_created) : "",
                   scan.streams, scan.has_finish && !cut ? "" : ", incomplete", why);
        // What was lost and why, one line each (a full disk is not a killed program).
        for (const trace::Loss& loss :
             trace::describe_losses(scan.has_stats ? &scan.stats : nullptr, scan.has_finish,
                                    scan.events_lost, scan.finish_reason))
          fmt::print(stderr, "tasklens: {}: {}\n", loss.cause == "exec" ? "note" : "warning",
                     loss.message);
        // Said now, not only in the report: the user may record again while the host is busy.
        if (std::string w = model::host_steal_warning(scan.host_steal_percent); !w.empty())
          fmt::print(stderr, "tasklens: warning: {}\n", w);
        if (std::string note = launch::gomp_crash_note(killed_by, scan.libgomp); !note.empty())
          fmt::print(stderr, "tasklens: note: {}\n", note);
        if (!scan.has_finish && !killed_by)
          fmt::print(stderr, "tasklens: warning: the trace is incomplete ({})\n",
                     trace::incomplete_cause(true, ls.exit_code, 0));
      } catch (const trace::TraceError& e) {
        fmt::print(stderr, "tasklens: the trace {} is unreadable: {}\n", opt.output, e.what());
      }
    }
  }
  recorder::switch_ring_close(arm);
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
