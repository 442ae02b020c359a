// Implements the content-addressed build cache: keys, folders, the per-key lock and status.json.
#include "engine/exec/build_cache.hpp"

#include "core/hashing.hpp"
#include "engine/exec/file_lock.hpp"
#include "engine/exec/process.hpp"

#include <algorithm>
#include <fmt/core.h>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

namespace fs = std::filesystem;
using nlohmann::json;

namespace kj::exec {
namespace {

constexpr std::size_t k_log_bytes = 64 * 1024;

// Every entry under `root` (folders first met, links by their target, files by their bytes), in order.
void hash_entries(const fs::path& root, std::string& manifest) {
  std::vector<fs::path> entries;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(root, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec))
    entries.push_back(it->path());
  std::sort(entries.begin(), entries.end());
  for (const auto& p : entries) {
    const auto status = fs::symlink_status(p, ec);
    const std::string name = fs::relative(p, root, ec).generic_string();
    if (fs::is_symlink(status)) {
      manifest += "L " + name + " -> " + fs::read_symlink(p, ec).string() + "\n";
    } else if (fs::is_directory(status)) {
      manifest += "D " + name + "\n";
    } else if (fs::is_regular_file(status)) {
      std::ifstream in(p, std::ios::binary);
      std::string bytes((std::istreambuf_iterator<char>(in)), {});
      manifest += "F " + name + " " + core::sha256_hex(bytes) + "\n";
    } else {
      manifest += "O " + name + "\n"; // a fifo or socket: named, so that its appearance changes the hash
    }
  }
}

} // namespace

std::string build_content(const fs::path& folder) {
  std::string manifest;
  if (fs::exists(folder / "ext")) hash_entries(folder / "ext", manifest);
  return core::sha256_hex(manifest);
}

std::string build_key(const build_key_fields& f) {
  const json fields{{"source", core::sha256_hex(f.source)},
                    {"overrides", f.overrides},
                    {"device", f.device},
                    {"python", f.python},
                    {"torch", f.torch},
                    {"torch_cuda", f.torch_cuda},
                    {"cuda_arch", f.cuda_arch},
                    {"nvcc", f.nvcc},
                    {"cxx", f.cxx},
                    {"flags", f.flags},
                    {"recipe", f.recipe}};
  return core::sha256_hex(fields.dump());
}

std::string status_name(const build_record& r) {
  switch (r.end) {
  case build_end::ok:
    return "ok";
  case build_end::deferred:
    return "deferred";
  case build_end::interrupted:
    return "interrupted";
  case build_end::failed:
    break;
  }
  return name_of(r.failure);
}

bool build_is_final(const build_record& r) {
  return r.end == build_end::ok || r.end == build_end::deferred ||
         (r.end == build_end::failed &&
          (r.failure == kj::verdict::compile_error || r.failure == kj::verdict::load_error));
}

namespace {

// status.json's status, parsed: a name kj never writes reads as nothing cached (the source is built again).
std::optional<build_record> record_named(const std::string& key, const std::string& status) {
  build_record r{.key = key};
  if (status == "ok") return r;
  if (status == "deferred") {
    r.end = build_end::deferred;
    return r;
  }
  const auto v = kj::parse_verdict(status);
  if (!v) return std::nullopt;
  r.end = build_end::failed;
  r.failure = *v;
  return r;
}

} // namespace

build_cache::build_cache(fs::path root) : m_root(std::move(root)) {}

fs::path build_cache::dir(const std::string& key) const {
  if (key.size() < 16 || key.find_first_not_of("0123456789abcdef") != std::string::npos)
    throw std::invalid_argument("build key '" + key + "' is not a lower-case hex hash");
  return m_root / key.substr(0, 2) / key;
}

