#include "load/progress.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>

namespace tasklens::load {

namespace {

// "12.4 M", "843 K", "512": the size of a total at a glance.
std::string count_text(uint64_t n) {
  if (n >= 100'000'000'000ull) return fmt::format("{:.0f} G", n / 1e9);
  if (n >= 1'000'000'000ull) return fmt::format("{:.1f} G", n / 1e9);
  if (n >= 100'000'000ull) return fmt::format("{:.0f} M", n / 1e6);
  if (n >= 1'000'000ull) return fmt::format("{:.1f} M", n / 1e6);
  if (n >= 10'000ull) return fmt::format("{:.0f} K", n / 1e3);
  return fmt::format("{}", n);
}

}  // namespace

std::string progress_line(const std::string& phase, uint64_t done, uint64_t total,
                          const char* units, double seconds) {
  std::string line = "tasklens: " + phase;
  if (total > 0) {
    // Whole percents, rounded down: 100 only once the phase is over (then the next one shows).
    const uint64_t percent = std::min<uint64_t>(99, done >= total ? 99 : done * 100 / total);
    line += fmt::format(": {}% of {} {}", percent, count_text(total), units);
  }
  line += fmt::format(", {:.0f} s", seconds);
  return line;
}

Progress& Progress::global() {
  static Progress p;
  return p;
}

Progress::Progress()
    : owner_(std::this_thread::get_id()), start_(std::chrono::steady_clock::now()) {
  const char* env = std::getenv("TASKLENS_PROGRESS");
  possible_ = isatty(STDERR_FILENO) && !(env && std::strcmp(env, "0") == 0);
  if (const char* after = std::getenv("TASKLENS_PROGRESS_AFTER_MS")) {
    char* end = nullptr;
    const long ms = std::strtol(after, &end, 10);
    if (end != after && *end == '\0' && ms >= 0) after_ = std::chrono::milliseconds(ms);
  }
}

Progress::~Progress() { stop(); }

void Progress::start() {
  if (std::this_thread::get_id() != owner_) return;
  enabled_ = possible_;
  start_ = std::chrono::steady_clock::now();
}

void Progress::phase(std::string what) {
  if (!enabled_ || std::this_thread::get_id() != owner_) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (stopped_) return;
  phase_ = std::move(what);
  units_.store("", std::memory_order_relaxed);
  total_.store(0, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  if (!ticker_.joinable()) ticker_ = std::thread([this] { tick(); });
}

void Progress::amount(uint64_t done, uint64_t total, const char* units) {
  if (!enabled_ || std::this_thread::get_id() != owner_) return;
  units_.store(units, std::memory_order_relaxed);  // a literal
  done_.store(done, std::memory_order_relaxed);
  total_.store(total, std::memory_order_relaxed);
}

void Progress::tick() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopped_) {
    const auto now = std::chrono::steady_clock::now();
    if (now < start_ + after_) {  // not yet: nothing is shown for a command that is quick
      wake_.wait_until(lock, start_ + after_);
      continue;
    }
    const double seconds = std::chrono::duration<double>(now - start_).count();
    // Back to the line's start, the line, then the rest of the old one erased.
    const std::string text = "\r" +
                             progress_line(phase_, done_.load(std::memory_order_relaxed),
                                           total_.load(std::memory_order_relaxed),
                                           units_.load(std::memory_order_relaxed), seconds) +
                             "\033[K";
    if (write(STDERR_FILENO, text.data(), text.size()) > 0) shown_ = true;
    wake_.wait_for(lock, std::chrono::milliseconds(250));
  }
}

void Progress::stop() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (stopped_) return;
    stopped_ = true;
  }
  wake_.notify_all();
  if (ticker_.joinable()) ticker_.join();
  if (shown_) {
    static const char erase[] = "\r\033[K";
    [[maybe_unused]] ssize_t n = write(STDERR_FILENO, erase, sizeof erase - 1);
  }
}

}  // namespace tasklens::load
