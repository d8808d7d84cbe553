// Where a command's output goes (`export -o`, `view -o`, `record -o`): one place decides what may
// be written over. Renaming a finished file over `-o` is right for a regular file and wrong for
// anything else: as root, `export -o /dev/null` replaced the system's null device with a file,
// and a symlink given as -o was replaced by a file.
#pragma once

#include <sys/types.h>

#include <cstdio>
#include <string>

namespace tasklens::cli {

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
// replaced: a directory, a socket, a block device, a dangling or looping symlink. `example` is a
// file name the message suggests, e.g. "run.json".
OutputTarget resolve_output(const std::string& path, const std::string& example);

// A command's output, opened before the command's work (an unwritable path is reported before a
// trace is read):
// - a regular file (new, existing, or a symlink's target) is written under a temporary name
//   beside it and renamed over it by commit(): a failed command leaves no half-written file and
//   an existing one as it was;
// - a character device or a FIFO is opened and written directly, never renamed over;
// - "-" is standard output.
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

}  // namespace tasklens::cli
