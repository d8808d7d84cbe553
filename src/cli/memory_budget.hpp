// Whether a trace's model fits in the memory this machine can give a reader, checked before the
// model is built: a reader holds about 400-580 bytes per task (docs/benchmarks.md), so a
// recording of a hundred million tasks needs tens of gigabytes. Without this check the kernel's
// out-of-memory killer ends such a read, and may end other programs of the user's first.
//
// The budget is the least of: the memory the kernel says is available without swapping out
// (MemAvailable) plus free swap; the cgroup's limit less what the cgroup already uses (a
// container, a systemd slice); the address space limit (ulimit -v); TASKLENS_MEMORY_LIMIT (bytes,
// or with a K, M, G or T suffix), which a user sets to keep tasklens smaller, and which makes the
// check testable. (The trace reader's own budget for a pipe of unknown length, trace/reader.cpp's
// unknown_size_budget, is a quarter of the free memory and address space: the trace layer cannot
// depend on this one.)
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "trace/reader.hpp"

namespace tasklens::cli {

struct MemoryBudget {
  uint64_t bytes = 0;
  std::string source;  // what set it, for the message ("the memory available", ...)
};

// The budget on this machine now; nullopt when nothing could be read (the check is then skipped).
std::optional<MemoryBudget> memory_budget();

// The least a reader's model of the trace needs (a lower bound from its task count, or from its
// event bytes when the recording did not finish): a trace below it may still not fit.
uint64_t model_bytes_at_least(const trace::TraceFile& trace);

// Throws OutOfMemoryError (exit code 6) when the trace's model cannot fit in the budget.
void check_model_fits(const trace::TraceFile& trace, const std::string& path);

// Parsers, for the tests: a /proc/meminfo text's MemAvailable + SwapFree in bytes (nullopt when
// MemAvailable is missing); a size such as "512M" or "2G" or "1000" in bytes (nullopt if not one);
// a cgroup v2 memory.max text ("max": nullopt).
std::optional<uint64_t> available_from_meminfo(const std::string& text);
std::optional<uint64_t> parse_size(const std::string& text);
std::optional<uint64_t> cgroup_limit(const std::string& text);

}  // namespace tasklens::cli
