// The memory a reader may take (platform.hpp says from what).
#include <fmt/format.h>
#include <sys/resource.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <vector>

#include "errors.hpp"
#include "platform/platform.hpp"

namespace tasklens::platform {
namespace {

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::ostringstream text;
  text << in.rdbuf();
  return in ? text.str() : std::string();
}

// The least room the cgroups of this process leave (v2: every level's memory.max less its
// memory.current); nullopt without a limit.
std::optional<uint64_t> cgroup_room() {
  std::istringstream lines(read_file("/proc/self/cgroup"));
  std::string line, path;
  while (std::getline(lines, line))
    if (line.rfind("0::", 0) == 0) path = line.substr(3);
  if (path.empty()) return std::nullopt;
  std::optional<uint64_t> room;
  for (;;) {
    const std::string dir = "/sys/fs/cgroup" + (path == "/" ? std::string() : path);
    if (auto limit = cgroup_limit(read_file(dir + "/memory.max"))) {
      const auto used = parse_size(read_file(dir + "/memory.current"));
      const uint64_t left = *limit > used.value_or(0) ? *limit - used.value_or(0) : 0;
      room = room ? std::min(*room, left) : left;
    }
    if (path == "/" || path.empty()) break;
    const size_t slash = path.rfind('/');
    path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  }
  return room;
}

}  // namespace

std::optional<uint64_t> parse_size(const std::string& text) {
  size_t i = 0;
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  uint64_t value = 0;
  size_t digits = 0;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, ++digits) {
    if (value > (UINT64_MAX - 9) / 10) return std::nullopt;
    value = value * 10 + uint64_t(text[i] - '0');
  }
  if (digits == 0) return std::nullopt;
  int shift = 0;
  if (i < text.size()) {
    switch (std::toupper(static_cast<unsigned char>(text[i]))) {
      case 'K':
        shift = 10;
        ++i;
        break;
      case 'M':
        shift = 20;
        ++i;
        break;
      case 'G':
        shift = 30;
        ++i;
        break;
      case 'T':
        shift = 40;
        ++i;
        break;
      default:
        break;
    }
  }
  while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
  if (i != text.size()) return std::nullopt;
  if (shift && value > (UINT64_MAX >> shift)) return std::nullopt;
  return value << shift;
}

std::optional<uint64_t> cgroup_limit(const std::string& text) {
  if (text.rfind("max", 0) == 0) return std::nullopt;
  return parse_size(text);
}

std::optional<uint64_t> available_from_meminfo(const std::string& text) {
  std::istringstream lines(text);
  std::string line;
  std::optional<uint64_t> available;
  uint64_t swap_free = 0;
  auto kib = [](const std::string& rest) -> std::optional<uint64_t> {
    std::istringstream fields(rest);
    uint64_t value = 0;
    if (!(fields >> value)) return std::nullopt;
    return value * 1024;
  };
  while (std::getline(lines, line)) {
    if (line.rfind("MemAvailable:", 0) == 0) available = kib(line.substr(13));
    if (line.rfind("SwapFree:", 0) == 0) swap_free = kib(line.substr(9)).value_or(0);
  }
  if (!available) return std::nullopt;
  return *available + swap_free;
}

std::optional<MemoryBudget> memory_budget() {
  std::optional<MemoryBudget> budget;
  auto consider = [&](uint64_t bytes, const char* source) {
    if (!budget || bytes < budget->bytes) budget = MemoryBudget{bytes, source};
  };
  if (auto available = available_from_meminfo(read_file("/proc/meminfo")))
    consider(*available, "the memory available on this machine (MemAvailable and free swap)");
  if (auto room = cgroup_room()) consider(*room, "the room left by this process's cgroup limit");
  struct rlimit as {};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY)
    consider(as.rlim_cur, "the address space this process may have (ulimit -v)");
  if (const char* limit = std::getenv("TASKLENS_MEMORY_LIMIT")) {
    const auto bytes = parse_size(limit);
    if (!bytes)
      throw UsageError(fmt::format(
          "TASKLENS_MEMORY_LIMIT={} is not a size: give bytes, or a number with K, M, G or T",
          limit));
    consider(*bytes, "TASKLENS_MEMORY_LIMIT");
  }
  return budget;
}

}  // namespace tasklens::platform
