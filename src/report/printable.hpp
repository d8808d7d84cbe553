// Names from the recorded program (its path, user region names, source file and function names
// from its debug information) go into tables, CSV files and terminals as text: a control
// character could move the cursor, recolour or clear the user's terminal, a newline would break
// a CSV row, and bytes that are not UTF-8 would garble the line. JSON escapes them itself.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace tasklens::report {

// `text` with control characters and bytes that are not part of valid UTF-8 written as \xNN
// (a backslash itself as \\ only when something was escaped would be ambiguous, so it is left
// alone: names with real backslashes are rare and stay readable). Valid UTF-8 stays as it is.
inline std::string printable(std::string_view text) {
  auto hex = [](std::string& out, uint8_t b) {
    static const char digits[] = "0123456789abcdef";
    out += "\\x";
    out += digits[b >> 4];
    out += digits[b & 15];
  };
  // Fast path: plain printable ASCII.
  bool plain = true;
  for (char c : text) {
    const auto b = static_cast<uint8_t>(c);
    if (b < 0x20 || b >= 0x7f) {
      plain = false;
      break;
    }
  }
  if (plain) return std::string(text);
  std::string out;
  out.reserve(text.size() + 8);
  for (size_t i = 0; i < text.size();) {
    const auto b = static_cast<uint8_t>(text[i]);
    if (b >= 0x20 && b < 0x7f) {
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    // The length of a UTF-8 sequence starting here (0: not a valid lead byte).
    size_t n = b >= 0xc2 && b <= 0xdf   ? 2
               : b >= 0xe0 && b <= 0xef ? 3
               : b >= 0xf0 && b <= 0xf4 ? 4
                                        : 0;
    bool valid = n > 0 && i + n <= text.size();
    for (size_t k = 1; valid && k < n; ++k)
      valid = (static_cast<uint8_t>(text[i + k]) & 0xc0) == 0x80;
    if (valid && n == 3) {  // no overlong forms, no UTF-16 surrogates
      const auto b1 = static_cast<uint8_t>(text[i + 1]);
      valid = !(b == 0xe0 && b1 < 0xa0) && !(b == 0xed && b1 >= 0xa0);
    } else if (valid && n == 4) {  // no overlong forms, nothing above U+10FFFF
      const auto b1 = static_cast<uint8_t>(text[i + 1]);
      valid = !(b == 0xf0 && b1 < 0x90) && !(b == 0xf4 && b1 >= 0x90);
    }
    if (valid) {
      out.append(text.substr(i, n));
      i += n;
    } else {
      hex(out, b);  // a control character (C0, DEL) or a byte of no valid sequence
      ++i;
    }
  }
  return out;
}

}  // namespace tasklens::report
