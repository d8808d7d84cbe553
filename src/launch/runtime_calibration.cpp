#include "launch/runtime_calibration.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>

#include "platform/platform.hpp"
#include "trace/reader.hpp"

extern char** environ;

namespace tasklens::launch {

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

trace::TaskCost measure_task_cost(const std::string& program, const std::string& runtime,
                                  const std::string& dir, std::string* why) {
  trace::TaskCost cost{};
  std::string out = (fs::path(dir) / ".tasklens-task-cost-XXXXXX").string();
  const int fd = ::mkstemp(out.data());
  if (fd < 0) {
    if (why) *why = std::string("no scratch file in ") + dir + ": " + std::strerror(errno);
    return cost;
  }
  ::close(fd);
  // The program's environment without the recorder: no tool, only its runtime preloaded.
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) {
    const std::string v = *e;
    const std::string name = v.substr(0, v.find('='));
    if (name == "LD_PRELOAD" || name == "OMP_TOOL" || name == "OMP_TOOL_LIBRARIES" ||
        name.rfind("TASKLENS_", 0) == 0)
      continue;
    env.push_back(v);
  }
  if (!runtime.empty()) env.push_back("LD_PRELOAD=" + runtime);
  env.push_back("OMP_TOOL=disabled");
  env.push_back("TASKLENS_TASK_COST_OUT=" + out);
  const platform::QuietRun run = platform::run_quietly(program, env, 20);
  if (!run.ran) {
    if (why) *why = "the calibration program " + run.why;
    fs::remove(out);
    return cost;
  }
  std::ifstream in(out);
  std::string k1, k2, k3;
  double ns = 0;
  long tasks = 0;
  int rounds = 0;
  if (in >> k1 >> ns >> k2 >> tasks >> k3 >> rounds && k1 == "task_cost_ns" && ns > 0 &&
      tasks > 0 && rounds > 0) {
    cost.pico_per_task = uint64_t(ns * 1000 + 0.5);
    cost.tasks = uint32_t(std::min<long>(tasks, UINT32_MAX));
    cost.rounds = uint32_t(rounds);
    cost.measurements = 1;
  } else if (why) {
    *why = "the calibration program measured no task cost";
  }
  fs::remove(out);
  return cost;
}

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
  const platform::QuietRun run =
      platform::run_quietly(program, calibration_environment(preload, out), 20);
  if (!run.ran) {
    r.why = "the calibration program " + run.why;
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

RuntimeCalibration combine_calibrations(const std::vector<RuntimeCalibration>& runs) {
  RuntimeCalibration r;
  struct Kind {
    trace::RuntimeCostEntry e;
    size_t runs;
  };
  std::vector<Kind> kinds;
  size_t measured = 0;
  for (const RuntimeCalibration& c : runs) {
    if (c.entries.empty()) {
      if (r.why.empty()) r.why = c.why;
      continue;
    }
    ++measured;
    r.samples += c.samples;
    r.tasks += c.tasks;
    for (const trace::RuntimeCostEntry& e : c.entries) {
      auto it = std::find_if(kinds.begin(), kinds.end(), [&e](const Kind& k) {
        return k.e.before == e.before && k.e.after == e.after && k.e.solo == e.solo;
      });
      if (it == kinds.end()) {
        kinds.push_back(Kind{e, 1});
      } else {
        // By value: the packed fields are not aligned for a reference.
        const uint64_t least = it->e.milli_ticks, other = e.milli_ticks;
        it->e.milli_ticks = other < least ? other : least;
        it->e.samples += e.samples;
        ++it->runs;
      }
    }
  }
  for (const Kind& k : kinds)
    if (2 * k.runs >= measured) r.entries.push_back(k.e);
  std::sort(r.entries.begin(), r.entries.end(),
            [](const trace::RuntimeCostEntry& a, const trace::RuntimeCostEntry& b) {
              const uint64_t ka = uint64_t{a.before} << 24 | uint64_t{a.after} << 8 | a.solo,
                             kb = uint64_t{b.before} << 24 | uint64_t{b.after} << 8 | b.solo;
              return ka < kb;
            });
  if (!r.entries.empty()) r.why.clear();
  return r;
}

namespace {

constexpr char kCacheMagic[8] = {'T', 'L', 'R', 'T', 'C', 'O', 'S', 'T'};
constexpr uint32_t kCacheVersion = 2;  // 2: the task cost after the entries
constexpr int64_t kCacheSeconds = 7 * 24 * 3600;

// What the runtime's costs depend on besides the binaries: the CPU, how many CPUs the threads
// may use, and the runtime's settings.
uint64_t cache_key(const std::string& program, const std::string& preload) {
  uint64_t h = 1469598103934665603ull;
  h = platform::fnv1a(h, "v" + std::to_string(kCacheVersion));
  h = platform::fnv1a(h, platform::file_identity(program));
  size_t from = 0;
  while (from <= preload.size()) {
    const size_t to = std::min(preload.find(':', from), preload.size());
    if (to > from) h = platform::fnv1a(h, platform::file_identity(preload.substr(from, to - from)));
    from = to + 1;
  }
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);)
    if (line.rfind("model name", 0) == 0) {
      h = platform::fnv1a(h, line);
      break;
    }
  cpu_set_t set;
  CPU_ZERO(&set);
  const int cpus = sched_getaffinity(0, sizeof set, &set) == 0 ? CPU_COUNT(&set) : 1;
  h = platform::fnv1a(h, std::to_string(std::min(cpus, 4)));
  std::vector<std::string> settings;
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "OMP_", 4) == 0 || std::strncmp(*e, "KMP_", 4) == 0)
      settings.emplace_back(*e);
  std::sort(settings.begin(), settings.end());
  for (const std::string& v : settings) h = platform::fnv1a(h, v);
  return h;
}

