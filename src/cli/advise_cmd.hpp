// `tasklens advise`: what to parallelize first to reach a target parallelism, and the cut-off
// to write for a recursion of tiny tasks.
#pragma once

#include <cstddef>
#include <string>

#include "model/model.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::load {
struct StreamClipping;
}

namespace tasklens::cli {

struct AdviseOptions {
  std::string trace = "tasklens.data";
  double target = 0;  // 0: 8 x the cores of this machine
  size_t max_steps = 10;
  double factor = 0;  // 0: the target
  double k = 10;      // stop below k x the tasking overhead
  std::string mode = "parallelize";
  std::string format = "table";
  bool raw_span = false;
  // One pass per step (analysis/stream_advise.hpp); advise also reads so a recording whose DAG
  // does not fit.
  bool stream = false;
};

// Writes the advice to stdout and ends the process (write_and_exit).
[[noreturn]] void run_advise(const AdviseOptions& options);

// advise's options checked and resolved (target, factor, k); the target, unless given, is the
// report's for this recording (analysis::parallelism_target).
// advise in one pass per step (--stream, or when the DAG does not fit): the text in `format`.
// `clipping`: the robust span's clipping when the caller decided it already (view --stream);
// else decided here (none with --raw-span).
std::string advise_streamed_text(const AdviseOptions& options, report::Format format,
                                 const load::StreamClipping* clipping = nullptr);

report::AdviceReport advice_options(const AdviseOptions& options, const model::Model& model);

}  // namespace tasklens::cli
