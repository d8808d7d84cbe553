#include "load/timings.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

namespace tasklens::load {

Timings::Timings() : owner_(std::this_thread::get_id()), last_(std::chrono::steady_clock::now()) {
  const char* env = std::getenv("TASKLENS_TIMINGS");
  enabled_ = env && *env && std::strcmp(env, "0") != 0;
}

std::string Timings::summary() const {
  std::string out;
  double total = 0;
  for (const auto& [name, seconds] : phases_) {
    out += fmt::format("{}{} {:.3f} s", out.empty() ? "" : ", ", name, seconds);
    total += seconds;
  }
  if (!out.empty()) out += fmt::format("; total {:.3f} s", total);
  return out;
}

}  // namespace tasklens::load
