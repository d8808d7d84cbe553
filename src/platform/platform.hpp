// The machine under tasklens's own tools (not the recorder, which runs inside the profiled
// program): memory in huge pages and ahead-of-use faulting, the memory a reader may take, what
// `-o` may write over, a program's ELF file, and running a helper program quietly. Everything
// here depends on Linux (mmap, madvise, /proc, cgroups, ELF); nothing else in the model, the
// analyses, the reports or the commands does, so a port or a machine without these features
// changes this folder only. Each function says what it does when the feature is missing: it
// always falls back to plain behaviour, never fails a command.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

namespace tasklens::platform {

// ---------------------------------------------------------------------------------------------
// Memory in transparent huge pages (huge_blocks.cpp)
//
// A reader builds a model in vectors of tens to hundreds of megabytes, and fresh memory is
// faulted in one 4 KiB page at a time, at 1-3 us per fault on virtual machines: a third of a
// large report's time. A 2 MiB huge page is faulted in once for 512 of them. The tasklens
// executable replaces the global operator new/delete (huge_new_delete.cpp, linked into it alone)
// and sends blocks of kHugeBlockMin bytes or more here; each is its own 2 MiB-aligned mapping
// marked MADV_HUGEPAGE, and a freed block's pages are kept for the next blocks. Where the
// kernel's THP setting is "never" (or a mapping fails) blocks come from malloc as usual.

inline constexpr std::size_t kHugeBlockMin = std::size_t{4} << 20;

// A block of at least `bytes` bytes, 2 MiB-aligned, in a mapping of its own marked for huge
// pages; nullptr when huge pages are off, the mapping failed, or too many blocks are live (the
// caller then uses malloc). Thread-safe.
void* huge_block_alloc(std::size_t bytes) noexcept;
// Frees p if it came from huge_block_alloc and returns true; false (and nothing done) for any
// other pointer, nullptr included. Thread-safe.
bool huge_block_free(void* p) noexcept;
// Live blocks, and bytes of freed blocks kept for the next ones; giving those back.
std::size_t huge_blocks_live() noexcept;
std::size_t huge_blocks_spare_bytes() noexcept;
void huge_blocks_release_spares() noexcept;
// Gives the memory freed so far back to the system: the spare huge blocks, and malloc's free
// pages in every arena (glibc's malloc_trim; elsewhere the spares alone). For a reading in
// passes, between two of them: a pass's memory, freed, is otherwise kept (by the spares, and by
// malloc in the arena of the thread that freed it, where the next pass's threads may not take
// it), so that a command's peak grew with its passes instead of being the largest pass's.
void give_back_freed_memory() noexcept;
// Whether the kernel gives huge pages to memory marked MADV_HUGEPAGE (THP "always" or
// "madvise") and TASKLENS_HUGE_PAGES is not 0, read once. TASKLENS_HUGE_PAGES=0 is for virtual
// machines whose host takes freed memory back, where a fresh huge page can cost more than the
// small pages it replaces.
bool huge_pages_available() noexcept;
// Whether this executable's big blocks are in huge pages: huge pages are available and its
// operator new sends big blocks here (the tasklens executable, not a sanitizer build, not a test).
bool big_blocks_in_huge_pages() noexcept;

// ---------------------------------------------------------------------------------------------
// Faulting memory in ahead of its use (prefault.cpp)
//
// The model builder reserves its big vectors at their expected sizes and hands the ranges to a
// Prefaulter, which populates them (MADV_POPULATE_WRITE, Linux 5.14+) while the builder works,
// so that the faults are taken on another core. Two ways: start() populates everything on a
// thread of its own (memory in 4 KiB pages); step(), called by a thread with time to spare,
// populates a huge page at a time just ahead of where the owner writes, as progress() reports.
// Populating never changes memory contents, so it may run while the owner writes; on an older
// kernel madvise fails and the owner faults the pages in itself, as without a Prefaulter.
class Prefaulter {
 public:
  Prefaulter();
  Prefaulter(const Prefaulter&) = delete;
  Prefaulter& operator=(const Prefaulter&) = delete;
  ~Prefaulter();

  // Adds the unused capacity of v (its elements beyond size(), up to capacity()) and returns
  // its index for progress().
  template <class T>
  size_t add_capacity(const std::vector<T>& v) {
    return add_range(v.data() + v.size(), (v.capacity() - v.size()) * sizeof(T));
  }
  size_t add_range(const void* begin, size_t bytes);
  // Where the owner writes in range i (step() keeps a few huge pages ahead of it).
  void progress(size_t i, const void* at);
  // For step(): from now on, only ahead of the progress() reported.
  void follow_owner();
  // Populates the next huge page of the next range that has one to populate (round-robin, so
  // that ranges the owner fills together are ready together); false when none has.
  bool step();
  // Populates everything on a thread of its own; join() waits for it.
  void start();
  void join();

