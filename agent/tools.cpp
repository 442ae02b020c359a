// Implements the toolbox: argument checks, the file tools, and the engine tools with their in-loop results.
#include "agent/tools.hpp"

#include "agent/feedback.hpp"
#include "core/hashing.hpp"
#include "db/store.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <stdexcept>

namespace kj::agent {
namespace {

using nlohmann::json;

std::string string_argument(const json& arguments, const std::string& tool, const char* name) {
  if (!arguments.contains(name) || !arguments[name].is_string())
    throw std::invalid_argument(fmt::format("{} needs a string argument `{}`", tool, name));
  return arguments[name].get<std::string>();
}

std::size_t count_lines(const std::string& text) {
  return static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) +
         (text.empty() || text.ends_with('\n') ? 0 : 1);
}

tool_outcome error(std::string text) {
  return {std::move(text), true};
}

} // namespace

std::string tool_outcome::summary() const {
  return text.substr(0, text.find('\n'));
}

toolbox::toolbox(const workspace& ws, judge& engine, const kb::problem& problem, evaluation_sink sink,
                 profile_context profiling)
    : m_workspace(ws), m_judge(engine), m_problem(problem), m_sink(std::move(sink)),
      m_profiling(std::move(profiling)) {}

tool_outcome toolbox::run(const std::string& tool, const json& arguments, int turn) {
  if (!arguments.is_object())
    return error(
        fmt::format("{}: the arguments are not a JSON object: {}", tool, arguments.dump().substr(0, 300)));
  try {
    if (tool == "list_files") return list_files();
    if (tool == "read_file") {
      const std::string path = string_argument(arguments, tool, "path");
      const std::string text = m_workspace.read(path);
      return {
          fmt::format("read_file {}: {} bytes, {} lines\n{}", path, text.size(), count_lines(text), text)};
    }
    if (tool == "write_file") {
      const std::string path = string_argument(arguments, tool, "path");
      const std::string content = string_argument(arguments, tool, "content");
      const std::size_t bytes = m_workspace.write(path, content);
      return {fmt::format("write_file {}: wrote {} bytes, {} lines\n", path, bytes, count_lines(content))};
    }
    if (tool == "edit_file") {
      const std::string path = string_argument(arguments, tool, "path");
      const std::string text = m_workspace.edit(path, string_argument(arguments, tool, "old"),
                                                string_argument(arguments, tool, "new"));
      return {fmt::format("edit_file {}: replaced 1 occurrence; the file has {} lines now\n", path,
                          count_lines(text))};
    }
    if (tool == "compile") return compile();
    if (tool == "verify") return verify(turn);
    if (tool == "profile") return profile(turn);
    if (tool == "submit") {
      tool_outcome out;
      out.submitted = true;
      const auto current = current_candidate();
      if (!current) {
        out.text = "submit: ended without a model_new.py (no candidate)\n";
        return out;
      }
      out.candidate_id = current->second;
      const std::string hash = core::sha256_hex(current->first);
      const bool checked = find("verify", hash) || find("profile", hash);
      out.text = fmt::format("submit {}: ended{}. kj keeps the best strictly correct version you profiled "
                             "and re-measures it.\n",
                             hash.substr(0, 8), checked ? "" : " (this version was never verified)");
      return out;
    }
    std::string names;
    for (const auto& spec : tool_specs())
      names += (names.empty() ? "" : ", ") + spec.name;
    return error(fmt::format("{}: no such tool; the tools are {}", tool, names));
  } catch (const refused& e) {
    return error(fmt::format("{}: refused: {}", tool, e.what()));
  } catch (const std::invalid_argument& e) {
    return error(fmt::format("{}: {}", tool, e.what()));
  }
}

tool_outcome toolbox::list_files() const {
  std::string text;
  const auto files = m_workspace.list();
  for (const auto& f : files)
    text += fmt::format("  {:<40} {:>8} bytes{}\n", f.path, f.bytes,
                        f.read_only ? "  (read-only reference)" : "");
  return {fmt::format("list_files: {} files\n{}", files.size(), text)};
}

