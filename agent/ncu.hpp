// Nsight Compute for the profile tool on a GPU: the command that wraps an untimed evaluation, and the
// per-kernel metrics read back from its report (speed of light, achieved occupancy, top stall reasons).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace kj::agent {

struct ncu_kernel {
  std::string name; // as ncu names it (function name)
  std::string process_id;
  std::optional<double> duration_us;   // [us] gpu__time_duration.sum
  std::optional<double> compute_pct;   // [%] SM throughput of peak (compute speed of light)
  std::optional<double> memory_pct;    // [%] compute-memory throughput of peak (memory speed of light)
  std::optional<double> dram_pct;      // [%] DRAM throughput of peak
  std::optional<double> occupancy_pct; // [%] achieved occupancy (warps active of the peak)
  std::optional<double> registers;     // per thread
  // The largest stall reasons: (reason, warp cycles per issued instruction), most first, at most three.
  std::vector<std::pair<std::string, double>> stalls;
};

struct ncu_report {
  std::vector<ncu_kernel> kernels; // in launch order
  std::string error;               // why there are none ("" when ncu worked)
};

// The metrics kj asks ncu for (--metrics).
const std::vector<std::string>& ncu_metrics();

// `ncu` on PATH (or `requested` when it names a program), "" when there is none. "off" gives "".
std::string find_ncu(const std::string& requested);

// The wrapper that runs a worker under ncu, writing `report` (.ncu-rep) for at most `launches` kernels of
// every process (the judge and the candidate's runner).
std::vector<std::string> ncu_wrapper(const std::string& ncu, const std::filesystem::path& report,
                                     int launches);

// Reads a report back: `ncu --import REPORT --csv --page raw --metrics ...`. Throws std::runtime_error with
// ncu's output when it fails.
std::string import_ncu_report(const std::string& ncu, const std::filesystem::path& report);

// Parses the raw page in CSV (a header row of column names, optionally a row of units, one row per kernel).
// Throws std::runtime_error when the header lacks the kernel name column.
std::vector<ncu_kernel> parse_ncu_csv(const std::string& csv);

// A kernel name reduced to its function's name (no return type, namespace, template or parameter list), to
// match ncu's names with the CUPTI trace's.
std::string kernel_base_name(const std::string& name);

} // namespace kj::agent
