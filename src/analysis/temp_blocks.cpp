// Compressed blocks in a temporary file (temp_blocks.hpp).
#include "analysis/temp_blocks.hpp"

#include <fcntl.h>
#include <sys/statvfs.h>
#include <unistd.h>
#include <zstd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

#include "errors.hpp"

namespace tasklens::analysis {

namespace {

// Writes all n bytes at `at`. A short write is not an error by itself (errno is not set): the
// next write says why it stopped (no space left, say), which is what the user must be told.
bool write_all(int fd, const char* p, size_t n, off_t at) {
  while (n > 0) {
    const ssize_t w = ::pwrite(fd, p, n, at);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return false;
    if (w == 0) {
      errno = ENOSPC;
      return false;
    }
    p += w;
    n -= static_cast<size_t>(w);
    at += w;
  }
  return true;
}

// An unnamed file in $TMPDIR (else /tmp), gone when closed or when the process ends. (The C
// library's tmpfile() ignores TMPDIR: its files always went to /tmp, whatever the user said.)
int open_temp(std::string& dir) {
  dir = temp_dir();
  int fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
  if (fd >= 0) return fd;
  std::string path = dir + "/tasklens-XXXXXX";  // (a file system without O_TMPFILE)
  fd = ::mkostemp(path.data(), O_CLOEXEC);
  if (fd >= 0) ::unlink(path.c_str());
  return fd;
}

}  // namespace

std::string temp_dir() {
  const char* env = std::getenv("TMPDIR");
  return env && *env ? env : "/tmp";
}

uint64_t temp_dir_free_bytes() {
  struct statvfs fs;
  if (statvfs(temp_dir().c_str(), &fs) != 0) return 0;
  return uint64_t{fs.f_bavail} * fs.f_frsize;
}

TempBlocks::TempBlocks(std::string what, bool compress)
    : what_(std::move(what)), compress_(compress) {}

TempBlocks::~TempBlocks() {
  if (fd_ >= 0) ::close(fd_);
  ZSTD_freeCCtx(cctx_);
  ZSTD_freeDCtx(dctx_);
}

size_t TempBlocks::put(const void* data, size_t bytes) {
  if (fd_ < 0) {
    std::string dir;
    fd_ = open_temp(dir);
    if (fd_ < 0)
      throw EnvironmentError("cannot create a temporary file for " + what_ + " in " + dir + " (" +
                             std::string(std::strerror(errno)) +
                             "): set TMPDIR to a writable directory");
  }
  const char* out = static_cast<const char*>(data);
  size_t packed = bytes;
  if (compress_) {
    // zstd's fastest level: about half LZ4's bytes on these blocks (docs/benchmarks.md), and the
    // disk, not the time, is what a billion tasks run out of.
    // The frame's checksum: the codecs read back their varints unchecked, trusting that a
    // block comes back as written (the file is this process's, but a disk can fail).
    if (!cctx_) {
      cctx_ = ZSTD_createCCtx();
      if (!cctx_) throw std::bad_alloc();
      ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, 1);
      ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);
    }
    scratch_.resize(ZSTD_compressBound(bytes));
    packed = ZSTD_compress2(cctx_, scratch_.data(), scratch_.size(), data, bytes);
    out = scratch_.data();
    if (ZSTD_isError(packed))
      throw EnvironmentError("cannot compress a block of " + what_ + " of " +
                             std::to_string(bytes) + " bytes for its temporary file (" +
                             ZSTD_getErrorName(packed) + ")");
  }
  if (!write_all(fd_, out, packed, static_cast<off_t>(file_bytes_)))
    throw EnvironmentError("cannot write the temporary file of " + what_ + " (" +
                           std::string(std::strerror(errno)) + ", after " +
                           std::to_string(file_bytes_ >> 20) +
                           " MiB): free space in TMPDIR or point it elsewhere");
  blocks_.push_back({file_bytes_, static_cast<uint32_t>(packed), static_cast<uint32_t>(bytes)});
  file_bytes_ += packed;
  return blocks_.size() - 1;
}

void TempBlocks::get(size_t index, void* out) {
  const Block& block = blocks_[index];
  char* in = static_cast<char*>(out);
  if (compress_) {
    scratch_.resize(block.bytes);
    in = scratch_.data();
  }
  if (::pread(fd_, in, block.bytes, static_cast<off_t>(block.offset)) !=
      static_cast<ssize_t>(block.bytes))
    throw EnvironmentError("cannot read back the temporary file of " + what_ + " (" +
                           std::string(std::strerror(errno)) + ")");
  if (!compress_) return;
  if (!dctx_) dctx_ = ZSTD_createDCtx();
  if (!dctx_) throw std::bad_alloc();
  if (ZSTD_decompressDCtx(dctx_, out, block.raw, scratch_.data(), block.bytes) != block.raw)
    throw EnvironmentError("the temporary file of " + what_ + " was changed while it was read");
}

}  // namespace tasklens::analysis
