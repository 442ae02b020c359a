// Python source files as bytes: the text a candidate or problem is judged as, whatever the file's encoding.
#pragma once

#include <string>
#include <string_view>

namespace kj::kb {

// The text to judge a file's bytes as, and what became of bytes that were not UTF-8.
struct source_text {
  std::string text;  // valid UTF-8
  bool exact = true; // the bytes were UTF-8: text is them unchanged
  // Not exact: how the bytes were read, e.g. "not UTF-8 (byte 0xE9 at line 3, column 7); decoded as latin-1
  // per its coding declaration" or "...; 2 bytes read as U+FFFD". Empty when exact.
  std::string note;
  int line = 0; // 1-based line of the first byte that is not UTF-8 (0 when exact)
};

// Whether `bytes` is well-formed UTF-8 (no overlongs, surrogates or code points above U+10FFFF).
bool is_utf8(std::string_view bytes);

// `bytes` with every byte that is not part of a well-formed UTF-8 sequence replaced by U+FFFD: for showing
// arbitrary bytes (model output, a binary file) in a table, an HTML page or JSON.
std::string utf8_replaced(std::string_view bytes);

// The text Python would run for these bytes (PEP 263): UTF-8 as is; otherwise the encoding named by a coding
// declaration on line 1 or 2 when it is latin-1 (iso-8859-1) or cp1252; otherwise UTF-8 with each invalid
// byte read as U+FFFD (Python itself would refuse the file; kj judges it and says so in `note`).
source_text python_source_text(std::string_view bytes);

} // namespace kj::kb
