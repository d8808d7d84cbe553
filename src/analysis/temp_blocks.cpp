// Compressed blocks in a temporary file (temp_blocks.hpp).
#include "analysis/temp_blocks.hpp"

#include <lz4.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "errors.hpp"

namespace tasklens::analysis {

TempBlocks::TempBlocks(std::string what, bool compress)
    : what_(std::move(what)), compress_(compress) {}

TempBlocks::~TempBlocks() {
  if (file_) std::fclose(file_);
}

size_t TempBlocks::put(const void* data, size_t bytes) {
  if (!file_) {
    file_ = std::tmpfile();  // removed when closed, or when the process ends
    if (!file_)
      throw EnvironmentError("cannot create a temporary file for " + what_ + " (" +
                             std::string(std::strerror(errno)) +
                             "): set TMPDIR to a writable directory");
  }
  const int raw = static_cast<int>(bytes);
  const char* out = static_cast<const char*>(data);
  int packed = raw;
  if (compress_) {
    scratch_.resize(static_cast<size_t>(LZ4_compressBound(raw)));
    packed = LZ4_compress_default(out, scratch_.data(), raw, static_cast<int>(scratch_.size()));
    out = scratch_.data();
  }
  if (packed <= 0 || ::pwrite(fileno(file_), out, static_cast<size_t>(packed),
                              static_cast<off_t>(file_bytes_)) != packed)
    throw EnvironmentError("cannot write the temporary file of " + what_ + " (" +
                           std::string(std::strerror(errno)) +
                           "): free space in TMPDIR or point it elsewhere");
  blocks_.push_back({file_bytes_, static_cast<uint32_t>(packed), static_cast<uint32_t>(raw)});
  file_bytes_ += static_cast<uint64_t>(packed);
  return blocks_.size() - 1;
}

void TempBlocks::get(size_t index, void* out) {
  const Block& block = blocks_[index];
  char* in = static_cast<char*>(out);
  if (compress_) {
    scratch_.resize(block.bytes);
    in = scratch_.data();
  }
  if (::pread(fileno(file_), in, block.bytes, static_cast<off_t>(block.offset)) !=
      static_cast<ssize_t>(block.bytes))
    throw EnvironmentError("cannot read back the temporary file of " + what_ + " (" +
                           std::string(std::strerror(errno)) + ")");
  if (!compress_) return;
  if (LZ4_decompress_safe(scratch_.data(), static_cast<char*>(out), static_cast<int>(block.bytes),
                          static_cast<int>(block.raw)) != static_cast<int>(block.raw))
    throw EnvironmentError("the temporary file of " + what_ + " was changed while it was read");
}

}  // namespace tasklens::analysis
