#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "models/cluster.hpp"
#include "models/gpu_types.hpp"
#include "models/node_set.hpp"
#include "models/workload.hpp"
#include "sim/errors.hpp"
#include "sim/rng.hpp"

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

TEST(NameTable, ManyNamesKeepTheirIdsThroughGrowth) {
  // Distinct names, interned with repeats in between, through many doublings of the hash table:
  // every id is the first-seen order, and find agrees with intern; a copy answers the same.
  NameTable t;
  EXPECT_FALSE(t.find(""));
  constexpr std::uint32_t kNames = 20'000;
  auto name_of = [](std::uint32_t k) {
    return k % 7 == 0 ? std::string() + "user " + std::to_string(k) : "u" + std::to_string(k);
  };
  for (std::uint32_t k = 0; k < kNames; ++k) {
    ASSERT_EQ(t.intern(name_of(k)), k);
    ASSERT_EQ(t.intern(name_of(k / 2)), k / 2);  // a name seen before
    ASSERT_EQ(t.intern(name_of(k)), k);
  }
  EXPECT_EQ(t.intern(""), kNames);
  const NameTable copy = t;
  for (std::uint32_t k = 0; k < kNames; ++k) {
    ASSERT_EQ(t.name(k), name_of(k));
    ASSERT_EQ(t.find(name_of(k)), k);
    ASSERT_EQ(copy.find(name_of(k)), k);
  }
  EXPECT_EQ(t.find(""), kNames);
  EXPECT_FALSE(t.find("u" + std::to_string(kNames)));
  EXPECT_FALSE(t.find("u"));
  EXPECT_EQ(t.size(), kNames + 1);
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

namespace {
std::vector<NodeId> members(const NodeIdSet& s) { return {s.begin(), s.end()}; }
}  // namespace

TEST(NodeIdSet, IteratesInIdOrderAcrossWords) {
  NodeIdSet s(100, 5000);  // ids 100..5099: 79 words, 2 summary words
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.begin(), s.end());
  for (NodeId id : {5099u, 100u, 163u, 164u, 227u, 4195u, 4196u, 1000u}) EXPECT_TRUE(s.insert(id));
  EXPECT_FALSE(s.insert(164)) << "already a member";
  EXPECT_EQ(s.size(), 8u);
  EXPECT_EQ(members(s), (std::vector<NodeId>{100, 163, 164, 227, 1000, 4195, 4196, 5099}));
  EXPECT_TRUE(s.erase(100));
  EXPECT_FALSE(s.erase(100)) << "no longer a member";
  EXPECT_TRUE(s.erase(1000));
  EXPECT_TRUE(s.erase(163));
  EXPECT_TRUE(s.erase(164));
  EXPECT_EQ(*s.begin(), 227u);
  EXPECT_TRUE(s.erase(227));
  EXPECT_EQ(*s.begin(), 4195u) << "skips the emptied words (4195 is in word 63, the last of summary word 0)";
  EXPECT_EQ(members(s), (std::vector<NodeId>{4195, 4196, 5099}));
  EXPECT_TRUE(s.contains(5099));
  EXPECT_EQ(s.count(4196), 1u);
  EXPECT_FALSE(s.contains(4194));
  EXPECT_FALSE(s.contains(99)) << "below the range";
  EXPECT_FALSE(s.contains(5100)) << "above the range";
  EXPECT_EQ(s.size(), 3u);
  EXPECT_TRUE(s.erase(4195));
  EXPECT_EQ(*s.begin(), 4196u) << "skips the whole first summary word";
  EXPECT_EQ(members(s), (std::vector<NodeId>{4196, 5099}));
}

