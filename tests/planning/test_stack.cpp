// The stack fingerprint: its id hashes what can change a verdict or a timing, and nothing else.
#include "planning/orchestrator/run.hpp"
#include "tests/support/catch_compat.hpp"

using kj::orchestrator::stack_from;
using nlohmann::json;

namespace {

json gpu_env() {
  return {{"python", "3.12.3"},
          {"torch", "2.11.0+cu130"},
          {"torch_git", "abc"},
          {"torch_cuda", "13.0"},
          {"cudnn", 91400},
          {"triton", "3.5.0"},
          {"cuda_available", true},
          {"device_count", 1},
          {"device_name", "NVIDIA H100 80GB HBM3"},
          {"gpu_uuid", "GPU-1234"},
          {"sm_count", 132},
          {"compute_capability", "9.0"},
          {"l2_bytes", 52428800},
          {"cuda_driver", 13000},
          {"nvidia_driver", "580.159.04"},
          {"backend_flags", {{"backends.cuda.matmul.allow_tf32", false}}},
          {"env", json::object()}};
}

} // namespace

TEST_CASE("the stack id changes with what matters and only with that") {
  const auto base = stack_from(gpu_env(), kj::device_kind::cuda);
  CHECK(base.stack_hash.size() == 16);
  CHECK(base.device_name == "NVIDIA H100 80GB HBM3");
  CHECK(json::parse(base.fingerprint_json)["gpu_uuid"] == "GPU-1234");
  CHECK(json::parse(base.fingerprint_json).contains("kj_version"));
  CHECK(stack_from(gpu_env(), kj::device_kind::cuda).stack_hash == base.stack_hash);

  for (const auto& [key, value] : std::vector<std::pair<std::string, json>>{
           {"torch", "2.12.0"},
           {"gpu_uuid", "GPU-5678"},
           {"nvidia_driver", "580.200.01"},
           {"cudnn", 91500},
           {"triton", "3.6.0"},
           {"backend_flags", {{"backends.cuda.matmul.allow_tf32", true}}},
           {"env", {{"TORCHINDUCTOR_MAX_AUTOTUNE", "1"}}}}) {
    json env = gpu_env();
    env[key] = value;
    INFO(key);
    CHECK(stack_from(env, kj::device_kind::cuda).stack_hash != base.stack_hash);
  }
  json more_devices = gpu_env();
  more_devices["device_count"] = 8; // how many GPUs are visible is not part of the stack
  CHECK(stack_from(more_devices, kj::device_kind::cuda).stack_hash == base.stack_hash);
  CHECK(stack_from(gpu_env(), kj::device_kind::cpu).stack_hash != base.stack_hash);
}

TEST_CASE("a CPU stack ignores the GPU's fields") {
  json a = gpu_env(), b = gpu_env();
  b["gpu_uuid"] = "GPU-other";
  b["nvidia_driver"] = "1.0";
  CHECK(stack_from(a, kj::device_kind::cpu).stack_hash == stack_from(b, kj::device_kind::cpu).stack_hash);
  a["cpu"] = "x86_64";
  CHECK(stack_from(a, kj::device_kind::cpu).device_name == "cpu: x86_64");
}
