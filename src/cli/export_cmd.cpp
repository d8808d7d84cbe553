#include "cli/export_cmd.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>

#include "cli/analyze.hpp"
#include "cli/errors.hpp"
#include "report/export_dump.hpp"
#include "report/export_flows.hpp"
#include "report/export_perfetto.hpp"
#include "report/whatif_report.hpp"

namespace tasklens::cli {
namespace {

enum class ExportFormat { Perfetto, Json, Csv };

ExportFormat parse_export_format(const std::string& f) {
  if (f == "perfetto") return ExportFormat::Perfetto;
  if (f == "json") return ExportFormat::Json;
  if (f == "csv") return ExportFormat::Csv;
  throw UsageError("--format " + f + ": unknown export format; use perfetto, json or csv");
}

// The output file is written under a temporary name in the same directory and renamed when
// complete: a failed export (bad trace, full disk) leaves no half-written file behind, and an
// unwritable directory is reported before the trace is read.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path) : path_(path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode))
      throw UsageError(
          fmt::format("-o {}: is a directory; give a file name, e.g. -o run.json", path));
    tmp_ = path + ".tmp-XXXXXX";
    int fd = mkstemp(tmp_.data());
    if (fd < 0)
      throw UsageError(fmt::format("-o {}: cannot write there ({}); choose a writable path", path,
                                   std::strerror(errno)));
    file_ = fdopen(fd, "w");
    if (!file_) {
      ::close(fd);
      std::remove(tmp_.c_str());
      throw UsageError(fmt::format("-o {}: cannot write there ({})", path, std::strerror(errno)));
    }
  }
  ~OutputFile() {
    if (file_) std::fclose(file_);
    if (!committed_) std::remove(tmp_.c_str());
  }
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;
  std::FILE* file() { return file_; }
  // Closes and renames into place; false (and the temporary removed) on failure.
  bool commit() {
    bool ok = std::fclose(file_) == 0;
    file_ = nullptr;
    // mkstemp creates 0600; an export is an ordinary file (0666 minus the umask).
    mode_t mask = umask(0);
    umask(mask);
    ok = ok && chmod(tmp_.c_str(), 0666 & ~mask) == 0;
    ok = ok && std::rename(tmp_.c_str(), path_.c_str()) == 0;
    committed_ = ok;
    if (!ok) {  // now: callers exit at once, without running destructors
      const int err = errno;
      std::remove(tmp_.c_str());
      errno = err;
    }
    return ok;
  }

 private:
  std::string path_, tmp_;
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

std::string human_bytes(uint64_t b) {
  if (b < 10240) return fmt::format("{} B", b);
  if (b < 10485760) return fmt::format("{:.1f} KiB", b / 1024.0);
  return fmt::format("{:.1f} MiB", b / 1048576.0);
}

// Preempted intervals come in CLOCK_MONOTONIC ns; the clock syncs map them onto the TSC (as the
// model builder does).
std::vector<std::vector<std::pair<uint64_t, uint64_t>>> preemptions_in_tsc(
    const trace::TraceFile& t) {
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> out;
  const auto& syncs = t.clock_syncs();
  const double hz = t.tsc_hz();
  if (syncs.size() < 2 || hz <= 0) return out;
  const trace::ClockSync& s0 = syncs.front();
  auto to_tsc = [&](uint64_t ns) {
    double v = double(s0.tsc) + (double(ns) - double(s0.monotonic_ns)) * hz / 1e9;
    return v <= 0 ? uint64_t(0) : static_cast<uint64_t>(v);
  };
  out.resize(t.preemptions().size());
  for (size_t i = 0; i < out.size(); ++i)
    for (auto [from, to] : t.preemptions()[i]) out[i].emplace_back(to_tsc(from), to_tsc(to));
  return out;
}

}  // namespace

void run_export(const ExportOptions& opt) {
  const ExportFormat format = parse_export_format(opt.format);
  const bool to_stdout = opt.output.empty() || opt.output == "-";
  std::unique_ptr<OutputFile> file;
  if (!to_stdout) file = std::make_unique<OutputFile>(opt.output);

  Loaded l = load(opt.trace);
  const model::Model& m = l.model;
  const report::FragmentLabels fragments = report::label_fragments(m, l.trace->modules(), l.labels);
  report::ExportRun run;
  run.model = &m;
  run.labels = &l.labels;
  run.fragments = &fragments;
  run.info = report::run_info(*l.trace);
  run.tsc_hz = l.trace->tsc_hz();
  run.thread_types.assign(m.thread_count, 2);
  run.os_tids.assign(m.thread_count, 0);
  for (const trace::ThreadInfo& t : l.trace->threads()) {
    if (t.thread >= m.thread_count) continue;
    run.thread_types[t.thread] = t.type;
    run.os_tids[t.thread] = t.os_tid;
  }

  report::ExportWriter out(to_stdout ? stdout : file->file());
  std::string summary;
  if (format == ExportFormat::Perfetto) {
    uint64_t first = UINT64_MAX;
    for (const model::Strand& s : m.strands)
      if (report::is_timed(s)) first = std::min(first, s.start);
    if (first == UINT64_MAX)
      throw UsageError(opt.trace +
                       ": no strand has a start or end time (the trace was recorded without "
                       "timestamps): a timeline needs them; record it again with `tasklens "
                       "record`");
    // Time 0 is the start of the recording (the runtime's start-up shows as the time before
    // the first slice), unless the header's start is not before the first strand.
    const uint64_t start = l.trace->header().start_tsc;
    run.origin = start != 0 && start <= first ? start : first;
    run.preemptions = preemptions_in_tsc(*l.trace);
    if (run.tsc_hz <= 0)
      fmt::print(stderr,
                 "tasklens: note: {} has no measured TSC rate (a run too short for two clock "
                 "syncs): timestamps are taken as ns\n",
                 opt.trace);
    const report::PerfettoStats st = report::write_perfetto(run, out);
    summary =
        fmt::format("{} slices on {} worker tracks, {} flows", st.slices, st.tracks, st.flows);
  } else if (format == ExportFormat::Json) {
    report::write_dag_json(run, out);
    summary = fmt::format("{} strands, {} nodes", m.strands.size(), m.nodes.size());
  } else {
    report::write_strands_csv(run, out);
    summary = fmt::format("{} strands", m.strands.size());
  }
  if (!out.finish()) {
    fmt::print(stderr, "tasklens: could not write the export to {}: {}\n",
               to_stdout ? std::string("standard output") : opt.output,
               errno ? std::strerror(errno) : "write error");
    std::fflush(stderr);
    file.reset();
    std::_Exit(1);
  }
  if (file) {
    if (!file->commit()) {
      fmt::print(stderr, "tasklens: could not write {}: {}\n", opt.output, std::strerror(errno));
      std::fflush(stderr);
      std::_Exit(1);
    }
    fmt::print(stderr, "tasklens: wrote {} ({}, {})\n", opt.output, human_bytes(out.bytes()),
               summary);
  }
  print_timings("export");
  std::fflush(stderr);
  // Like write_and_exit: no teardown of a model of millions of strands.
  std::_Exit(0);
}

}  // namespace tasklens::cli
