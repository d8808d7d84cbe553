#include "recorder/regions.hpp"

#include <memory>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "recorder/buffer.hpp"
#include "trace/format.hpp"
#include "trace/reader.hpp"

namespace tasklens::recorder {
namespace {

struct NameTable {
  std::mutex mutex;
  std::unordered_map<std::string_view, const RegionName*> by_text;  // views into the copies
  uint32_t count = 0;
};

NameTable& table() {
  static NameTable* t = new NameTable();  // never destroyed: regions may end during exit
  return *t;
}

// One RegionNames record naming one id: u32 count = 1, u32 id, u32 size, the text.
std::vector<uint8_t> name_record(uint32_t id, std::string_view text) {
  if (text.size() > kMaxRegionNameBytes) text = text.substr(0, kMaxRegionNameBytes);
  uint32_t head[3] = {1, id, static_cast<uint32_t>(text.size())};
  std::vector<uint8_t> rec;
  trace::append_record(rec, trace::RecordType::RegionNames, head, sizeof head, text.data(),
                       text.size());
  return rec;
}

}  // namespace

bool region_intern(RegionCache::Slot& slot, const char* name, uint32_t& id) noexcept {
  try {
    NameTable& t = table();
    std::string_view text(name);
    const RegionName* found;
    {
      // Held across the write of a new name's record: another thread that looks the same name
      // up gets its id only once the record is in the file.
      std::lock_guard<std::mutex> lock(t.mutex);
      auto it = t.by_text.find(text);
      if (it != t.by_text.end()) {
        found = it->second;
      } else {
        if (t.count >= trace::kMaxRegionNames) return false;
        // Everything that may throw comes before the table changes.
        std::vector<uint8_t> rec = name_record(t.count, text);
        std::unique_ptr<char[]> copy(new char[text.size() + 1]);
        std::memcpy(copy.get(), text.data(), text.size() + 1);
        auto fresh = std::make_unique<RegionName>(RegionName{t.count, copy.get()});
        t.by_text.emplace(std::string_view(copy.get(), text.size()), fresh.get());
        copy.release();
        found = fresh.release();
        ++t.count;
        writer_append(rec.data(), rec.size());
      }
    }
    slot.key = name;
    slot.name = found;
    id = found->id;
    return true;
  } catch (...) {
    return false;  // out of memory: this region goes unrecorded, the program goes on
  }
}

}  // namespace tasklens::recorder
