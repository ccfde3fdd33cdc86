#include <gtest/gtest.h>

#include "models/cluster.hpp"
#include "models/gpu_types.hpp"
#include "models/workload.hpp"
#include "sim/errors.hpp"

using namespace headroom::models;

TEST(GpuTypes, CatalogueHasTheCommonDatacentreGpus) {
  for (const char* name : {"V100-16G", "A100-80G", "H100", "H200", "T4", "P100"}) {
    const GpuType* g = find_gpu_type(name);
    ASSERT_NE(g, nullptr) << name;
    EXPECT_GT(g->memory_gib, 0);
  }
  EXPECT_EQ(find_gpu_type("h200")->memory_gib, 141);
  EXPECT_EQ(find_gpu_type("V100M32")->name, "V100-32G");
  EXPECT_EQ(find_gpu_type("a100")->name, "A100-80G");
  EXPECT_EQ(find_gpu_type("G2"), nullptr);
  EXPECT_EQ(suggest_gpu_type("H1OO"), "H100");
}

TEST(NameTable, InternsInFirstSeenOrder) {
  NameTable t;
  EXPECT_EQ(t.intern("b"), 0u);
  EXPECT_EQ(t.intern("a"), 1u);
  EXPECT_EQ(t.intern("b"), 0u);
  EXPECT_EQ(t.size(), 2u);
  EXPECT_EQ(t.name(1), "a");
  EXPECT_EQ(t.find("a"), 1u);
  EXPECT_FALSE(t.find("c"));
}

namespace {
ClusterSpec two_pools() {
  ClusterSpec s;
  s.pools.push_back({"a", 2, 8, "A100", 0, 0});
  s.pools.push_back({"t", 3, 4, "T4", 16, 64});
  return s;
}
}  // namespace

TEST(ClusterState, IndexesNodesByFreeGpus) {
  ClusterState c(two_pools());
  EXPECT_EQ(c.total_gpus(), 28);
  EXPECT_EQ(c.nodes().size(), 5u);
  EXPECT_EQ(c.pool_first_node(1), 2u);
  EXPECT_EQ(c.nodes_with_free(0, 8).size(), 2u);
  c.allocate({{0, 3, 0, 0}});
  EXPECT_EQ(c.free_gpus(), 25);
  EXPECT_EQ(c.pool_free_gpus(0), 13);
  EXPECT_EQ(*c.nodes_with_free(0, 5).begin(), 0u);
  EXPECT_EQ(c.nodes_with_free(0, 8).size(), 1u);
  c.release({{0, 3, 0, 0}});
  EXPECT_EQ(c.nodes_with_free(0, 8).size(), 2u);
  EXPECT_EQ(c.free_gpus(), 28);
}

TEST(ClusterState, GpuSharesOpenADeviceAndFreeItWithTheLastShare) {
  ClusterState c(two_pools());
  const Slice half{0, 0, 0, 0, 500, 2};
  c.allocate({half});
  EXPECT_EQ(c.node(0).free_gpus, 7) << "the shared device leaves the free GPUs";
  EXPECT_EQ(c.node(0).shared_gpus, 1);
  EXPECT_EQ(c.device_milli(0, 2), 500);
  EXPECT_EQ(c.used_gpus(), 1);
  c.allocate({{0, 0, 0, 0, 300, 2}});
  EXPECT_EQ(c.node(0).free_gpus, 7) << "a second share on the same device takes no GPU";
  EXPECT_EQ(c.device_milli(0, 2), 800);
  EXPECT_EQ(c.check({{0, 0, 0, 0, 300, 2}}), "node 0 GPU 2 has 200 milli-GPUs free, 300 requested");
  EXPECT_EQ(c.check({{0, 1, 0, 0, 300, 2}}), "a slice holds whole GPUs or a GPU share, not both");
  EXPECT_EQ(c.check({{0, 0, 0, 0, 300, 8}}), "node 0 GPU 8 does not exist");
  c.allocate({{0, 7, 0, 0}});
  EXPECT_EQ(c.check({{0, 0, 0, 0, 100, 3}}), "node 0 has 0 free GPUs, 1 requested") << "opening needs a free GPU";
  c.release({half});
  EXPECT_EQ(c.node(0).free_gpus, 0);
  c.release({{0, 0, 0, 0, 300, 2}});
  EXPECT_EQ(c.node(0).free_gpus, 1) << "the last share gives the device back";
  EXPECT_EQ(c.node(0).shared_gpus, 0);
  EXPECT_EQ(c.used_gpus(), 7);
}

TEST(ClusterState, CountsChangesOfUp) {
  ClusterState c(two_pools());
  EXPECT_EQ(c.up_changes(), 0u);
  c.set_up(1, true);  // already up: no change
  EXPECT_EQ(c.up_changes(), 0u);
  c.set_up(1, false);
  c.set_up(1, false);
  EXPECT_EQ(c.up_changes(), 1u);
  c.allocate({{0, 3, 0, 0}});
  EXPECT_EQ(c.up_changes(), 1u) << "allocation is not a change of up";
  c.set_up(1, true);
  EXPECT_EQ(c.up_changes(), 2u);
}

TEST(ClusterState, RefusesOvercommitAndOverRelease) {
  ClusterState c(two_pools());
  EXPECT_NE(c.check({{0, 9, 0, 0}}), "");
  EXPECT_NE(c.check({{0, 4, 0, 0}, {0, 4, 0, 0}}), "") << "the same node twice";
  EXPECT_NE(c.check({{7, 1, 0, 0}}), "") << "missing node";
  EXPECT_NE(c.check({{2, 1, 17, 0}}), "") << "more CPUs than the node has";
  EXPECT_NE(c.check({{2, 1, 1, 65 * 1024}}), "") << "more memory than the node has";
  EXPECT_EQ(c.check({{2, 4, 16, 64 * 1024}}), "");
  EXPECT_THROW(c.allocate({{0, 9, 0, 0}}), headroom::sim::InternalError);
  EXPECT_EQ(c.free_gpus(), 28) << "a refused allocation changes nothing";
  EXPECT_THROW(c.release({{1, 1, 0, 0}}), headroom::sim::InternalError);
}
