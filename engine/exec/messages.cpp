// The wire form of the typed jobs: JSON with a "kind" tag, every field defaulted when absent.
#include "engine/exec/messages.hpp"

#include <stdexcept>

namespace kj::exec {

NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(evaluate_job, device, problem, candidate, overrides, protocol,
                                                timing, strict, case_classes, timeout_s, limits,
                                                import_on_device, extensions_dir, more_jobs)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(build_job, problem, candidate, overrides, device)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(baseline_job, device, items, overrides, protocol, timing,
                                                compile_only)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(describe_job, problems, overrides, cost)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(read_parquet_job, path, rows)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(precompile_job, folder, variants)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE_WITH_DEFAULT(audit_job, device, items, protocol)

namespace {

// The kind names, in the variant's order.
constexpr const char* k_kinds[] = {"evaluate", "build",        "baseline", "describe",
                                   "probe",    "read_parquet", "audit",    "precompile"};
static_assert(std::size(k_kinds) == std::variant_size_v<job>);

template <typename T>
job parse_as(const nlohmann::json& message) {
  if constexpr (std::is_same_v<T, probe_job>) {
    return probe_job{};
  } else {
    return message.get<T>();
  }
}

template <std::size_t... I>
job parse_kind(std::size_t index, const nlohmann::json& message, std::index_sequence<I...>) {
  job result;
  ((index == I ? (result = parse_as<std::variant_alternative_t<I, job>>(message), 0) : 0), ...);
  return result;
}

} // namespace

std::string kind_of(const job& message) {
  return k_kinds[message.index()];
}

nlohmann::json to_json(const job& message) {
  nlohmann::json out = std::visit(
      [](const auto& m) -> nlohmann::json {
        if constexpr (std::is_same_v<std::decay_t<decltype(m)>, probe_job>)
          return nlohmann::json::object();
        else
          return m;
      },
      message);
  out["kind"] = kind_of(message);
  return out;
}

job job_from_json(const nlohmann::json& message) {
  if (!message.is_object() || !message.contains("kind") || !message["kind"].is_string())
    throw std::invalid_argument("job message: expected an object with a string field \"kind\"");
  const std::string kind = message["kind"];
  for (std::size_t i = 0; i < std::size(k_kinds); ++i)
    if (kind == k_kinds[i]) try {
        return parse_kind(i, message, std::make_index_sequence<std::variant_size_v<job>>{});
      } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument("job message of kind '" + kind + "': " + e.what());
      } catch (const std::invalid_argument& e) { // a field's own check (the device kind)
        throw std::invalid_argument("job message of kind '" + kind + "': " + e.what());
      }
  throw std::invalid_argument(
      "job message: unknown kind '" + kind +
      "' (expected evaluate, build, baseline, describe, probe, read_parquet, audit or precompile)");
}

} // namespace kj::exec
