#include "cli/runtime_calibration.hpp"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "trace/reader.hpp"

extern char** environ;

namespace tasklens::cli {

namespace fs = std::filesystem;

std::string find_calibration_program(const std::string& recorder_lib, bool gcc) {
  const fs::path c = fs::path(recorder_lib).parent_path() /
                     (gcc ? "tasklens-runtime-calibration-gcc" : "tasklens-runtime-calibration");
  std::error_code ec;
  return fs::exists(c, ec) ? c.string() : std::string();
}

std::vector<trace::RuntimeCostEntry> runtime_cost_entries(std::vector<model::IntervalSample> s,
                                                          uint32_t min_samples) {
  std::sort(s.begin(), s.end(), [](const model::IntervalSample& a, const model::IntervalSample& b) {
    if (a.before != b.before) return a.before < b.before;
    if (a.after != b.after) return a.after < b.after;
    if (a.solo != b.solo) return a.solo < b.solo;
    return a.ticks < b.ticks;
  });
  std::vector<trace::RuntimeCostEntry> out;
  for (size_t i = 0; i < s.size();) {
    size_t j = i;
    while (j < s.size() && s[j].before == s[i].before && s[j].after == s[i].after &&
           s[j].solo == s[i].solo)
      ++j;
    const size_t n = j - i;
    if (n >= min_samples) {
      // The median: the host's pauses and the caches' misses only lengthen the upper tail.
      const uint64_t lo = s[i + (n - 1) / 2].ticks, hi = s[i + n / 2].ticks;
      trace::RuntimeCostEntry e{};
      e.before = s[i].before;
      e.after = s[i].after;
      e.solo = s[i].solo;
      e.samples = uint32_t(std::min<size_t>(n, UINT32_MAX));
      e.milli_ticks = (lo + hi) * 500;
      if (e.milli_ticks > 0) out.push_back(e);
    }
    i = j;
  }
  return out;
}

namespace {

// The environment of the program, with the recorder's settings for a scratch trace.
std::vector<std::string> calibration_environment(const std::string& preload,
                                                 const std::string& out) {
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    const std::string name = v.substr(0, v.find('='));
    if (name == "LD_PRELOAD" || name.rfind("TASKLENS_", 0) == 0) continue;
    env.push_back(v);
  }
  // Buffer and clock settings the user gave stay; the output is the scratch trace, uncompressed.
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    if (v.rfind("TASKLENS_BUFFER_MB=", 0) == 0 || v.rfind("TASKLENS_RECORDER=", 0) == 0)
      env.push_back(v);
  }
  env.push_back("LD_PRELOAD=" + preload);
  env.push_back("TASKLENS_OUTPUT=" + out);
  env.push_back("TASKLENS_METRIC=tsc");
  env.push_back("TASKLENS_COMPRESSION=none");
  env.push_back("TASKLENS_SAVED_LD_PRELOAD=");
  return env;
}

}  // namespace

RuntimeCalibration calibrate_runtime(const std::string& program, const std::string& preload,
                                     const std::string& dir) {
  RuntimeCalibration r;
  std::string out = (fs::path(dir) / ".tasklens-calibration-XXXXXX").string();
  const int fd = ::mkstemp(out.data());
  if (fd < 0) {
    r.why = std::string("no scratch file in ") + dir + ": " + std::strerror(errno);
    return r;
  }
  ::close(fd);
  ::unlink(out.c_str());  // the recorder creates it
  std::vector<std::string> env = calibration_environment(preload, out);
  std::vector<char*> envp;
  for (std::string& v : env) envp.push_back(v.data());
  envp.push_back(nullptr);
  std::string arg0 = program;
  char* argv[] = {arg0.data(), nullptr};
  posix_spawn_file_actions_t files;
  posix_spawn_file_actions_init(&files);
  for (int f : {0, 1, 2}) posix_spawn_file_actions_addopen(&files, f, "/dev/null", O_RDWR, 0);
  pid_t pid = -1;
  const int err = posix_spawn(&pid, program.c_str(), &files, nullptr, argv, envp.data());
  posix_spawn_file_actions_destroy(&files);
  if (err != 0) {
    r.why = "cannot run " + program + ": " + std::strerror(err);
    return r;
  }
  // It takes a fraction of a second; a runtime that hangs must not hang `record`.
  int status = 0;
  timespec start{}, now{};
  clock_gettime(CLOCK_MONOTONIC, &start);
  for (;;) {
    const pid_t w = waitpid(pid, &status, WNOHANG);
    if (w == pid) break;
    if (w < 0 && errno != EINTR) {
      status = -1;
      break;
    }
    clock_gettime(CLOCK_MONOTONIC, &now);
    if (now.tv_sec - start.tv_sec > 20) {
      kill(pid, SIGKILL);
      while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
      }
      r.why = "the calibration did not end within 20 s";
      fs::remove(out);
      return r;
    }
    timespec nap{0, 2000000};
    nanosleep(&nap, nullptr);
  }
  if (status != 0) {
    r.why = WIFSIGNALED(status)
                ? "the calibration was killed by signal " + std::to_string(WTERMSIG(status))
                : "the calibration failed";
    fs::remove(out);
    return r;
  }
  try {
    const trace::TraceFile t = trace::TraceFile::open(out);
    std::vector<model::IntervalSample> samples;
    model::BuildOptions options;
    options.interval_sink = &samples;
    const model::Model m = model::build_model(t, options);
    r.tasks = m.task_count;
    r.samples = uint32_t(std::min<size_t>(samples.size(), UINT32_MAX));
    r.entries = runtime_cost_entries(std::move(samples), 16);
    if (r.entries.empty()) r.why = "the calibration's trace holds too few intervals";
  } catch (const std::exception& e) {
    r.why = std::string("the calibration's trace is unreadable: ") + e.what();
  }
  fs::remove(out);
  return r;
}

bool append_runtime_cost(const std::string& path, const RuntimeCalibration& c) {
  trace::RuntimeCostHeader h{};
  h.count = uint32_t(c.entries.size());
  h.samples = c.samples;
  h.tasks = c.tasks;
  std::vector<uint8_t> payload(sizeof h + c.entries.size() * sizeof(trace::RuntimeCostEntry));
  std::memcpy(payload.data(), &h, sizeof h);
  if (!c.entries.empty())
    std::memcpy(payload.data() + sizeof h, c.entries.data(),
                c.entries.size() * sizeof(trace::RuntimeCostEntry));
  std::vector<uint8_t> rec;
  trace::append_record(rec, trace::RecordType::RuntimeCost, payload.data(), payload.size());
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return false;
  const ssize_t n = ::write(fd, rec.data(), rec.size());
  const int saved = errno;
  bool ok = n == static_cast<ssize_t>(rec.size());
  if (!ok && n > 0) {
    // Half a record would make the trace unreadable: cut it off again.
    struct stat st {};
    if (::fstat(fd, &st) == 0 && ::ftruncate(fd, st.st_size - n) != 0) {
    }
  }
  ::close(fd);
  errno = ok ? 0 : (n < 0 ? saved : ENOSPC);
  return ok;
}

}  // namespace tasklens::cli
