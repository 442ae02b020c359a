// CUDA-L1's release files, imported as a folder kj runs (cuda_l1.hpp).
#include "adapters/published/cuda_l1.hpp"

#include "core/hashing.hpp"
#include "kernelbench/problems.hpp"

#include <fmt/core.h>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::adapters {
namespace {

// The release's score fields and the names kj gives the claims (each a ratio: baseline time / kernel time).
const std::vector<std::pair<std::string, std::string>>& claim_fields() {
  static const std::vector<std::pair<std::string, std::string>> fields{
      {"score_default", "eager"},
      {"score_torch_compile_default", "torch_compile"},
      {"score_torch_compile_reduce_overhead", "torch_compile_reduce_overhead"},
      {"score_cuda_graph", "cuda_graph"},
      {"score_cudnn", "cudnn"}};
  return fields;
}

[[noreturn]] void bad(const fs::path& file, int line, const std::string& what) {
  throw import_error(fmt::format("{}:{}: {}", file.string(), line, what));
}

int integer_field(const json& row, const char* key, int low, int high, const fs::path& file, int line) {
  const auto it = row.find(key);
  if (it == row.end()) bad(file, line, fmt::format("field '{}' is missing (expected an integer)", key));
  if (!it->is_number_integer() || it->get<long long>() < low || it->get<long long>() > high)
    bad(file, line,
        fmt::format("field '{}' is {}, expected an integer from {} to {}", key, it->dump(), low, high));
  return it->get<int>();
}

// A code field: the text; none when null, empty or the text "None" (the release's word for "no kernel").
std::optional<std::string> code_field(const json& row, const char* key, const fs::path& file, int line) {
  const auto it = row.find(key);
  if (it == row.end() || it->is_null()) return std::nullopt;
  if (!it->is_string())
    bad(file, line,
        fmt::format("field '{}' is {}, expected Python source text or null", key,
                    std::string(it->type_name())));
  const std::string text = it->get<std::string>();
  if (text.empty() || text == "None") return std::nullopt;
  return text;
}

published_row parse_row(const std::string& text, const fs::path& file, int line) {
  const json row = json::parse(text, nullptr, false);
  if (row.is_discarded() || !row.is_object())
    bad(file, line, "not a JSON object (one object per line expected)");
  published_row r;
  r.line = line;
  r.level = integer_field(row, "level_id", 1, 4, file, line);
  r.task = integer_field(row, "task_id", 1, 100000, file, line);
  const auto ref = code_field(row, "ref_code", file, line);
  if (!ref) bad(file, line, "field 'ref_code' is missing or empty (expected the reference's Python source)");
  r.ref_code = *ref;
  r.kernel = code_field(row, "custom_code", file, line);
  for (const char* variant : {"cuda_graph_code", "cudnn_code"})
    if (auto code = code_field(row, variant, file, line)) r.variants[variant] = std::move(*code);
  for (const auto& [field, name] : claim_fields()) {
    const auto it = row.find(field);
    if (it == row.end() || it->is_null()) continue;
    if (!it->is_number() || !(it->get<double>() > 0))
      bad(file, line,
          fmt::format("field '{}' is {}, expected a positive number (a speedup) or null", field, it->dump()));
    r.claims[name] = it->get<double>();
  }
  return r;
}

// Text compared as a file's content: line ends and trailing spaces and blank lines do not count.
std::string normalized(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    while (!line.empty() && (line.back() == ' ' || line.back() == '\t' || line.back() == '\r'))
      line.pop_back();
    out += line + "\n";
  }
  while (out.size() >= 2 && out.ends_with("\n\n"))
    out.pop_back();
  return out;
}

void write_text(const fs::path& path, const std::string& text) {
  fs::create_directories(path.parent_path());
  std::ofstream out(path, std::ios::binary);
  out << text;
  if (!out) throw import_error("cannot write " + path.string());
}

std::string read_release(const fs::path& path) {
  if (std::error_code ec; fs::is_directory(path, ec))
    throw import_error(path.string() + ": is a folder (expected a release file of CUDA-L1: "
                                       "optimized_cuda_code/<gpu>.json)");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw import_error(fmt::format("{}: cannot be read (expected a release file of CUDA-L1: "
                                   "optimized_cuda_code/<gpu>.json)",
                                   path.string()));
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

} // namespace

