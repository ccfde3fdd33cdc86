// MIG geometries of models/gpu_share.hpp: GPU type names to MIG models, the placement of a
// geometry on one device (checked against an exhaustive search), and NVIDIA's named configs.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "models/gpu_share.hpp"

namespace gs = headroom::models::gpushare;

namespace {

using Models = std::vector<std::string_view>;

TEST(MigModels, GpuTypeNamesMapToMigModels) {
  EXPECT_EQ(gs::mig_models_for("A100-SXM4-40GB"), (Models{"A100-40GB"}));
  EXPECT_EQ(gs::mig_models_for("a100-40g"), (Models{"A100-40GB"}));
  EXPECT_EQ(gs::mig_models_for("NVIDIA A100 80GB PCIe"), (Models{"A100-80GB"}));
  EXPECT_EQ(gs::mig_models_for("A100-SXM4-80GB"), (Models{"A100-80GB"}));
  EXPECT_EQ(gs::mig_models_for("a100"), (Models{"A100-80GB", "A100-40GB"})) << "no memory size: both";
  EXPECT_EQ(gs::mig_models_for("H100-SXM5-80GB"), (Models{"H100-80GB"}));
  EXPECT_EQ(gs::mig_models_for("H100"), (Models{"H100-80GB"}));
  EXPECT_EQ(gs::mig_models_for("A30"), (Models{"A30"}));
  EXPECT_TRUE(gs::mig_models_for("H100 NVL").empty());
  EXPECT_TRUE(gs::mig_models_for("A10").empty());
  EXPECT_TRUE(gs::mig_models_for("A1000").empty());
  EXPECT_TRUE(gs::mig_models_for("T4").empty());
}

// Whether the instances (profile indices) from `next` on have non-overlapping placements on `d`,
// trying every allowed start.
bool exhaustive(const std::vector<const gs::MigProfile*>& instances, std::size_t next, gs::MigDevice d) {
  if (next == instances.size()) return true;
  const gs::MigProfile& p = *instances[next];
  for (const int start : p.starts) {
    const std::uint32_t mask = ((1U << p.size) - 1U) << start;
    if (start + p.size > d.slices || (d.used & mask) != 0) continue;
    gs::MigDevice e = d;
    e.take(p, start);
    if (exhaustive(instances, next + 1, e)) return true;
  }
  return false;
}

TEST(MigPlacement, LargestFirstAtTheHighestStartPlacesEveryGeometryThatHasAPlacement) {
  for (const std::string_view model : {"A100-40GB", "A100-80GB", "H100-80GB", "A30"}) {
    const auto profiles = gs::mig_profiles(model);
    const int slices = gs::mig_memory_slices(model);
    // Every multiset of profiles using at most `slices` memory slices in all.
    std::vector<int> counts(profiles.size(), 0);
    int geometries = 0, placeable = 0;
    while (true) {
      std::map<std::string, std::int32_t> geometry;
      std::vector<const gs::MigProfile*> instances;
      for (std::size_t i = 0; i < profiles.size(); ++i) {
        if (counts[i] > 0) geometry[profiles[i].name] = counts[i];
        for (int k = 0; k < counts[i]; ++k) instances.push_back(&profiles[i]);
      }
      gs::MigDevice d{slices, 0};
      const bool greedy = gs::place_geometry(model, geometry, d) == nullptr;
      const bool any = exhaustive(instances, 0, gs::MigDevice{slices, 0});
      EXPECT_EQ(greedy, any) << model << " geometry of " << instances.size() << " instances";
      ++geometries;
      placeable += any ? 1 : 0;
      // Next multiset (odometer, bounded by the memory slices).
      std::size_t i = 0;
      for (; i < profiles.size(); ++i) {
        ++counts[i];
        int used = 0;
        for (std::size_t k = 0; k < profiles.size(); ++k) used += counts[k] * profiles[k].size;
        if (used <= slices) break;
        counts[i] = 0;
      }
      if (i == profiles.size()) break;
    }
    EXPECT_GT(placeable, 1) << model;
    if (slices == 8) {
      EXPECT_LT(placeable, geometries) << model;  // every A30 multiset of 4 slices fits
    }
  }
}

TEST(MigPlacement, BalancedFitsAndTwoThreeGPlusOneGDoesNot) {
  gs::MigDevice d;
  EXPECT_EQ(gs::place_geometry("A100-40GB", {{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}, d), nullptr);
  EXPECT_EQ(d.used, 0xFFU) << "3g at 4-7, 2g at 2-3, the 1g at 1 and 0";
  gs::MigDevice e;
  const gs::MigProfile* failed = gs::place_geometry("A100-40GB", {{"3g.20gb", 2}, {"1g.5gb", 1}}, e);
  ASSERT_NE(failed, nullptr);
  EXPECT_EQ(failed->name, "1g.5gb");
  EXPECT_EQ(e.used, 0xFFU) << "the two 3g take all 8 memory slices";
  gs::MigDevice f;
  EXPECT_EQ(gs::place_geometry("A100-40GB", {{"4g.20gb", 1}, {"3g.20gb", 1}}, f), nullptr) << "4g first, at 0";
}

TEST(MigNamedConfigs, DefaultMigPartedConfigsPerModel) {
  using G = std::map<std::string, std::int32_t>;
  // NVIDIA/mig-parted deployments/systemd/config-default.yaml, all-balanced per device filter.
  EXPECT_EQ(gs::mig_named_config("A100-40GB", "all-balanced")->devices,
            (G{{"1g.5gb", 2}, {"2g.10gb", 1}, {"3g.20gb", 1}}));
  EXPECT_EQ(gs::mig_named_config("A100-80GB", "all-balanced")->devices,
            (G{{"1g.10gb", 2}, {"2g.20gb", 1}, {"3g.40gb", 1}}));
  EXPECT_EQ(gs::mig_named_config("H100-80GB", "all-balanced")->devices,
            (G{{"1g.10gb", 2}, {"2g.20gb", 1}, {"3g.40gb", 1}}));
  EXPECT_EQ(gs::mig_named_config("A30", "all-balanced")->devices, (G{{"1g.6gb", 2}, {"2g.12gb", 1}}));
  EXPECT_EQ(gs::mig_named_config("A100-40GB", "all-1g.5gb")->devices, (G{{"1g.5gb", 7}}));
  EXPECT_EQ(gs::mig_named_config("A100-40GB", "all-1g.10gb")->devices, (G{{"1g.10gb", 4}}));
  EXPECT_EQ(gs::mig_named_config("A100-80GB", "all-1g.10gb")->devices, (G{{"1g.10gb", 7}}));
  EXPECT_EQ(gs::mig_named_config("A100-80GB", "all-1g.20gb")->devices, (G{{"1g.20gb", 4}}));
  EXPECT_EQ(gs::mig_named_config("A100-40GB", "all-2g.10gb")->devices, (G{{"2g.10gb", 3}}));
  EXPECT_EQ(gs::mig_named_config("A100-40GB", "all-3g.20gb")->devices, (G{{"3g.20gb", 2}}));
  EXPECT_EQ(gs::mig_named_config("A100-40GB", "all-7g.40gb")->devices, (G{{"7g.40gb", 1}}));
  EXPECT_EQ(gs::mig_named_config("A30", "all-1g.6gb")->devices, (G{{"1g.6gb", 4}}));
  EXPECT_EQ(gs::mig_named_config("A30", "all-2g.12gb")->devices, (G{{"2g.12gb", 2}}));
  EXPECT_FALSE(gs::mig_named_config("A100-40GB", "all-disabled")->enabled);
  const auto enabled = gs::mig_named_config("A100-40GB", "all-enabled");
  EXPECT_TRUE(enabled->enabled);
  EXPECT_TRUE(enabled->devices.empty());
  EXPECT_FALSE(gs::mig_named_config("A100-80GB", "all-1g.5gb")) << "no 1g.5gb on an 80 GB A100";
  EXPECT_FALSE(gs::mig_named_config("A100-40GB", "custom-config"));
  EXPECT_FALSE(gs::mig_named_config("T4", "all-balanced"));
}

}  // namespace
