// The one-pass profile (src/analysis/stream_profile.hpp) on real recordings, beside
// compute_profile on the same model: are they equal, how fast is each, and how many strands did
// the pass hold at most (its memory follows those, not the task count).
//
// The model is first turned into the calls a streaming loader would make (ProfileTape: the
// instances, each strand's last successor), untimed; the pass is the engine playing them.
//
// Usage: stream_profile TRACE.tlens... (bench/stream_profile.sh records the shapes and runs it).
#include "analysis/stream_profile.hpp"

#include <cstdio>
#include <string>

#include "model/builder.hpp"
#include "seconds.hpp"
#include "trace/reader.hpp"

namespace {

using namespace tasklens;

bool same(const analysis::Profile& a, const analysis::Profile& b) {
  if (a.work != b.work || a.span != b.span || a.critical_path != b.critical_path ||
      a.sites.size() != b.sites.size())
    return false;
  for (size_t i = 0; i < a.sites.size(); ++i) {
    const analysis::SiteRow &x = a.sites[i], &y = b.sites[i];
    if (x.site != y.site || x.count != y.count || x.work != y.work || x.span != y.span ||
        x.critical_work != y.critical_work)
      return false;
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: stream_profile TRACE.tlens...\n");
    return 2;
  }
  std::printf("%-28s %10s %10s %9s %14s %9s %14s %11s %5s\n", "trace", "tasks", "strands",
              "full ms", "full strands/s", "pass ms", "pass strands/s", "peak live", "same");
  int status = 0;
  for (int i = 1; i < argc; ++i) {
    try {
      const trace::TraceFile file = trace::TraceFile::open(argv[i]);
      const model::Model m = model::build_model(file, {});
      // The better of three timings of each: a pause of the machine only lengthens one.
      const analysis::ProfileTape tape(m);
      double full = 1e30, pass = 1e30;
      analysis::Profile a, b;
      uint64_t peak = 0;
      for (int round = 0; round < 3; ++round) {
        double t0 = bench::seconds();
        a = analysis::compute_profile(m);
        double t1 = bench::seconds();
        b = tape.play(uint64_t{1} << 20, &peak);
        double t2 = bench::seconds();
        full = std::min(full, t1 - t0);
        pass = std::min(pass, t2 - t1);
      }
      const double n = static_cast<double>(m.strands.size());
      std::string name = argv[i];
      name = name.substr(name.rfind('/') + 1);
      const bool equal = same(a, b);
      std::printf("%-28s %10llu %10zu %9.1f %14.3g %9.1f %14.3g %11llu %5s\n", name.c_str(),
                  static_cast<unsigned long long>(m.task_count), m.strands.size(), full * 1e3,
                  n / full, pass * 1e3, n / pass, static_cast<unsigned long long>(peak),
                  equal ? "yes" : "NO");
      if (!equal) status = 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "stream_profile: %s: %s\n", argv[i], e.what());
      status = 1;
    }
  }
  return status;
}
