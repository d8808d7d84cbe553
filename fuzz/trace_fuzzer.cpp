// libFuzzer target over everything that reads a trace: the reader, the model builder (in memory
// and in one pass), and every analysis, report and export (tests/support/analyze_all.hpp). Built
// with clang-14 and ASan+UBSan by fuzz/CMakeLists.txt; scripts/test.sh runs it briefly,
// bench/fuzz.sh for long runs.
//
// The contract (as tests/unit/damaged_trace_test.cpp checks it with its own mutations): a trace the
// reader or the builder cannot make sense of is refused with a trace::TraceError or a
// model::ModelError whose message is one line; anything else gives a model that keeps the
// invariants, and every analysis runs on it. Any other exception, a broken invariant, a crash, a
// sanitizer report or a leak is a finding: the input is saved by libFuzzer (crash-<sha1>).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>

#include "analysis/stream_profile.hpp"
#include "analysis/stream_tasks.hpp"
#include "analyze_all.hpp"
#include "model/builder.hpp"
#include "trace/reader.hpp"

namespace {

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "tasklens fuzz finding: %s\n", what.c_str());
  std::abort();
}

// The input goes through a memory file: the reader opens a path, as `tasklens` does.
int input_fd() {
  static const int fd = memfd_create("tasklens-fuzz", MFD_CLOEXEC);
  if (fd < 0) finding("memfd_create failed");
  return fd;
}

// Errors are for users: one line each.
void expect_one_line(const std::exception& e) {
  if (std::string(e.what()).find('\n') != std::string::npos)
    finding(std::string("a message of several lines: ") + e.what());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace tasklens;
  const int fd = input_fd();
  if (ftruncate(fd, 0) != 0 || pwrite(fd, data, size, 0) != static_cast<ssize_t>(size))
    finding("cannot write the input to the memory file");
  const std::string path = "/proc/self/fd/" + std::to_string(fd);
  try {
    trace::TraceFile trace = trace::TraceFile::open(path);
    // The same trace read in one pass (`report --stream`) first, as the CLI opens it for that
    // (its event blocks left in the file): it must end in a profile or in one of the errors
    // below, whatever the builder in memory makes of it.
    try {
      const trace::TraceFile in_file = trace::TraceFile::open(path, /*events_in_memory=*/false);
      analysis::StreamProfile sink(analysis::StreamProfile::kSitesAsTheyCome, 4);
      model::build_streaming(in_file, sink);
      const analysis::Profile p = sink.finish();
      if (p.span > p.work) finding("one pass: a span larger than the work");
      // And `tasks --stream`: the builder's tasks (StrandSink::task) on the same input.
      const analysis::TaskOptions options = analysis::default_task_options(
          model::metric_of(in_file), model::task_cost_of(in_file), in_file.tsc_hz());
      analysis::StreamTasks tasks(options.tiny_size);
      const model::Model streamed = model::build_streaming(in_file, tasks);
      const analysis::TaskProfile t = tasks.finish(streamed, options);
      if (t.task_work > t.work) finding("one pass: tasks with more work than the program");
    } catch (const model::ModelError& e) {
      expect_one_line(e);
    } catch (const trace::TraceError& e) {
      expect_one_line(e);
    }
    model::Model m = model::build_model(trace);
    if (std::string f = fixtures::structure_failure(m); !f.empty()) finding("model: " + f);
    if (std::string f = fixtures::analyze_all(m); !f.empty()) finding("analysis: " + f);
  } catch (const trace::TraceError& e) {
    expect_one_line(e);
  } catch (const model::ModelError& e) {
    expect_one_line(e);
  } catch (const std::exception& e) {
    finding(std::string("an unexpected exception: ") + e.what());
  }
  return 0;
}
