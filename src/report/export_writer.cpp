#include "report/export_writer.hpp"

namespace tasklens::report {

void ExportWriter::flush() {
  if (!file_ || buf_.size() == 0) return;
  if (!failed_ && std::fwrite(buf_.data(), 1, buf_.size(), file_) != buf_.size()) failed_ = true;
  written_ += buf_.size();
  buf_.clear();
}

bool ExportWriter::finish() {
  if (!file_) return true;
  flush();
  if (std::fflush(file_) != 0) failed_ = true;
  return !failed_;
}

namespace {

// Length of the valid UTF-8 sequence starting at s[i] (1 to 4), or 0 when it is not one
// (overlong forms, surrogates and code points above U+10FFFF are invalid too).
size_t utf8_length(std::string_view s, size_t i) {
  const auto b = [&](size_t k) { return static_cast<unsigned char>(s[i + k]); };
  const unsigned char c = b(0);
  if (c < 0x80) return 1;
  size_t n;
  uint32_t cp;
  if ((c & 0xE0) == 0xC0) {
    n = 2;
    cp = c & 0x1F;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3;
    cp = c & 0x0F;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (i + n > s.size()) return 0;
  for (size_t k = 1; k < n; ++k) {
    if ((b(k) & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b(k) & 0x3F);
  }
  static constexpr uint32_t kMin[5] = {0, 0, 0x80, 0x800, 0x10000};
  if (cp < kMin[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return n;
}

}  // namespace

void append_json_string_body(fmt::memory_buffer& out, std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  auto unicode = [&](unsigned code) {
    const char e[6] = {'\\',
                       'u',
                       kHex[(code >> 12) & 15],
                       kHex[(code >> 8) & 15],
                       kHex[(code >> 4) & 15],
                       kHex[code & 15]};
    out.append(e, e + 6);
  };
  size_t i = 0;
  while (i < s.size()) {
    const unsigned char c = static_cast<unsigned char>(s[i]);
    if (c >= 0x80) {
      const size_t n = utf8_length(s, i);
      if (n == 0) {
        unicode(0xFFFD);
        ++i;
      } else if (n == 3 && c == 0xE2 && static_cast<unsigned char>(s[i + 1]) == 0x80 &&
                 (static_cast<unsigned char>(s[i + 2]) & 0xFE) == 0xA8) {
        unicode(0x2028 + (static_cast<unsigned char>(s[i + 2]) & 1));  // JS line separators
        i += 3;
      } else {
        out.append(s.data() + i, s.data() + i + n);
        i += n;
      }
      continue;
    }
    switch (c) {
      case '"':
        out.append(std::string_view("\\\""));
        break;
      case '\\':
        out.append(std::string_view("\\\\"));
        break;
      case '\n':
        out.append(std::string_view("\\n"));
        break;
      case '\r':
        out.append(std::string_view("\\r"));
        break;
      case '\t':
        out.append(std::string_view("\\t"));
        break;
      case '<':
      case '>':
      case '&':
        unicode(c);
        break;
      default:
        if (c < 0x20 || c == 0x7F)
          unicode(c);
        else
          out.push_back(static_cast<char>(c));
    }
    ++i;
  }
}

void append_json_string(fmt::memory_buffer& out, std::string_view s) {
  out.push_back('"');
  append_json_string_body(out, s);
  out.push_back('"');
}

std::string json_string(std::string_view s) {
  fmt::memory_buffer b;
  append_json_string(b, s);
  return std::string(b.data(), b.size());
}

void append_csv_field(fmt::memory_buffer& out, std::string_view s) {
  bool quote = false;
  for (char ch : s) {
    const unsigned char c = static_cast<unsigned char>(ch);
    if (c == ',' || c == '"' || c < 0x20 || c == 0x7F) {
      quote = true;
      break;
    }
  }
  if (!quote) {
    out.append(s);
    return;
  }
  out.push_back('"');
  for (char c : s) {
    if (c == '"') out.push_back('"');
    out.push_back(c);
  }
  out.push_back('"');
}

std::string csv_field_of(std::string_view s) {
  fmt::memory_buffer b;
  append_csv_field(b, s);
  return std::string(b.data(), b.size());
}

}  // namespace tasklens::report
