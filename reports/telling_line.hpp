// The one line of an error that says what happened (the results table's note), and a comma list cut at an
// item boundary (the strict column).
#pragma once

#include <cstddef>
#include <string>

namespace kj::reports {

// The cause, never a separator: a compiler's first `file:line: error:` line anywhere in the text (the file
// without its folder), else, in
// the part before kj's `--- ... ---` separator (what the process printed follows it), a Python traceback's
// last line or the first line; when that part says nothing, the same rules on what follows. Cut to `width`
// characters with "..." (npos: never).
std::string telling_line(const std::string& text, std::size_t width = std::string::npos);

// "fail: a,b,c,d" in at most `width` characters: whole items only, the rest counted ("fail: a,b +2").
std::string cut_list(const std::string& text, std::size_t width);

} // namespace kj::reports