 private:
  struct Range {
    uintptr_t at, end;
  };
  std::vector<Range> ranges_;
  std::unique_ptr<std::atomic<uintptr_t>[]> reach_;  // per range, when following the owner
  size_t next_ = 0;
  std::thread thread_;
};

// ---------------------------------------------------------------------------------------------
// The memory a reader may take (memory_budget.cpp)
//
// The least of: the memory the kernel says is available without swapping out (MemAvailable)
// plus free swap; the cgroup's limit less what the cgroup already uses (a container, a systemd
// slice); the address space limit (ulimit -v); TASKLENS_MEMORY_LIMIT (bytes, or with a K, M, G or
// T suffix), which a user sets to keep tasklens smaller, and which makes the check testable.

struct MemoryBudget {
  uint64_t bytes = 0;
  std::string source;  // what set it, for the message ("the memory available", ...)
};
// The budget now; nullopt when nothing could be read (callers then skip their check). Throws
// UsageError when TASKLENS_MEMORY_LIMIT is not a size.
std::optional<MemoryBudget> memory_budget();
// Parsers, for the tests: a /proc/meminfo text's MemAvailable + SwapFree in bytes (nullopt when
// MemAvailable is missing); a size such as "512M" or "2G" or "1000" in bytes (nullopt if not
// one); a cgroup v2 memory.max text ("max": nullopt).
std::optional<uint64_t> available_from_meminfo(const std::string& text);
std::optional<uint64_t> parse_size(const std::string& text);
std::optional<uint64_t> cgroup_limit(const std::string& text);

// ---------------------------------------------------------------------------------------------
// Where a command's output goes (output_file.cpp)
//
// One place decides what `-o` may write over. Renaming a finished file over `-o` is right for a
// regular file and wrong for anything else: as root, `export -o /dev/null` once replaced the
// system's null device with a file, and a symlink given as -o was replaced by a file.

struct OutputTarget {
  enum class Kind {
    Stdout,   // "-"
    New,      // nothing there yet
    Regular,  // an existing regular file (or a symlink to one)
    Stream,   // a character device or a FIFO (/dev/null, a tty, a named pipe)
  };
  Kind kind = Kind::New;
  // The path to write. A symlink is followed to its final target, which is what gets written
  // (renamed over): the link itself stays, as with `cmd > link` in a shell.
  std::string path;
  mode_t mode = 0;  // permission bits of an existing regular file
};
// What `-o path` names. Throws UsageError (one line naming `path`) for what must never be
// replaced: a directory, a socket, a block device, a dangling or looping symlink. `example` is
// a file name the message suggests, e.g. "run.json".
OutputTarget resolve_output(const std::string& path, const std::string& example);

// A command's output, opened before the command's work (an unwritable path is reported before a
// trace is read): a regular file is written under a temporary name beside it and renamed over
// it by commit() (a failed command leaves no half-written file, and an existing one as it was);
// a character device or a FIFO is written directly; "-" is standard output.
class OutputFile {
 public:
  OutputFile(const std::string& path, const std::string& example);
  ~OutputFile();  // without commit(): the temporary is removed
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::FILE* file() { return file_; }
  bool to_stdout() const { return target_.kind == OutputTarget::Kind::Stdout; }
  // Closes (flushes standard output) and renames into place; false with errno on failure, the
  // temporary then removed (callers may _Exit without running destructors).
  bool commit();

 private:
  OutputTarget target_;
  std::string tmp_;  // the temporary of a regular file, else empty
  std::FILE* file_ = nullptr;
  bool committed_ = false;
};

// ---------------------------------------------------------------------------------------------
// A program's ELF file (elf.cpp)

struct ElfDynamic {
  bool elf = false;                    // an ELF64 little-endian file that could be read
  std::vector<std::string> needed;     // DT_NEEDED: the libraries it links
  std::vector<std::string> undefined;  // dynamic symbols it imports (undefined in .dynsym)
};
// Reads `path`'s dynamic section and dynamic symbols. Anything that is not a readable ELF64
// file (a script, a truncated or damaged file) gives elf = false; never throws.
ElfDynamic read_elf_dynamic(const std::string& path);
// Where execvp(argv0) would find the program: argv0 itself when it holds a '/', else the first
// executable regular file of that name in `path_list` (PATH's syntax); "" when there is none.
std::string find_command(const std::string& argv0, const std::string& path_list);

// ---------------------------------------------------------------------------------------------
// Running a helper program (process.cpp)

struct QuietRun {
  bool ran = false;  // started, ended by itself within the time allowed, status 0
  std::string why;   // otherwise why not, to follow the program's name: "was killed by signal 11"
};
// Runs `program` (no arguments) with exactly the environment `env` ("NAME=value" entries), its
// standard streams on /dev/null, and waits for it, killing it after `timeout_seconds`.
QuietRun run_quietly(const std::string& program, const std::vector<std::string>& env,
                     double timeout_seconds);

// ---------------------------------------------------------------------------------------------
// The user's cache (user_cache.cpp)
//
// What tasklens keeps between runs (the runtime's measured costs, a recording's robust-span
// clipping) goes under one directory: TASKLENS_CACHE_DIR, else $XDG_CACHE_HOME/tasklens, else
// ~/.cache/tasklens; "" when none of them is set (the callers then keep nothing).
std::string cache_dir();
// "path:size:mtime.ns": what changes when the file at `path` is written or replaced
// ("path:missing" when it cannot be read), for cache keys.
std::string file_identity(const std::string& path);
// FNV-1a of `s` continued from `h` (start with 1469598103934665603), with a separator after it.
uint64_t fnv1a(uint64_t h, const std::string& s);

}  // namespace tasklens::platform