TEST(NodeIdSet, MatchesAStdSetUnderRandomInsertsAndErases) {
  headroom::sim::RngStream rng(3, "tests/node-id-set");
  NodeIdSet s(7, 9000);
  std::set<NodeId> model;
  for (int step = 0; step < 30000; ++step) {
    // Mostly within a narrow band, so words and summary words empty and fill again.
    const auto id = static_cast<NodeId>(step % 3 == 0 ? rng.between(7, 9006) : rng.between(4000, 4300));
    if (rng.below(2) == 0) {
      ASSERT_EQ(s.insert(id), model.insert(id).second);
    } else {
      ASSERT_EQ(s.erase(id), model.erase(id) == 1);
    }
    ASSERT_EQ(s.size(), model.size());
    ASSERT_EQ(s.empty() ? -1 : static_cast<std::int64_t>(*s.begin()),
              model.empty() ? -1 : static_cast<std::int64_t>(*model.begin()));
    if (step % 1000 == 0) {
      ASSERT_EQ(members(s), std::vector<NodeId>(model.begin(), model.end()));
    }
  }
  EXPECT_EQ(members(s), std::vector<NodeId>(model.begin(), model.end()));
}

namespace {

// One random change of `c`: half the time a slice of min_gpus..max_gpus GPUs on a random node
// (when it fits; `held` keeps it), else mostly the release of a held slice, else a random node
// going down or up.
void random_change(ClusterState& c, headroom::sim::RngStream& rng, std::vector<Placement>& held, std::int32_t min_gpus,
                   std::int32_t max_gpus) {
  const std::uint64_t op = rng.below(10);
  if (op < 5) {
    const auto node = static_cast<NodeId>(rng.below(c.nodes().size()));
    const auto gpus = static_cast<std::int32_t>(rng.between(min_gpus, max_gpus));
    const Placement p{Slice{node, gpus, 0, 0}};
    if (c.check(p).empty()) {
      c.allocate(p);
      held.push_back(p);
    }
  } else if (op < 9 && !held.empty()) {
    const std::size_t k = rng.below(held.size());
    c.release(held[k]);
    held.erase(held.begin() + static_cast<std::ptrdiff_t>(k));
  } else {
    const auto node = static_cast<NodeId>(rng.below(c.nodes().size()));
    c.set_up(node, !c.node(node).up);
  }
}

}  // namespace

// The free-GPU index after random allocations, releases and nodes going down and up: for each
// pool and free count, exactly the pool's up nodes with that many free GPUs, in id order.
TEST(ClusterState, FreeIndexListsTheUpNodesWithEachFreeCountInIdOrder) {
  ClusterSpec spec;
  spec.pools.push_back({"a", 70, 8, "A100", 0, 0});
  spec.pools.push_back({"t", 3, 4, "T4", 0, 0});
  ClusterState c(spec);
  headroom::sim::RngStream rng(5, "tests/free-index");
  std::vector<Placement> held;
  for (int step = 0; step < 4000; ++step) {
    random_change(c, rng, held, 0, 4);
    for (PoolId p = 0; p < c.pool_count(); ++p) {
      for (std::int32_t f = 0; f <= c.node_units(p); ++f) {
        std::vector<NodeId> expected;
        for (NodeId id = c.pool_first_node(p); id < c.pool_first_node(p) + c.pool_node_count(p); ++id)
          if (c.node(id).up && c.node(id).free_gpus == f) expected.push_back(id);
        ASSERT_EQ(members(c.nodes_with_free(p, f)), expected) << "step " << step << " pool " << p << " free " << f;
        ASSERT_EQ(c.nodes_with_free(p, f).size(), expected.size());
      }
    }
  }
}

// The pool index (pools_with_free) after random allocations, releases and nodes going down and up,
// over 130 pools (three words) of 1 to 3 nodes with 4 or 8 GPUs: for each free count up to the
// largest node's, exactly the pools with an up node of that many free GPUs.
TEST(ClusterState, PoolIndexListsThePoolsWithAnUpNodeOfEachFreeCount) {
  ClusterSpec spec;
  for (int p = 0; p < 130; ++p) spec.pools.push_back({std::to_string(p), 1 + p % 3, p % 4 == 0 ? 4 : 8, "A100", 0, 0});
  ClusterState c(spec);
  ASSERT_EQ(c.max_node_units(), 8);
  headroom::sim::RngStream rng(7, "tests/pool-index");
  std::vector<Placement> held;
  for (int step = 0; step < 6000; ++step) {
    random_change(c, rng, held, 1, 8);
    for (std::int32_t f = 0; f <= c.max_node_units(); ++f) {
      std::vector<NodeId> expected;  // pool ids
      for (PoolId p = 0; p < c.pool_count(); ++p)
        if (f <= c.node_units(p) && !c.nodes_with_free(p, f).empty()) expected.push_back(p);
      ASSERT_EQ(members(c.pools_with_free(f)), expected) << "step " << step << " free " << f;
    }
  }
}