bool read_cache(const std::string& path, RuntimeCalibration& c) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || time(nullptr) - st.st_mtim.tv_sec > kCacheSeconds)
    return false;
  std::ifstream in(path, std::ios::binary);
  char magic[8];
  uint32_t version = 0;
  trace::RuntimeCostHeader h{};
  if (!in.read(magic, 8) || std::memcmp(magic, kCacheMagic, 8) != 0 ||
      !in.read(reinterpret_cast<char*>(&version), 4) || version != kCacheVersion ||
      !in.read(reinterpret_cast<char*>(&h), sizeof h) || h.count == 0 || h.count > 65536)
    return false;
  std::vector<trace::RuntimeCostEntry> entries(h.count);
  if (!in.read(reinterpret_cast<char*>(entries.data()),
               std::streamsize(h.count * sizeof(trace::RuntimeCostEntry))))
    return false;
  trace::TaskCost cost{};
  if (!in.read(reinterpret_cast<char*>(&cost), sizeof cost)) return false;
  c.entries = std::move(entries);
  c.task_cost = cost;
  c.samples = h.samples;
  c.tasks = h.tasks;
  c.why.clear();
  return true;
}

// Written whole under another name, then renamed: a reader never sees half a file.
void write_cache(const std::string& dir, const std::string& path, const RuntimeCalibration& c) {
  std::error_code ec;
  fs::create_directories(dir, ec);
  const std::string tmp = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    trace::RuntimeCostHeader h{};
    h.count = uint32_t(c.entries.size());
    h.samples = c.samples;
    h.tasks = c.tasks;
    out.write(kCacheMagic, 8);
    out.write(reinterpret_cast<const char*>(&kCacheVersion), 4);
    out.write(reinterpret_cast<const char*>(&h), sizeof h);
    out.write(reinterpret_cast<const char*>(c.entries.data()),
              std::streamsize(c.entries.size() * sizeof(trace::RuntimeCostEntry)));
    out.write(reinterpret_cast<const char*>(&c.task_cost), sizeof c.task_cost);
    if (!out) {
      out.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, path, ec);
  if (ec) fs::remove(tmp, ec);
}

}  // namespace

trace::TaskCost task_cost_again(const trace::TaskCost& cached,
                                const std::function<trace::TaskCost()>& measure) {
  if (cached.pico_per_task == 0) return cached;
  auto clearly_below = [&](const trace::TaskCost& t) {
    return t.pico_per_task > 0 && t.pico_per_task * 10 < cached.pico_per_task * 9;
  };
  std::vector<trace::TaskCost> costs = {measure()};
  if (!clearly_below(costs[0])) return cached;
  for (int i = 0; i < 2; ++i) {
    costs.push_back(measure());
    if (costs.back().pico_per_task == 0) return cached;
  }
  std::sort(costs.begin(), costs.end(), [](const trace::TaskCost& a, const trace::TaskCost& b) {
    return a.pico_per_task < b.pico_per_task;
  });
  if (!clearly_below(costs[1])) return cached;
  trace::TaskCost t = costs[1];
  t.measurements = 3;
  return t;
}

