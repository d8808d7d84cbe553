// Where a command's output goes (platform.hpp says why one place decides it).
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>

#include "errors.hpp"
#include "platform/platform.hpp"

namespace tasklens::platform {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISBLK(mode)) return "a block device";
  return "not a regular file";
}

}  // namespace

OutputTarget resolve_output(const std::string& path, const std::string& example) {
  OutputTarget t;
  t.path = path;
  if (path == "-") {
    t.kind = OutputTarget::Kind::Stdout;
    return t;
  }
  struct stat link {};
  if (::lstat(path.c_str(), &link) != 0) return t;  // New; an unusable directory fails later
  if (S_ISLNK(link.st_mode)) {
    // Followed, not replaced: the temporary goes beside the final target and is renamed over
    // it, so the link (and what else links to the file) stays and sees the new content.
    char resolved[PATH_MAX];
    if (::realpath(path.c_str(), resolved) == nullptr) {
      char to[PATH_MAX] = {};
      const ssize_t n = ::readlink(path.c_str(), to, sizeof to - 1);
      throw UsageError(fmt::format(
          "-o {}: is a symbolic link to {}, which {}; remove the link or give another file name",
          path, n > 0 ? std::string(to, static_cast<size_t>(n)) : std::string("?"),
          errno == ENOENT ? "does not exist" : std::strerror(errno)));
    }
    t.path = resolved;
  }
  struct stat st {};
  if (::stat(t.path.c_str(), &st) != 0) return t;
  if (S_ISREG(st.st_mode)) {
    t.kind = OutputTarget::Kind::Regular;
    t.mode = st.st_mode & 07777;
  } else if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
    t.kind = OutputTarget::Kind::Stream;
  } else if (S_ISDIR(st.st_mode)) {
    throw UsageError(
        fmt::format("-o {}: is a directory; give a file name, e.g. -o {}/{}", path, path, example));
  } else {
    throw UsageError(
        fmt::format("-o {}: is {}, which tasklens never replaces; give a file name, e.g. -o {}",
                    path, kind_of(st.st_mode), example));
  }
  return t;
}

OutputFile::OutputFile(const std::string& path, const std::string& example)
    : target_(resolve_output(path, example)) {
  const std::string& where = target_.path;
  int fd = -1;
  switch (target_.kind) {
    case OutputTarget::Kind::Stdout:
      file_ = stdout;
      return;
    case OutputTarget::Kind::Stream:
      // Written in place. A FIFO's open waits for its reader, as a shell's `> fifo` does.
      fd = ::open(where.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
      if (fd < 0)
        throw UsageError(fmt::format("-o {}: cannot write there ({}); choose a writable path", path,
                                     std::strerror(errno)));
      break;
    case OutputTarget::Kind::New:
    case OutputTarget::Kind::Regular:
      tmp_ = where + ".tmp-XXXXXX";
      fd = mkstemp(tmp_.data());
      if (fd < 0)
        throw UsageError(fmt::format("-o {}: cannot write there ({}); choose a writable path", path,
                                     std::strerror(errno)));
      break;
  }
  file_ = fdopen(fd, "w");
  if (!file_) {
    const int err = errno;
    ::close(fd);
    if (!tmp_.empty()) std::remove(tmp_.c_str());
    throw UsageError(fmt::format("-o {}: cannot write there ({})", path, std::strerror(err)));
  }
}

OutputFile::~OutputFile() {
  if (file_ && file_ != stdout) std::fclose(file_);
  if (!committed_ && !tmp_.empty()) std::remove(tmp_.c_str());
}

bool OutputFile::commit() {
  if (to_stdout()) {
    committed_ = true;
    return std::fflush(stdout) == 0;
  }
  bool ok = std::fclose(file_) == 0;
  file_ = nullptr;
  if (tmp_.empty()) {  // a device or a FIFO: nothing to rename
    committed_ = ok;
    return ok;
  }
  // mkstemp creates 0600: a replaced file keeps its permissions, a new one is an ordinary file
  // (0666 minus the umask).
  mode_t mode = target_.mode;
  if (target_.kind == OutputTarget::Kind::New) {
    const mode_t mask = umask(0);
    umask(mask);
    mode = 0666 & ~mask;
  }
  ok = ok && chmod(tmp_.c_str(), mode) == 0;
  ok = ok && std::rename(tmp_.c_str(), target_.path.c_str()) == 0;
  committed_ = ok;
  if (!ok) {
    const int err = errno;
    std::remove(tmp_.c_str());
    errno = err;
  }
  return ok;
}

}  // namespace tasklens::platform
