// The hardware's speed of light: peak memory bandwidth and peak FLOP rate of the device, from a datasheet
// table for GPUs (agent/hardware.json), measured (the CPU's copy bandwidth), or configured by the user.
#pragma once

#include "core/precision.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kj::agent {

struct peaks {
  std::optional<double> bandwidth_gbs; // [GB/s] bytes read + written per second
  std::string bandwidth_source;        // where the number comes from, said next to every estimate
  std::optional<double> tflops;        // [TFLOP/s] at the problem's precision
  std::string flops_source;
};

struct peak_settings {
  std::optional<double> bandwidth_gbs; // --peak-bandwidth-gbs: wins over the table and the measurement
  std::optional<double> tflops;        // --peak-tflops
  std::string table_text;              // the hardware table's JSON ("" the one built into kj)
  std::string table_name = "agent/hardware.json";
};

// The peaks of the resolved device: cuda looks the GPU's name (env "device_name") up in the table, at the
// precision `at` (the table keys it by name); cpu measures the copy bandwidth here and knows no FLOP peak
// unless one is configured. Throws std::runtime_error naming the table and field when the table is malformed.
peaks device_peaks(const nlohmann::json& env, const std::string& device, kj::precision at,
                   const peak_settings& settings);

// [GB/s] (bytes read + bytes written) / time of the fastest of a few memcpy calls of `bytes`, one thread.
double measure_copy_bandwidth_gbs(std::size_t bytes = std::size_t{256} << 20);

// The table built into kj (agent/hardware.json at build time).
std::string builtin_hardware_table();

} // namespace kj::agent
