// What a recording lost and why, in words: shared by `record`'s summary (from a Scan) and the
// reports (from the model), so that both say the same thing. Each way of losing data has its own
// cause and message (what was lost, from when, what to do); none of them is a killed program.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "trace/format.hpp"

namespace tasklens::trace {

struct Loss {
  std::string cause;         // "disk_full", "write_error", "no_memory", "exec"
  int error = 0;             // errno of the first failed write (0: unknown or not a write)
  double from_seconds = -1;  // when it started, seconds into the recording (-1: unknown)
  uint64_t count = 0;        // writes failed or dropped (write errors), events lost (no memory)
  std::string message;       // one line
};

// `stats` may be null (a trace without RecorderStats); `events_lost` and `finish_reason` come
// from the Finish record (when has_finish).
std::vector<Loss> describe_losses(const RecorderStats* stats, bool has_finish, uint64_t events_lost,
                                  uint32_t finish_reason);

// Why a trace without the recorder's end record ended, from the launcher's exit status:
// "the program was killed by signal N" only when it was.
std::string incomplete_cause(bool has_launch_status, int exit_code, int signal);

}  // namespace tasklens::trace
