#pragma once

// Policy parameters that hold a list or map: the scenario reader writes such a value back as YAML
// text, flow style ("[{plugins: [{name: gang}]}]") or block style ("- devices: [0, 1]\n  mig-devices:
// ..."), and a policy reads it into this tree (volcano's tiers, the device plugin's mig-parted
// entries).
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace headroom::policies {

struct ParamEntry;

// A scalar, a list or a map of the YAML subset the scenario reader writes.
struct ParamTree {
  enum Kind : std::uint8_t { Scalar, List, Map } kind = Scalar;
  std::string text;
  std::vector<ParamTree> items;
  // The map's keys and values in written order. Not std::pair<std::string, ParamTree>: a pair
  // needs ParamTree complete where this member is declared, which clang's library checks.
  std::vector<ParamEntry> entries;
};

struct ParamEntry {
  ParamEntry(std::string k, ParamTree v) : first(std::move(k)), second(std::move(v)) {}
  std::string first;
  ParamTree second;
};

// The tree of `text` (flow style when it starts with '[' or '{', else block style), nullopt when
// it is not of that subset.
std::optional<ParamTree> parse_param_tree(std::string_view text);

}  // namespace headroom::policies