std::optional<build_record> build_cache::lookup(const std::string& key) const {
  std::ifstream in(dir(key) / "status.json");
  if (!in) return std::nullopt;
  try {
    const json j = json::parse(in);
    auto named = record_named(key, j.at("status").get<std::string>());
    if (!named || !build_is_final(*named)) return std::nullopt;
    build_record r = *named;
    r.log = j.value("log", "");
    r.seconds = j.value("seconds", 0.0);
    r.created_at = j.value("created_at", "");
    r.content = j.value("content", "");
    // A compiled build is trusted only while its files are what kj hashed after building it.
    if (r.end == build_end::ok && (r.content.empty() || r.content != build_content(dir(key))))
      return std::nullopt;
    r.cached = true;
    return r;
  } catch (const json::exception&) {
    return std::nullopt; // a torn or foreign file: build again
  }
}

void build_cache::store(const build_record& r) const {
  if (!build_is_final(r)) return;
  const fs::path folder = dir(r.key);
  fs::create_directories(folder);
  const fs::path tmp = folder / fmt::format("status.json.{}", ::getpid());
  {
    std::ofstream out(tmp);
    out << json{{"status", status_name(r)},
                {"log", r.log},
                {"seconds", r.seconds},
                {"created_at", r.created_at},
                {"content", r.content}}
               .dump(1);
  }
  fs::rename(tmp, folder / "status.json"); // readers see the old file or the new one, never half of it
}

void build_cache::forget(const std::string& key) const {
  const fs::path folder = dir(key);
  if (!fs::exists(folder)) return;
  try {
    const file_lock lock(folder / "lock");
    std::error_code ec;
    fs::remove(folder / "status.json", ec);
  } catch (const lock_interrupted&) { // Ctrl-C: the entry stays; a later run checks it again
  }
}

build_record build_cache::build(const job_runner& runner, const std::string& key, const job& message,
                                launch_spec launch) const {
  const fs::path folder = dir(key);
  fs::create_directories(folder);
  std::optional<file_lock> lock;
  try {
    lock.emplace(folder / "lock");
  } catch (const lock_interrupted& e) { // Ctrl-C while another kj process builds the same source
    build_record cut{.key = key,
                     .end = build_end::interrupted,
                     .log = std::string(e.what()) + "\n",
                     .created_at = core::now_iso8601()};
    return cut;
  }
  if (auto cached = lookup(key)) return *cached;
  const bool stale = fs::exists(folder / "status.json"); // a final status whose files changed since
  // No final status: an earlier build of this key was cut short (Ctrl-C, kj killed). What it left goes, above
  // all torch's lock file (FileBaton), on which this build would otherwise wait until its timeout.
  std::error_code ec;
  fs::remove_all(folder / "ext", ec);
  launch.build_dir = folder;
  launch.log_tail_bytes = k_log_bytes;
  std::string tail;
  const worker_outcome outcome = runner.run(message, launch, &tail);
  // Its own seconds: not those it stood still while a device slot timed.
  build_record r{
      .key = key, .seconds = outcome.wall_s - outcome.stood_still_s, .created_at = core::now_iso8601()};
  if (const json* built = find_event(outcome, "built"); built && built->contains("deferred")) {
    r.end = build_end::deferred; // its import needs the GPU: the runner imports (and compiles) it there
    r.log = built->value("deferred", "") + "\n";
  } else if (!built) {
    const json* verdict = find_event(outcome, "verdict");
    // the build worker's verdict event names it (worker JSON: an unknown name is a crash)
    r.end = build_end::failed;
    r.failure = verdict && !outcome.timed_out
                    ? kj::parse_verdict(verdict->value("verdict", "crashed")).value_or(kj::verdict::crashed)
                    : (outcome.timed_out ? kj::verdict::timeout : kj::verdict::crashed);
    r.log = verdict ? verdict->value("error", "") + "\n" : "";
    if (!verdict) r.log = "build worker " + describe_exit(outcome) + "\n";
  }
  r.log += "--- worker output ---\n" + tail;
  if (stale)
    r.log = "kj built this source again: the cached build's files no longer matched what kj recorded "
            "after building it\n" +
            r.log;
  // Hashed now that the job has ended and the folder is kj's again (job_runner::run took it back).
  if (r.end == build_end::ok) r.content = build_content(folder);
  if (outcome.interrupted) r.end = build_end::interrupted; // says nothing of the source: never cached
  store(r);
  return r;
}

} // namespace kj::exec
