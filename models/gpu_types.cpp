#include "models/gpu_types.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <vector>

#include "sim/suggest.hpp"

namespace headroom::models {

namespace {

// Memory and dense FP16 tensor TFLOPS from the NVIDIA product datasheets (P100 SXM2, V100 SXM2,
// T4, A10, A100 SXM4, H100 SXM5, H200 SXM, L40S, B200).
const std::array<GpuType, 11> kCatalogue{{
    {"P100", 16, 21.2, 2016},
    {"V100-16G", 16, 125, 2017},
    {"V100-32G", 32, 125, 2018},
    {"T4", 16, 65, 2018},
    {"A10", 24, 125, 2021},
    {"A100-40G", 40, 312, 2020},
    {"A100-80G", 80, 312, 2020},
    {"H100", 80, 989, 2022},
    {"H200", 141, 989, 2024},
    {"L40S", 48, 362, 2023},
    {"B200", 192, 2250, 2024},
}};

struct Alias {
  const char* alias;
  const char* name;
};
const std::array<Alias, 8> kAliases{{
    {"V100", "V100-16G"},
    {"V100M16", "V100-16G"},
    {"V100M32", "V100-32G"},
    {"A100", "A100-80G"},
    {"A100-SXM4-80GB", "A100-80G"},
    {"A100-SXM4-40GB", "A100-40G"},
    {"H100-SXM", "H100"},
    {"H200-SXM", "H200"},
}};

bool iequal(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

std::span<const GpuType> gpu_catalogue() { return kCatalogue; }

const GpuType* find_gpu_type(std::string_view name) {
  for (const auto& g : kCatalogue)
    if (iequal(g.name, name)) return &g;
  for (const auto& a : kAliases)
    if (iequal(a.alias, name)) return find_gpu_type(a.name);
  return nullptr;
}

std::optional<std::string> suggest_gpu_type(std::string_view name) {
  std::size_t best = 3;
  std::optional<std::string> out;
  for (const auto& g : kCatalogue) {
    const std::size_t d = sim::edit_distance(name, g.name);
    if (d < best) {
      best = d;
      out = g.name;
    }
  }
  return out;
}

}  // namespace headroom::models
