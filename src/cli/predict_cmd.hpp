// `tasklens predict`: the time and speedup of the recorded program on P cores, from a simulated
// work-stealing schedule of one recording and, given recordings at several thread counts, an
// extrapolation (analysis/predict.hpp).
#pragma once

#include <string>
#include <vector>

namespace tasklens::cli {

struct PredictOptions {
  std::vector<std::string> traces;  // empty: tasklens.data
  std::string threads = "1,2,4,8,16,32,64";
  std::string format = "table";
  bool raw_span = false;  // --raw-span: every strand as measured (load::SpanMode)
  // --stream: read in one pass (analysis/stream_predict.hpp), as when the DAG does not fit.
  bool stream = false;
  uint32_t max_nodes = 1u << 22;  // --max-nodes: the one-pass reading's graph budget
};

// Writes the prediction to stdout and ends the process. Throws UsageError on bad options, on a
// trace without timestamps and on recordings that are not of one program.
[[noreturn]] void run_predict(const PredictOptions& options);

// Parses "1,2,4": thread counts from 1 to 4096, sorted and unique. Throws UsageError.
std::vector<uint32_t> parse_thread_list(const std::string& text);

}  // namespace tasklens::cli
