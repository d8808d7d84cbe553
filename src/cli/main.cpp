// `tasklens <command>`: record is a launcher; the other commands read a trace.
// Every error becomes one line on stderr ("tasklens: ...") and a non-zero exit code.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <limits>

#include "analysis/profile.hpp"
#include "cli/errors.hpp"
#include "cli/record.hpp"
#include "model/builder.hpp"
#include "report/profile_report.hpp"
#include "trace/reader.hpp"

namespace tasklens::cli {
namespace {

report::Format parse_format(const std::string& f) {
  if (f == "table") return report::Format::Table;
  if (f == "csv") return report::Format::Csv;
  if (f == "json") return report::Format::Json;
  throw UsageError("--format " + f + ": unknown format; use table, csv or json");
}

struct ReportOptions {
  std::string trace = "tasklens.data";
  std::string format = "table";
  size_t top = 0;  // 0: 20 rows for the table, all for csv/json
};

int run_report(const ReportOptions& opt) {
  report::Format format = parse_format(opt.format);
  trace::TraceFile t = trace::TraceFile::open(opt.trace);
  model::Model m = model::build_model(t);
  std::vector<report::SiteLabel> labels = report::label_sites(m, t.modules());
  report::merge_sites_by_location(m, labels);
  analysis::Profile p = analysis::compute_profile(m);
  size_t top = opt.top                           ? opt.top
               : format == report::Format::Table ? 20
                                                 : std::numeric_limits<size_t>::max();
  std::string out = report::render_profile(m, p, labels, report::run_info(t), format, top);
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

int run(int argc, char** argv) {
  CLI::App app{
      "tasklens: a parallelism profiler for OpenMP task programs.\n"
      "Record a run of an unmodified program, then see its work, span (critical path) and\n"
      "parallelism for the whole program and for every construct site.\n\n"
      "  tasklens record -- ./app args     # writes tasklens.data\n"
      "  tasklens report                    # parallelism profile of tasklens.data\n",
      "tasklens"};
  app.set_version_flag("--version", std::string("tasklens ") + TASKLENS_VERSION);
  app.require_subcommand(1);

  RecordOptions rec;
  CLI::App* record = app.add_subcommand(
      "record",
      "Run a program and record its OpenMP execution into a trace file.\n"
      "Works on unmodified binaries built with clang -fopenmp or gcc -fopenmp: they run under\n"
      "LLVM 16's OpenMP runtime (preloaded) so that loop chunks are seen. The program's\n"
      "input, output, exit code and signals pass through unchanged; a summary line goes to\n"
      "stderr. An existing output file is kept as <file>.old.");
  record->add_option("-o,--output", rec.output, "Trace file to write")->capture_default_str();
  record
      ->add_option("--metric", rec.metric,
                   "Work metric: auto (default: cycles where the machine has hardware counters, "
                   "tsc otherwise), tsc (time-stamp counter), cycles, instructions, task-clock "
                   "(CPU time through perf, a syscall per event)")
      ->capture_default_str();
  record->add_option("--runtime", rec.runtime,
                     "OpenMP runtime to preload (path of a libomp.so.5), or 'program' to use the "
                     "program's own (default: the bundled LLVM 16 libomp)");
  record->add_option("--flush-ms", rec.flush_ms,
                     "How often buffered events reach the file, in ms (default 100); bounds what "
                     "a killed program loses");
  record->add_option("command", rec.command, "The program and its arguments (after --)")
      ->required();
  record->allow_extras(false);
  record->positionals_at_end();

  ReportOptions rep;
  CLI::App* report = app.add_subcommand(
      "report",
      "Print the parallelism profile of a trace: the whole program's work, span and\n"
      "parallelism, then every construct site (file:line) sorted by its share of the\n"
      "critical path. Work is in the metric's unit (TSC ticks shown as time).");
  report->add_option("trace", rep.trace, "Trace file")->capture_default_str();
  report->add_option("--format", rep.format, "table, csv or json")->capture_default_str();
  report->add_option("--top", rep.top, "Show only the first N sites (table default: 20)");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  if (*record) return run_record(rec);
  if (*report) return run_report(rep);
  return 2;
}

}  // namespace
}  // namespace tasklens::cli

int main(int argc, char** argv) {
  using namespace tasklens;
  try {
    return cli::run(argc, argv);
  } catch (const cli::UsageError& e) {
    fmt::print(stderr, "tasklens: {}\n", e.what());
    return 2;
  } catch (const cli::EnvironmentError& e) {
    fmt::print(stderr, "tasklens: {}\n", e.what());
    return 3;
  } catch (const trace::TraceError& e) {
    fmt::print(stderr, "tasklens: {}\n", e.what());
    return 4;
  } catch (const model::ModelError& e) {
    fmt::print(stderr, "tasklens: {}\n", e.what());
    return 5;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr, "tasklens: out of memory\n");
    return 6;
  } catch (const std::exception& e) {
    fmt::print(stderr, "tasklens: internal error: {}\n", e.what());
    return 70;
  }
}
