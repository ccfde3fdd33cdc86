#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace headroom::models {

struct GpuType {
  std::string name;        // canonical name, e.g. "A100-80G"
  double memory_gib = 0;   // device memory
  double fp16_tflops = 0;  // dense FP16/BF16 tensor throughput, vendor datasheet
  int year = 0;            // launch year
};

// The built-in catalogue (NVIDIA datasheets; see models/gpu_types.cpp for sources).
std::span<const GpuType> gpu_catalogue();

// Case-insensitive lookup by name or alias ("a100" -> A100-80G, "V100M32" -> V100-32G).
// Returns nullptr when unknown. Names not in the catalogue may still be used in a scenario
// (e.g. the undisclosed G1/G2/G3 models of the Alibaba traces); they get no memory figure.
const GpuType* find_gpu_type(std::string_view name);

// Closest catalogue names to an unknown one, for "did you mean" messages.
std::optional<std::string> suggest_gpu_type(std::string_view name);

}  // namespace headroom::models
