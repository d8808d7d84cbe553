// What a reader command is doing, on stderr, while it takes long: "tasklens: reading run.tlens:
// 43% of 12.4 M events, 6 s". One line, rewritten in place four times a second, shown from 2 s
// into the command and only when stderr is a terminal (a script or a pipe sees nothing), erased
// before the command writes its output or an error. TASKLENS_PROGRESS=0 turns it off;
// TASKLENS_PROGRESS_AFTER_MS sets the 2 s (the tests show it at once).
//
// Only the thread that made it (main()) reports: `diff` loads its second recording on another
// thread, and the line follows the first one's.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <string>
#include <thread>

namespace tasklens::load {

class Progress {
 public:
  static Progress& global();
  // Shown for this command (a reader's: `record`, which runs the program, shows none), when
  // stderr is a terminal and TASKLENS_PROGRESS is not 0; the clock runs from here.
  void start();
  bool enabled() const { return enabled_; }
  // The phase now under way, which the line names; `amount` then says how far it is.
  void phase(std::string what);
  // `done` of `total` `units` of the phase ("events"); a total of 0 says nothing of it.
  void amount(uint64_t done, uint64_t total, const char* units);
  // Erases the line, for good: before the command's output, or an error.
  void stop();
  ~Progress();

 private:
  Progress();
  void tick();
  bool possible_ = false;  // a terminal, and not turned off
  bool enabled_ = false;
  std::chrono::milliseconds after_{2000};
  std::thread::id owner_;
  std::chrono::steady_clock::time_point start_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::string phase_;
  std::atomic<const char*> units_{""};
  std::atomic<uint64_t> done_{0}, total_{0};
  bool stopped_ = false;
  bool shown_ = false;
  std::thread ticker_;
};

// The line for a phase at `seconds` into the command (without the terminal's controls):
// "tasklens: reading run.tlens: 43% of 12.4 M events, 6 s"; with no total, "tasklens: the
// analyses, 6 s". Whole percents, never 100 before the phase has ended.
std::string progress_line(const std::string& phase, uint64_t done, uint64_t total,
                          const char* units, double seconds);

}  // namespace tasklens::load