// A cluster made past the free-index bound (not through a scenario, whose reader refuses it at its
// `cluster:` key) is an input error with the reason, not gigabytes of empty sets.
TEST(ClusterState, RefusesAFreeIndexPastItsBound) {
  ClusterSpec spec;
  spec.pools.push_back({"a", 1, 1024, "A100", 0, 0});
  spec.pools.back().units_per_gpu = 1024;
  EXPECT_EQ(free_index_entries(spec), 1'048'577);
  EXPECT_EQ(free_index_overflow(spec), "");
  spec.pools.push_back(spec.pools.back());
  EXPECT_EQ(free_index_entries(spec), 2'097'154);
  try {
    ClusterState c(spec);
    FAIL() << "expected an InputError";
  } catch (const headroom::sim::InputError& e) {
    EXPECT_STREQ(e.what(),
                 "cluster: 2 pools of nodes advertising up to 1,048,576 GPU units each (GPUs per node x time-slicing "
                 "replicas) need a free-GPU index of 2,097,154 entries (a pool's units + 1, summed), more than the "
                 "2,097,152 a run holds; join pools of like nodes, or give fewer replicas");
  }
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

TEST(ClusterState, TryAllocateAnswersAsCheckAndAppliesOnlyWhenItAccepts) {
  ClusterState c(two_pools());
  c.allocate({{0, 6, 0, 0}});
  EXPECT_EQ(c.try_allocate({{1, 2, 0, 0}, {0, 3, 0, 0}}), "node 0 has 2 free GPUs, 3 requested");
  EXPECT_EQ(c.node(1).free_gpus, 8) << "nothing of a refused placement is applied, not even its first slice";
  EXPECT_EQ(c.free_gpus(), 22);
  EXPECT_EQ(members(c.nodes_with_free(0, 8)), (std::vector<NodeId>{1}));
  EXPECT_EQ(c.try_allocate({{1, 2, 0, 0}, {0, 2, 0, 0}}), "");
  EXPECT_EQ(c.node(0).free_gpus, 0);
  EXPECT_EQ(c.node(1).free_gpus, 6);
  EXPECT_EQ(c.node(1).jobs, 1);
  EXPECT_EQ(c.free_gpus(), 18);
  EXPECT_EQ(c.used_gpus(), 10);
  EXPECT_EQ(members(c.nodes_with_free(0, 6)), (std::vector<NodeId>{1}));
  EXPECT_EQ(members(c.nodes_with_free(0, 0)), (std::vector<NodeId>{0}));
}

// The first slice that repeats an earlier one's node, in a handful of slices and in a gang over
// thousands of nodes (sorted, not pairwise): the same index either way.
TEST(ClusterState, FirstRepeatOfANodeInSmallAndWidePlacements) {
  EXPECT_EQ(headroom::models::first_repeat({}), 0u);
  EXPECT_EQ(headroom::models::first_repeat({{3, 1, 0, 0}, {1, 1, 0, 0}, {3, 1, 0, 0}}), 2u);
  headroom::models::Placement wide;
  for (NodeId id = 5000; id-- > 0;) wide.push_back({id, 16, 0, 0});
  EXPECT_EQ(headroom::models::first_repeat(wide), wide.size());
  wide.push_back({4000, 1, 0, 0});  // index 5000
  wide.push_back({7, 1, 0, 0});     // index 5001
  wide.push_back({4000, 1, 0, 0});  // a third time: still 5000
  EXPECT_EQ(headroom::models::first_repeat(wide), 5000u);
  std::swap(wide[5000], wide[5001]);
  EXPECT_EQ(headroom::models::first_repeat(wide), 5000u) << "node 7 now repeats first";
  // check() names the repeated node at its place among the other checks.
  ClusterState c(two_pools());
  EXPECT_EQ(c.check({{0, 1, 0, 0}, {1, 1, 0, 0}, {0, 1, 0, 0}}), "node 0 appears twice");
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
