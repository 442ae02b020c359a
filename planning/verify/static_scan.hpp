// Static findings: patterns in a candidate's source that a reader should see next to its verdict.
#pragma once

#include <string>
#include <vector>

namespace kj::verify {

struct finding {
  std::string kind; // see docs/methodology.md for the list and what each means
  int line = 0;     // 1-based
  std::string excerpt;
};

// Scans the source line by line (comments included: a hack in a comment is still worth a look). A finding is
// not a verdict; reports show it next to the verdicts.
std::vector<finding> scan_candidate(const std::string& source);

} // namespace kj::verify
