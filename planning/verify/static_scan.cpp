// Implements the static scan with a table of (kind, pattern) rules.
#include "planning/verify/static_scan.hpp"

#include <array>
#include <regex>
#include <sstream>

namespace kj::verify {
namespace {

struct rule {
  const char* kind;
  const char* pattern;
};

// Patterns are ECMAScript regexes matched per line.
const std::array<rule, 9> rules{{
    {"torch_fallback",
     R"((torch\.nn\.functional|\bF\.[a-z_]+\(|torch\.(matmul|mm|bmm|conv\w*|softmax|einsum)\(|)"
     R"(at::(matmul|mm|bmm|conv\w*|linear)|torch::(matmul|mm|conv\w*)|cublas|cudnn))"},
    {"try_except", R"(^\s*(try\s*:|except\b))"},
    {"threads", R"(\b(threading|Thread\(|concurrent\.futures|multiprocessing|std::thread|pthread_create)\b)"},
    {"streams", R"((torch\.cuda\.Stream|cudaStreamCreate|getStreamFromPool|torch\.cuda\.stream\())"},
    {"timer_patching",
     R"((torch\.cuda\.Event\s*=|torch\.cuda\.synchronize\s*=|time\.(perf_counter|time)\s*=|)"
     R"(setattr\(\s*(torch|time)\b))"},
    {"precision",
     R"((\.half\(\)|float16|bfloat16|__half|__nv_bfloat16|allow_tf32|autocast|set_float32_matmul_precision))"},
    {"reference_access", R"((gc\.get_objects|sys\.modules|kj_problem|inspect\.stack|__main__))"},
    {"caching", R"((lru_cache|functools\.cache|data_ptr\(\)\s*(in|==)|_cache\s*=\s*\{))"},
    {"process_exit", R"((os\._exit|sys\.exit|os\.kill|signal\.))"},
}};

} // namespace

std::vector<finding> scan_candidate(const std::string& source) {
  static const auto compiled = [] {
    std::vector<std::pair<std::string, std::regex>> out;
    for (const auto& r : rules)
      out.emplace_back(r.kind, std::regex(r.pattern));
    return out;
  }();
  std::vector<finding> findings;
  std::istringstream in(source);
  std::string line;
  for (int number = 1; std::getline(in, line); ++number)
    for (const auto& [kind, pattern] : compiled)
      if (std::regex_search(line, pattern)) {
        const auto start = line.find_first_not_of(" \t");
        findings.push_back({kind, number, start == std::string::npos ? "" : line.substr(start, 160)});
      }
  return findings;
}

} // namespace kj::verify
