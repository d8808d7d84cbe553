#include "trace/losses.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>

namespace tasklens::trace {
namespace {

std::string format(const char* fmt, auto... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

}  // namespace

std::vector<Loss> describe_losses(const RecorderStats* stats, bool has_finish, uint64_t events_lost,
                                  uint32_t finish_reason) {
  std::vector<Loss> out;
  if (stats && stats->write_errors > 0) {
    Loss l;
    l.error = static_cast<int>(stats->first_write_errno);
    l.count = stats->write_errors;
    const bool full = l.error == ENOSPC || l.error == EDQUOT;
    l.cause = full ? "disk_full" : "write_error";
    if (l.error != 0) {  // traces of before the errno was kept (version 4.2) have 0 there
      l.from_seconds = stats->first_write_error_ms / 1000.0;
      l.message = format(
          "%s (%s) from %.3f s into the run: the events after that are lost (%llu writes "
          "dropped), the trace holds what came before; %s",
          full ? "the trace's file system was full" : "writing the trace failed",
          std::strerror(l.error), l.from_seconds, static_cast<unsigned long long>(l.count),
          full ? "free space there or record with -o on another file system"
               : "check that file system or record with -o elsewhere");
    } else {
      l.message = format(
          "%llu writes to the trace file failed (a full disk?): the events they held are lost",
          static_cast<unsigned long long>(l.count));
    }
    out.push_back(l);
  }
  if (has_finish && events_lost > 0) {
    Loss l;
    l.cause = "no_memory";
    l.count = events_lost;
    if (stats && stats->first_no_memory_ms > 0) l.from_seconds = stats->first_no_memory_ms / 1000.0;
    // Either the buffers' bound (TASKLENS_BUFFER_MB: more threads than it has buffers for) or
    // the system's memory (an allocation refused): the stats cannot tell them apart, so the
    // advice names both, with what was in use when it happened.
    const double in_use_mib = stats
                                  ? static_cast<double>(stats->chunks) *
                                        static_cast<double>(stats->chunk_bytes) / (1024.0 * 1024.0)
                                  : 0;
    l.message = format(
        "%llu events were lost: the recorder ran out of memory for its buffers%s%s; the "
        "threads concerned are recorded up to then; raise TASKLENS_BUFFER_MB (256 MiB by "
        "default) or free memory, and record again",
        static_cast<unsigned long long>(l.count),
        l.from_seconds >= 0 ? format(" from %.3f s into the run", l.from_seconds).c_str() : "",
        in_use_mib > 0 ? format(" (%.1f MiB of buffers in use)", in_use_mib).c_str() : "");
    out.push_back(l);
  }
  if (has_finish && finish_reason == static_cast<uint32_t>(FinishReason::Exec)) {
    Loss l;
    l.cause = "exec";
    l.message =
        "the program called exec: what ran before it is recorded; the new program was not "
        "recorded (record it on its own to profile it)";
    out.push_back(l);
  }
  return out;
}

std::string incomplete_cause(bool has_launch_status, int exit_code, int signal) {
  if (has_launch_status && signal != 0)
    return format("the program was killed by signal %d before the recorder finished it", signal);
  if (has_launch_status)
    return format(
        "the program exited with code %d without the recorder finishing the trace: _exit, or a "
        "full disk that left no room for its end",
        exit_code);
  return "`tasklens record` was killed before the program ended (the program died with it), or "
         "the file was copied while being recorded: it holds what the recorder had written";
}

}  // namespace tasklens::trace
