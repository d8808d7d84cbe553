#include "report/repeat_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <numeric>

namespace tasklens::report {
namespace fs = std::filesystem;

std::string numbered_output(const std::string& output, unsigned k) {
  const fs::path p(output);
  const std::string stem = p.stem().string(), ext = p.extension().string();
  const fs::path name =
      fmt::format("{}.{}{}", stem.empty() ? ext : stem, k, stem.empty() ? "" : ext);
  return (p.parent_path() / name).string();
}

RepeatSpread repeat_spread(const std::vector<RepeatFigures>& runs) {
  RepeatSpread s;
  if (runs.empty()) return s;
  std::vector<size_t> order(runs.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return runs[a].parallelism < runs[b].parallelism; });
  s.median = order[(order.size() - 1) / 2];
  const double m = runs[s.median].parallelism;
  if (m > 0)
    for (const RepeatFigures& r : runs)
      s.most_apart = std::max(s.most_apart, std::abs(r.parallelism / m - 1));
  return s;
}

std::string repeat_summary(const std::vector<RepeatFigures>& runs, const RepeatSpread& spread,
                           const std::string& program, const std::string& output) {
  std::string out = fmt::format(
      "tasklens: {} recordings of {} (the whole program, as `report` shows it first):\n",
      runs.size(), program);
  const bool steal = std::any_of(runs.begin(), runs.end(),
                                 [](const RepeatFigures& r) { return r.host_steal >= 0; });
  out += fmt::format("  {:>3}  {:>11}  {:>12}  {:>12}{}\n", "run", "parallelism", "work", "span",
                     steal ? "  host steal" : "");
  double lo = runs.empty() ? 0 : runs[0].parallelism, hi = lo;
  for (size_t i = 0; i < runs.size(); ++i) {
    const RepeatFigures& r = runs[i];
    lo = std::min(lo, r.parallelism);
    hi = std::max(hi, r.parallelism);
    out += fmt::format("  {:>3}  {:>11.2f}  {:>12}  {:>12}", r.run, r.parallelism, r.work, r.span);
    if (steal) out += r.host_steal >= 0 ? fmt::format("  {:>9.0f}%", r.host_steal) : "           -";
    out += i == spread.median ? "   <- median\n" : "\n";
  }
  const double median = runs.empty() ? 0 : runs[spread.median].parallelism;
  const long apart = std::lround(100 * spread.most_apart);
  if (spread.most_apart <= 0.10)
    out += fmt::format(
        "tasklens: parallelism {:.2f} to {:.2f}, median {:.2f}: the recordings agree within {}%, "
        "so one recording stands for this program on this machine\n",
        lo, hi, median, apart);
  else
    out += fmt::format(
        "tasklens: parallelism {:.2f} to {:.2f}, median {:.2f}: up to {}% from the median. This "
        "program's figures move that much from one run to the next on this machine (its speed "
        "changes between the program's phases, other programs, interrupts): judge a change by "
        "the median of several recordings, and take a difference under {}% for noise\n",
        lo, hi, median, apart, apart);
  if (!runs.empty())
    out += fmt::format(
        "tasklens: {} is run {}'s recording (the median parallelism); each run's is kept as {} "
        "and so on, for `tasklens diff`\n",
        output, runs[spread.median].run, numbered_output(output, 1));
  return out;
}

}  // namespace tasklens::report