std::vector<published_row> read_cuda_l1(const fs::path& file) {
  std::istringstream in(read_release(file));
  std::vector<published_row> rows;
  std::map<std::pair<int, int>, int> seen; // (level, task) -> line
  std::string text;
  for (int line = 1; std::getline(in, text); ++line) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) continue;
    published_row row = parse_row(text, file, line);
    const auto [it, fresh] = seen.emplace(std::pair{row.level, row.task}, line);
    if (!fresh)
      bad(file, line,
          fmt::format("level {} task {} is given again (first on line {})", row.level, row.task, it->second));
    rows.push_back(std::move(row));
  }
  if (rows.empty()) throw import_error(file.string() + ": no rows (expected one JSON object per line)");
  return rows;
}

// The folder, once the release is read and --out checked.
static json write_import(const import_options& options, const std::vector<published_row>& rows) {
  std::map<std::pair<int, int>, kb::problem> kernelbench;
  std::string kb_commit;
  if (!options.kernelbench.empty()) {
    kb::source_options source;
    source.kernelbench_dir = options.kernelbench;
    for (auto& p : kb::load_problems(source))
      kernelbench.emplace(std::pair{p.level, p.number}, std::move(p));
    kb_commit = kb::git_commit_of(options.kernelbench);
  }
  json out_rows = json::array();
  std::map<std::string, int> counts{{"rows", 0}, {"kernels", 0}, {"missing", 0}};
  for (const published_row& row : rows) {
    std::string name = fmt::format("Task_{}", row.task), reference = "no KernelBench given";
    if (!options.kernelbench.empty()) {
      const auto it = kernelbench.find({row.level, row.task});
      reference = it == kernelbench.end()                                     ? "not in KernelBench"
                  : normalized(it->second.source) == normalized(row.ref_code) ? "identical"
                                                                              : "differs";
      if (it != kernelbench.end()) name = it->second.name;
    }
    const std::string problem_file = fmt::format("KernelBench/level{}/{}_{}.py", row.level, row.task, name);
    write_text(options.out / problem_file, row.ref_code);
    const std::string kernel_file =
        fmt::format("candidates/level_{}_problem_{}_sample_0_kernel.py", row.level, row.task);
    if (row.kernel) write_text(options.out / kernel_file, *row.kernel);
    json variants = json::object();
    for (const auto& [variant, code] : row.variants) {
      const std::string file =
          fmt::format("variants/{}/level_{}_problem_{}.py", variant, row.level, row.task);
      write_text(options.out / file, code);
      variants[variant] = file;
    }
    ++counts["rows"];
    ++counts[row.kernel ? "kernels" : "missing"];
    ++counts[reference];
    out_rows.push_back({{"line", row.line},
                        {"level", row.level},
                        {"problem_id", row.task},
                        {"name", name},
                        {"problem_file", problem_file},
                        {"reference", reference},
                        {"reference_sha256", core::sha256_hex(row.ref_code)},
                        {"kernel_sha256", row.kernel ? json(core::sha256_hex(*row.kernel)) : json(nullptr)},
                        {"kernel", row.kernel ? "written" : "missing"},
                        {"candidate_file", row.kernel ? json(kernel_file) : json(nullptr)},
                        {"variants", variants},
                        {"claims", row.claims}});
  }
  const std::string release_text = read_release(options.release);
  json claims{{"format", "kj-claims-1"},
              {"source", "CUDA-L1"},
              {"release", fs::absolute(options.release).string()},
              {"release_sha256", core::sha256_hex(release_text)},
              {"gpu", options.gpu.empty() ? options.release.stem().string() : options.gpu},
              {"kernelbench",
               options.kernelbench.empty()
                   ? json(nullptr)
                   : json{{"path", fs::absolute(options.kernelbench).string()}, {"commit", kb_commit}}},
              {"counts", counts},
              {"rows", out_rows}};
  write_text(options.out / "claims.json", claims.dump(2) + "\n");
  return claims;
}

json import_cuda_l1(const import_options& options) {
  const std::vector<published_row> rows = read_cuda_l1(options.release);
  std::error_code ec;
  if (fs::exists(options.out, ec) && !fs::is_directory(options.out, ec))
    throw import_error("--out " + options.out.string() + ": is a file; kj import writes a new folder");
  if (fs::exists(options.out, ec) && !fs::is_empty(options.out, ec))
    throw import_error(
        "--out " + options.out.string() +
        ": exists and is not empty (kj import writes a new folder and never replaces files: name "
        "another --out)");
  try {
    return write_import(options, rows);
  } catch (const fs::filesystem_error& e) {
    throw import_error(
        fmt::format("--out {}: cannot be written ({})", options.out.string(), e.code().message()));
  }
}

} // namespace kj::adapters
