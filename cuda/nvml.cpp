// Implements NVML snapshots when the plugin is built with nvml.h; otherwise reports them unavailable.
#include "cuda/nvml.hpp"

#include <fmt/format.h>
#include <set>
#include <unistd.h>
#include <vector>

#if KJ_HAVE_NVML
#include <nvml.h>
#endif

namespace kj::cuda {

std::string clocks_event_text(std::uint64_t reasons) {
  // The bits of nvmlClocksEventReason* (formerly nvmlClocksThrottleReason*); numeric here because headers
  // before CUDA 12.2 spell them differently.
  static constexpr struct {
    std::uint64_t bit;
    const char* name;
  } k_reasons[] = {
      {0x1, "gpu_idle"},
      {0x2, "applications_clocks_setting"},
      {0x4, "sw_power_cap"},
      {0x8, "hw_slowdown"},
      {0x10, "sync_boost"},
      {0x20, "sw_thermal_slowdown"},
      {0x40, "hw_thermal_slowdown"},
      {0x80, "hw_power_brake_slowdown"},
      {0x100, "display_clock_setting"},
  };
  std::string text;
  std::uint64_t known = 0;
  for (const auto& reason : k_reasons) {
    known |= reason.bit;
    if ((reasons & reason.bit) == 0) continue;
    if (!text.empty()) text += ",";
    text += reason.name;
  }
  if ((reasons & ~known) != 0)
    text += fmt::format("{}unknown_0x{:x}", text.empty() ? "" : ",", reasons & ~known);
  return text.empty() ? "none" : text;
}

#if KJ_HAVE_NVML

namespace {

// nvmlInit/nvmlShutdown are reference-counted by NVML; one pair per snapshot keeps no state between calls.
class nvml_session {
public:
  nvml_session() {
    const nvmlReturn_t result = nvmlInit();
    if (result != NVML_SUCCESS) {
      throw unavailable_error(fmt::format("nvmlInit failed: {}", nvmlErrorString(result)));
    }
  }
  ~nvml_session() { nvmlShutdown(); }
  nvml_session(const nvml_session&) = delete;
  nvml_session& operator=(const nvml_session&) = delete;
};

template <class Query>
void read_u32(std::int64_t& out, Query&& query) {
  unsigned int value = 0;
  if (query(&value) == NVML_SUCCESS) out = value;
}

// Adds the pids of one process list (compute or graphics) to `pids`; false when NVML cannot list them.
template <class List>
bool collect_pids(nvmlDevice_t device, List list, std::set<unsigned int>& pids) {
  unsigned int count = 0;
  nvmlReturn_t result = list(device, &count, nullptr);
  if (result == NVML_SUCCESS) return true; // no process
  if (result != NVML_ERROR_INSUFFICIENT_SIZE) return false;
  std::vector<nvmlProcessInfo_t> infos(count + 8); // room for processes that start meanwhile
  count = static_cast<unsigned int>(infos.size());
  result = list(device, &count, infos.data());
  if (result != NVML_SUCCESS) return false;
  for (unsigned int i = 0; i < count; ++i)
    pids.insert(infos[i].pid);
  return true;
}

} // namespace

bool nvml_available() {
  return true;
}

kj_cuda_nvml_result take_nvml_snapshot(CUdevice cu_device, const std::set<unsigned int>& exclude) {
  char bus_id[32] = {};
  KJ_CU(cuDeviceGetPCIBusId, bus_id, static_cast<int>(sizeof bus_id), cu_device);
  const nvml_session session;
  nvmlDevice_t device{};
  const nvmlReturn_t found = nvmlDeviceGetHandleByPciBusId(bus_id, &device);
  if (found != NVML_SUCCESS) {
    throw unavailable_error(
        fmt::format("NVML does not know the GPU at PCI {}: {}", bus_id, nvmlErrorString(found)));
  }

  kj_cuda_nvml_result s;
  s.sm_clock_mhz = s.sm_clock_max_mhz = s.mem_clock_mhz = s.mem_clock_max_mhz = -1;
  s.temperature_c = s.power_mw = s.power_limit_mw = s.clocks_event_reasons = -1;
  s.processes = s.other_processes = -1;
  s.clocks_event_text[0] = '\0';

  read_u32(s.sm_clock_mhz, [&](unsigned int* v) { return nvmlDeviceGetClockInfo(device, NVML_CLOCK_SM, v); });
  read_u32(s.sm_clock_max_mhz,
           [&](unsigned int* v) { return nvmlDeviceGetMaxClockInfo(device, NVML_CLOCK_SM, v); });
  read_u32(s.mem_clock_mhz,
           [&](unsigned int* v) { return nvmlDeviceGetClockInfo(device, NVML_CLOCK_MEM, v); });
  read_u32(s.mem_clock_max_mhz,
           [&](unsigned int* v) { return nvmlDeviceGetMaxClockInfo(device, NVML_CLOCK_MEM, v); });
  read_u32(s.power_mw, [&](unsigned int* v) { return nvmlDeviceGetPowerUsage(device, v); });
  read_u32(s.power_limit_mw, [&](unsigned int* v) { return nvmlDeviceGetEnforcedPowerLimit(device, v); });
#ifdef nvmlTemperature_v1 // newer headers deprecate nvmlDeviceGetTemperature for the versioned query
  nvmlTemperature_t temperature{};
  temperature.version = nvmlTemperature_v1;
  temperature.sensorType = NVML_TEMPERATURE_GPU;
  if (nvmlDeviceGetTemperatureV(device, &temperature) == NVML_SUCCESS)
    s.temperature_c = temperature.temperature;
#else
  read_u32(s.temperature_c,
           [&](unsigned int* v) { return nvmlDeviceGetTemperature(device, NVML_TEMPERATURE_GPU, v); });
#endif

  unsigned long long reasons = 0;
#ifdef nvmlClocksEventReasonGpuIdle // renamed from "throttle" in CUDA 12.2
  const nvmlReturn_t read_reasons = nvmlDeviceGetCurrentClocksEventReasons(device, &reasons);
#else
  const nvmlReturn_t read_reasons = nvmlDeviceGetCurrentClocksThrottleReasons(device, &reasons);
#endif
  if (read_reasons == NVML_SUCCESS) {
    s.clocks_event_reasons = static_cast<std::int64_t>(reasons);
    const auto written = fmt::format_to_n(s.clocks_event_text, sizeof s.clocks_event_text - 1, "{}",
                                          clocks_event_text(reasons));
    *written.out = '\0';
  }

  std::set<unsigned int> pids;
  const bool compute = collect_pids(device, nvmlDeviceGetComputeRunningProcesses, pids);
  const bool graphics = collect_pids(device, nvmlDeviceGetGraphicsRunningProcesses, pids);
  if (compute || graphics) {
    s.processes = static_cast<std::int64_t>(pids.size());
    // In a container with its own pid namespace NVML reports host pids, so this process may count as "other";
    // the judge names its runner's processes as its own namespace sees them.
    std::int64_t own = 0;
    for (unsigned int pid : pids)
      own += pid == static_cast<unsigned int>(getpid()) || exclude.count(pid) ? 1 : 0;
    s.other_processes = s.processes - own;
  }
  return s;
}

#else // without NVML

bool nvml_available() {
  return false;
}

kj_cuda_nvml_result take_nvml_snapshot(CUdevice, const std::set<unsigned int>&) {
  throw unavailable_error("NVML snapshots are unavailable: this plugin was built without nvml.h");
}

#endif

} // namespace kj::cuda