RuntimeCalibration cached_calibration(const std::string& program, const std::string& preload,
                                      const std::string& runtime, const std::string& scratch_dir,
                                      bool fresh) {
  const std::string dir = platform::cache_dir();
  std::string path;
  if (!dir.empty()) {
    char name[64];
    std::snprintf(name, sizeof name, "runtime-cost-%016llx.bin",
                  static_cast<unsigned long long>(cache_key(program, preload)));
    path = dir + "/" + name;
    RuntimeCalibration c;
    if (!fresh && read_cache(path, c)) {
      const trace::TaskCost cached = c.task_cost;
      c.task_cost = task_cost_again(
          cached, [&] { return measure_task_cost(program, runtime, scratch_dir, nullptr); });
      if (c.task_cost.pico_per_task != cached.pico_per_task) write_cache(dir, path, c);
      return c;
    }
  }
  std::vector<RuntimeCalibration> runs;
  for (int i = 0; i < 3; ++i) {
    runs.push_back(calibrate_runtime(program, preload, scratch_dir));
    if (runs.back().entries.empty()) break;  // it failed: it would fail again
  }
  RuntimeCalibration c = combine_calibrations(runs);
  // The task cost: the median of three measures (each the least of its rounds already).
  std::vector<trace::TaskCost> costs;
  for (int i = 0; i < 3; ++i) {
    const trace::TaskCost t = measure_task_cost(program, runtime, scratch_dir, &c.task_cost_why);
    if (t.pico_per_task == 0) break;  // it failed: it would fail again
    costs.push_back(t);
  }
  if (costs.size() == 3) {
    std::sort(costs.begin(), costs.end(), [](const trace::TaskCost& a, const trace::TaskCost& b) {
      return a.pico_per_task < b.pico_per_task;
    });
    c.task_cost = costs[1];
    c.task_cost.measurements = 3;
    c.task_cost_why.clear();
  }
  if (!path.empty() && !c.entries.empty()) write_cache(dir, path, c);
  return c;
}

std::string find_tbb_calibration_program(const std::string& recorder_lib) {
  const fs::path c = fs::path(recorder_lib).parent_path() / "tasklens-tbb-calibration";
  std::error_code ec;
  return fs::exists(c, ec) ? c.string() : std::string();
}

trace::TaskCost measure_tbb_task_cost(const std::string& program, const std::string& dir,
                                      std::string* why) {
  std::vector<trace::TaskCost> runs;
  for (int i = 0; i < 3; ++i) {
    const trace::TaskCost c = measure_task_cost(program, "", dir, why);
    if (c.pico_per_task == 0) return c;  // (`why` says why)
    runs.push_back(c);
  }
  std::sort(runs.begin(), runs.end(), [](const trace::TaskCost& a, const trace::TaskCost& b) {
    return a.pico_per_task < b.pico_per_task;
  });
  trace::TaskCost median = runs[1];
  median.measurements = uint32_t(runs.size());
  return median;
}

namespace {

// Appends the records `rec` to the trace at `path` whole (cut off again if only part of them
// could be written): their size, or -1 (errno set).
int64_t append_records(const std::string& path, const std::vector<uint8_t>& rec) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CLOEXEC);
  if (fd < 0) return -1;
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
  return ok ? int64_t(rec.size()) : -1;
}

}  // namespace

int64_t append_task_cost(const std::string& path, const trace::TaskCost& cost) {
  std::vector<uint8_t> rec;
  trace::append_record(rec, trace::RecordType::TaskCost, &cost, sizeof cost);
  return append_records(path, rec);
}

int64_t append_runtime_cost(const std::string& path, const RuntimeCalibration& c) {
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
  if (c.task_cost.pico_per_task > 0)
    trace::append_record(rec, trace::RecordType::TaskCost, &c.task_cost, sizeof c.task_cost);
  return append_records(path, rec);
}

}  // namespace tasklens::launch
