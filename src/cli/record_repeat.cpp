#include "cli/record_repeat.hpp"

#include <fmt/format.h>

#include <filesystem>

#include "analysis/profile.hpp"
#include "cli/command_support.hpp"
#include "errors.hpp"
#include "load/recording.hpp"
#include "report/profile_report.hpp"
#include "report/repeat_report.hpp"
#include "trace/reader.hpp"

namespace tasklens::cli {
namespace fs = std::filesystem;
using report::numbered_output;
using report::RepeatFigures;

namespace {

// `link` becomes another name of `target` (a copy where the file system has no hard links); an
// existing `link` is kept as <link>.old, as `record` keeps an existing trace.
void name_output(const std::string& target, const std::string& link) {
  std::error_code ec;
  // (Anything else named so, a directory say, stays: the link then fails and says why.)
  if (fs::is_regular_file(link, ec)) fs::rename(link, link + ".old", ec);
  fs::create_hard_link(target, link, ec);
  if (ec) fs::copy_file(target, link, fs::copy_options::overwrite_existing, ec);
  if (ec)
    throw EnvironmentError(
        fmt::format("cannot name the median recording {} as {}: {}", target, link, ec.message()));
}

// The figures `report` opens with, from one recording; false (with the reason said) when the
// recording cannot be read.
bool figures_of(const std::string& path, RepeatFigures& f) {
  try {
    load::Loaded l = load::load(path, load::SpanMode::Robust);
    uint64_t work = 0;
    for (const model::Strand& s : l.model.strands) work += s.work;
    const uint64_t span = analysis::longest_path(l.model);
    f.path = path;
    f.parallelism = span > 0 ? static_cast<double>(work) / static_cast<double>(span) : 0;
    f.work = report::format_work(l.model, work);
    f.span = report::format_work(l.model, span);
    f.host_steal = l.model.host_steal_percent;
    return span > 0;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tasklens: {} is left out of the comparison: {}\n", path, e.what());
    return false;
  }
}

}  // namespace

int run_record_repeated(const RecordOptions& options) {
  if (options.repeat < 2 || options.repeat > kMaxRepeat)
    throw UsageError(
        fmt::format("--repeat {}: give 2 to {} recordings", options.repeat, kMaxRepeat));
  std::vector<std::string> recorded;
  for (unsigned k = 1; k <= options.repeat; ++k) {
    RecordOptions one = options;
    one.repeat = 1;
    one.output = numbered_output(options.output, k);
    const int code = run_record(one);  // a program killed by a signal ends tasklens with it
    std::error_code ec;
    if (!fs::exists(one.output, ec)) return code;  // said by run_record: nothing was written
    recorded.push_back(one.output);
    if (code != 0) {
      name_output(one.output, options.output);
      fmt::print(stderr,
                 "tasklens: run {} of {} exited with status {}: not repeated further; {} is its "
                 "recording\n",
                 k, options.repeat, code, options.output);
      return code;
    }
  }
  std::vector<RepeatFigures> runs;
  for (size_t i = 0; i < recorded.size(); ++i) {
    RepeatFigures f;
    f.run = static_cast<unsigned>(i + 1);
    if (figures_of(recorded[i], f)) runs.push_back(f);
  }
  if (runs.empty()) {
    name_output(recorded.back(), options.output);
    fmt::print(stderr, "tasklens: no recording had a parallelism to compare; {} is the last one\n",
               options.output);
    return 0;
  }
  const report::RepeatSpread spread = report::repeat_spread(runs);
  name_output(runs[spread.median].path, options.output);
  fmt::print(stderr, "{}",
             report::repeat_summary(runs, spread, options.command.front(), options.output));
  return 0;
}

}  // namespace tasklens::cli
