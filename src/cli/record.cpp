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

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <vector>

#include "cli/errors.hpp"
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

trace::Metric parse_metric(const std::string& name) {
  if (name == "tsc") return trace::Metric::Tsc;
  if (name == "cycles") return trace::Metric::Cycles;
  if (name == "instructions") return trace::Metric::Instructions;
  if (name == "task-clock") return trace::Metric::TaskClock;
  throw UsageError("--metric " + name +
                   ": unknown metric; use auto, tsc, cycles, instructions or task-clock");
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
    std::vector<uint8_t> s = t.stream(i);
    trace::EventDecoder d = t.decoder(s);
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
  std::string metric_name = opt.metric;
  if (metric_name == "auto")  // counters measure only the program's own work: prefer them
    metric_name = recorder::probe_metric(trace::Metric::Cycles) == 0 ? "cycles" : "tsc";
  trace::Metric metric = parse_metric(metric_name);
  if (int err = recorder::probe_metric(metric); err != 0)
    throw EnvironmentError(fmt::format(
        "metric '{}' is not available on this machine (perf_event_open: {}); use --metric tsc",
        metric_name, std::strerror(err)));
  std::string recorder_lib = find_recorder();
  std::string runtime = find_runtime(opt.runtime);

  fs::path out = fs::absolute(opt.output);
  std::error_code ec;
  if (fs::exists(out, ec)) {
    fs::rename(out, fs::path(out.string() + ".old"), ec);
    if (ec)
      throw EnvironmentError(fmt::format("cannot rename the existing {} to {}.old: {}",
                                         out.string(), out.string(), ec.message()));
  }

  std::string preload = recorder_lib;
  if (!runtime.empty()) preload += ":" + runtime;
  const char* old_preload = getenv("LD_PRELOAD");
  if (old_preload && *old_preload) preload += std::string(":") + old_preload;

  // The first context-switch watcher in the system switches a kernel-wide static key on: ~15 ms
  // of code patching that would otherwise stall the program inside its first parallel region.
  // Holding one open here, across the run, makes the recorder's own cheap.
  recorder::SwitchRing* arm = metric == trace::Metric::Tsc ? recorder::switch_ring_open() : nullptr;

  timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  pid_t pid = fork();
  if (pid < 0) throw EnvironmentError(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    setenv("TASKLENS_OUTPUT", out.c_str(), 1);
    setenv("TASKLENS_METRIC", metric_name.c_str(), 1);
    if (opt.flush_ms > 0) setenv("TASKLENS_FLUSH_MS", std::to_string(opt.flush_ms).c_str(), 1);
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