std::optional<std::pair<std::string, std::int64_t>> toolbox::current_candidate() {
  auto source = m_workspace.candidate_source();
  if (!source) return std::nullopt;
  const std::string hash = core::sha256_hex(*source);
  auto it = m_candidate_ids.find(hash);
  if (it == m_candidate_ids.end()) it = m_candidate_ids.emplace(hash, m_sink.candidate(*source)).first;
  return std::make_pair(std::move(*source), it->second);
}

const judged* toolbox::find(const std::string& kind, const std::string& source_hash) const {
  for (auto it = m_history.rbegin(); it != m_history.rend(); ++it)
    if (it->kind == kind && it->source_hash == source_hash) return &*it;
  return nullptr;
}

const judged& toolbox::remember(std::string kind, int turn, const std::string& source,
                                results::evaluation_result r) {
  judged j{std::move(kind),
           turn,
           core::sha256_hex(source),
           source,
           m_candidate_ids.at(core::sha256_hex(source)),
           0,
           {}};
  r.record.candidate_id = j.candidate_id;
  r.record.purpose = "agent_loop"; // one of any number of judgements of this version in the run
  j.evaluation_id = m_sink.evaluation(r);
  j.record = std::move(r.record);
  m_history.push_back(std::move(j));
  return m_history.back();
}

tool_outcome toolbox::compile() {
  const auto current = current_candidate();
  if (!current) return error("compile: there is no model_new.py yet: write it first");
  const adapters::candidate c{0, "agent", 0, m_workspace.root() / "model_new.py", current->first, ""};
  const auto build = m_judge.build(m_problem, c);
  tool_outcome out{compile_text(build, short_hash(current->first)),
                   build && build->end != exec::build_end::ok};
  out.candidate_id = current->second;
  return out;
}

tool_outcome toolbox::verify(int turn) {
  const auto current = current_candidate();
  if (!current) return error("verify: there is no model_new.py yet: write it first");
  const std::string hash = core::sha256_hex(current->first);
  const judged* done = find("verify", hash);
  if (!done) done = find("profile", hash); // a profile judged correctness too
  std::string note;
  if (done) {
    note = fmt::format("(the workspace is unchanged since turn {}: the same result)\n", done->turn);
  } else {
    const adapters::candidate c{0, "agent", 0, m_workspace.root() / "model_new.py", current->first, ""};
    done = &remember("verify", turn, current->first, m_judge.verify(m_problem, c));
  }
  tool_outcome out{verify_text(done->record, hash.substr(0, 8)) + note}; // a failing verdict is no tool error
  out.candidate_id = done->candidate_id;
  out.evaluation_id = done->evaluation_id;
  return out;
}

tool_outcome toolbox::profile(int turn) {
  const auto current = current_candidate();
  profile_facts facts;
  facts.device = m_judge.device();
  facts.baselines = m_profiling.baselines;
  facts.missing_modes = m_profiling.missing_modes;
  facts.hardware = m_profiling.hardware;
  facts.cost = m_judge.cost(m_problem);
  tool_outcome out;
  if (!current) { // the reference alone: the problem's own Model as the candidate
    const adapters::candidate identity = adapters::identity_candidates({m_problem}).front();
    results::evaluation_result r = m_judge.profile(m_problem, identity, false);
    facts.record = &r.record;
    facts.ncu = m_judge.nsight(m_problem, identity);
    out.text = profile_text(facts);
    return out;
  }
  const adapters::candidate c{0, "agent", 0, m_workspace.root() / "model_new.py", current->first, ""};
  const judged& done = remember("profile", turn, current->first, m_judge.profile(m_problem, c));
  facts.record = &done.record;
  facts.hash = done.source_hash.substr(0, 8);
  if (done.record.verdict == verdict::correct || done.record.verdict == verdict::incorrect)
    facts.ncu = m_judge.nsight(m_problem, c);
  out.text = profile_text(facts);
  out.candidate_id = done.candidate_id;
  out.evaluation_id = done.evaluation_id;
  return out;
}

} // namespace kj::agent
