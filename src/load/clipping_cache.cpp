#include "load/clipping_cache.hpp"

#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <system_error>

#include "analysis/algebra.hpp"
#include "load/recording.hpp"
#include "platform/platform.hpp"

namespace tasklens::load {
namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kFormat = 1;

bool cache_off() {
  const char* v = std::getenv("TASKLENS_CACHE");
  return v && (std::strcmp(v, "off") == 0 || std::strcmp(v, "0") == 0);
}

// What the decision depends on: the recording's bytes (its identity: path, size, time of its
// last change), the tasklens binary that reads it (another build may model strands otherwise),
// and the model's settings.
std::string entry_path(const std::string& recording) {
  if (cache_off()) return {};
  const std::string dir = platform::cache_dir();
  if (dir.empty()) return {};
  std::error_code ec;
  // (Only a file that stays: a pipe's next reading is another stream.)
  if (!fs::is_regular_file(recording, ec)) return {};
  fs::path absolute = fs::weakly_canonical(fs::absolute(recording, ec), ec);
  if (ec) absolute = recording;
  fs::path exe = fs::read_symlink("/proc/self/exe", ec);
  uint64_t h = 1469598103934665603ull;
  h = platform::fnv1a(h, "clipping v" + std::to_string(kFormat));
  h = platform::fnv1a(h, platform::file_identity(absolute.string()));
  h = platform::fnv1a(h, ec ? std::string("?") : platform::file_identity(exe.string()));
  const ModelSettings& m = model_settings();
  h = platform::fnv1a(h, std::to_string(m.blocked_as_work) + std::to_string(m.keep_slow_faults) +
                             std::to_string(m.keep_runtime_cost));
  char name[64];
  std::snprintf(name, sizeof name, "%016llx.json", static_cast<unsigned long long>(h));
  return dir + "/clipping/" + name;
}

// The oldest entries beyond kClippingEntries go.
void prune(const fs::path& dir) {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> entries;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec))
    if (e.path().extension() == ".json") entries.emplace_back(e.last_write_time(ec), e.path());
  if (entries.size() <= kClippingEntries) return;
  std::sort(entries.begin(), entries.end());
  for (size_t i = 0; i + kClippingEntries < entries.size(); ++i) fs::remove(entries[i].second, ec);
}

}  // namespace

std::string clipping_to_json(const CachedClipping& c) {
  json strands = json::array();
  for (const analysis::ClippedStrand& s : c.clipping.strands)
    strands.push_back({s.strand, s.thread, s.begin, s.end, s.work_raw, s.work_clipped,
                       s.fragment_quantile, s.fragment_samples, s.simultaneous});
  json j = {{"format", kFormat},
            {"robust", c.robust},
            {"tested", c.clipping.tested},
            {"floor", c.clipping.floor},
            {"clipped_work", c.clipping.clipped_work},
            {"strands", std::move(strands)},
            {"fragments", c.fragments}};
  if (c.has_measured) j["measured"] = {c.measured.work, c.measured.span};
  return j.dump();
}

std::optional<CachedClipping> clipping_from_json(const std::string& text) {
  try {
    const json j = json::parse(text);
    if (j.at("format").get<int>() != kFormat) return std::nullopt;
    CachedClipping c;
    c.robust = j.at("robust").get<bool>();
    c.clipping.tested = j.at("tested").get<bool>();
    c.clipping.floor = j.at("floor").get<uint64_t>();
    c.clipping.clipped_work = j.at("clipped_work").get<uint64_t>();
    for (const json& s : j.at("strands")) {
      analysis::ClippedStrand x;
      x.strand = s.at(0).get<uint64_t>();
      x.thread = s.at(1).get<uint32_t>();
      x.begin = s.at(2).get<uint64_t>();
      x.end = s.at(3).get<uint64_t>();
      x.work_raw = s.at(4).get<uint64_t>();
      x.work_clipped = s.at(5).get<uint64_t>();
      x.fragment_quantile = s.at(6).get<uint64_t>();
      x.fragment_samples = s.at(7).get<uint32_t>();
      x.simultaneous = s.at(8).get<bool>();
      c.clipping.strands.push_back(x);
    }
    c.fragments = j.at("fragments").get<std::vector<uint32_t>>();
    if (c.fragments.size() != c.clipping.strands.size()) return std::nullopt;
    if (j.contains("measured")) {
      c.has_measured = true;
      c.measured.work = j["measured"].at(0).get<uint64_t>();
      c.measured.span = j["measured"].at(1).get<uint64_t>();
      c.measured.parallelism = analysis::parallelism_of(c.measured.work, c.measured.span);
    }
    return c;
  } catch (const json::exception&) {
    return std::nullopt;  // not an entry (damaged, or of another format): decided again
  }
}

std::optional<CachedClipping> cached_clipping(const std::string& path) {
  const std::string entry = entry_path(path);
  if (entry.empty()) return std::nullopt;
  std::ifstream in(entry);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return clipping_from_json(text.str());
}

void keep_clipping(const std::string& path, const CachedClipping& c) {
  const std::string entry = entry_path(path);
  if (entry.empty()) return;
  std::error_code ec;
  const fs::path dir = fs::path(entry).parent_path();
  fs::create_directories(dir, ec);
  if (ec) return;
  // Written whole under another name, then renamed: a reader never meets half an entry.
  const std::string tmp = entry + "." + std::to_string(::getpid()) + ".tmp";
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << clipping_to_json(c);
    if (!out.flush()) {
      out.close();
      fs::remove(tmp, ec);
      return;
    }
  }
  fs::rename(tmp, entry, ec);
  if (ec) {
    fs::remove(tmp, ec);
    return;
  }
  prune(dir);
}

void forget_clipping(const std::string& path) {
  const std::string entry = entry_path(path);
  std::error_code ec;
  if (!entry.empty()) fs::remove(entry, ec);
}

}  // namespace tasklens::load
