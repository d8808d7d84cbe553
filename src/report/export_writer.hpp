// Streaming output of `tasklens export`: the exporters append text to a buffer that goes to a
// file whenever it holds a few MB, so that a trace of millions of strands is written without
// holding its whole text (or a JSON tree of it) in memory. Plus the escaping every exporter
// shares.
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>

namespace tasklens::report {

class ExportWriter {
 public:
  // Streams to `file` (not owned), which must stay open until finish().
  explicit ExportWriter(std::FILE* file) : file_(file) {}
  // Collects everything in memory: take() returns it (tests, small outputs).
  ExportWriter() = default;
  ExportWriter(const ExportWriter&) = delete;
  ExportWriter& operator=(const ExportWriter&) = delete;

  fmt::memory_buffer& buf() { return buf_; }
  void put(std::string_view s) { buf_.append(s.data(), s.data() + s.size()); }
  void put(char c) { buf_.push_back(c); }
  // An integer in decimal: the hot path of every exporter (no format string to parse).
  void num(uint64_t v) {
    const fmt::format_int f(v);
    buf_.append(f.data(), f.data() + f.size());
  }
  template <typename... Args>
  void print(fmt::format_string<Args...> f, Args&&... args) {
    fmt::format_to(fmt::appender(buf_), f, std::forward<Args>(args)...);
  }
  // Hands the buffer to the file once it is large; call between records.
  void maybe_flush() {
    if (file_ && buf_.size() >= kFlushBytes) flush();
  }
  // Writes what is left and flushes the file; false when a write failed (full disk, closed
  // pipe), at any point.
  bool finish();
  uint64_t bytes() const { return written_ + buf_.size(); }
  std::string take() { return std::string(buf_.data(), buf_.size()); }

 private:
  static constexpr size_t kFlushBytes = size_t{4} << 20;
  void flush();
  std::FILE* file_ = nullptr;
  fmt::memory_buffer buf_;
  uint64_t written_ = 0;
  bool failed_ = false;
};

// `s` as the inside of a JSON string: quotes, backslashes and control characters escaped, and
// also <, >, & and U+2028/U+2029 (\u escapes), so that the output can be embedded in an HTML
// <script> block or evaluated as JavaScript as it is. Bytes that are not valid UTF-8 (file names
// are bytes) become U+FFFD: JSON must be UTF-8.
void append_json_string_body(fmt::memory_buffer& out, std::string_view s);
// The same, with the quotes around it.
void append_json_string(fmt::memory_buffer& out, std::string_view s);
std::string json_string(std::string_view s);

// `s` as a CSV field (RFC 4180): quoted when it holds a comma, a quote, a CR or LF or any other
// control character, with inner quotes doubled. The text itself is kept as it is (no rewriting
// of fields that a spreadsheet would take for a formula: the consumers are programs).
void append_csv_field(fmt::memory_buffer& out, std::string_view s);
std::string csv_field_of(std::string_view s);

}  // namespace tasklens::report
