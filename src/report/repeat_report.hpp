// `tasklens record --repeat N`'s account of the series: each recording's figures, the median
// one, and how far the others lie from it. One recording is a sample: the same program's
// parallelism moves from run to run (the machine's speed changes between the program's serial
// and parallel phases, other programs, interrupts), by 7-36% in three or five recordings of
// irregular programs on this project's 2-core virtual machine. Saying how much lets a user tell
// a change from noise.
#pragma once

#include <string>
#include <vector>

namespace tasklens::report {

// The k-th recording's file beside `output` (k from 1): the number goes before the extension,
// so that "run.tlens" gives "run.2.tlens" and "tasklens.data" gives "tasklens.2.data".
std::string numbered_output(const std::string& output, unsigned k);

// One recording's figures (the whole program's, robust span: what `report` shows first).
struct RepeatFigures {
  unsigned run = 0;  // from 1: the number in its file's name
  std::string path;
  double parallelism = 0;
  std::string work, span;  // as the report shows them (time, or the metric's count)
  double host_steal = -1;  // percent, -1 when the trace does not say
};

// The index of the recording whose parallelism is the median (the lower middle one of an even
// count), and the largest relative distance of any recording's parallelism from it.
struct RepeatSpread {
  size_t median = 0;
  double most_apart = 0;  // e.g. 0.23: a recording lies 23% from the median
};
RepeatSpread repeat_spread(const std::vector<RepeatFigures>& runs);

// What `record --repeat` prints after the runs: the table and what the spread means.
std::string repeat_summary(const std::vector<RepeatFigures>& runs, const RepeatSpread& spread,
                           const std::string& program, const std::string& output);

}  // namespace tasklens::report
