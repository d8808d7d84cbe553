// TASKLENS_TIMINGS=1: the reader commands print how long each phase took to stderr, one line
// at the end ("tasklens: timings: open 0.031 s, model 0.552 s, ..."). For finding where a slow
// report spends its time, on the user's machine as on ours; costs nothing when unset.
// Phases: open (read and check the file), model (decode the events, build the DAG), symbols,
// then the command's own (report: profile), render (the rest of the analysis and the output
// text), write. Only the main thread's laps count: `diff` loads its second recording on another
// thread at the same time, and its phases are those of the main thread's recording.
#pragma once

#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace tasklens::load {

class Timings {
 public:
  static Timings& global() {
    static Timings t;
    return t;
  }
  bool enabled() const { return enabled_; }
  // Ends the current phase (started at the previous lap, or at start-up) under `name`.
  void lap(const char* name) {
    if (!enabled_ || std::this_thread::get_id() != owner_) return;
    auto now = std::chrono::steady_clock::now();
    phases_.emplace_back(name, std::chrono::duration<double>(now - last_).count());
    last_ = now;
  }
  // "open 0.031 s, model 0.552 s, ...": empty when disabled or nothing was timed.
  std::string summary() const;

 private:
  Timings();
  bool enabled_ = false;
  std::thread::id owner_;  // the thread that made it: main() (see main.cpp)
  std::chrono::steady_clock::time_point last_;
  std::vector<std::pair<const char*, double>> phases_;
};

}  // namespace tasklens::load
