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

// A scalar, a list or a map of the YAML subset the scenario reader writes.
struct ParamTree {
  enum Kind : std::uint8_t { Scalar, List, Map } kind = Scalar;
  std::string text;
  std::vector<ParamTree> items;
  std::vector<std::pair<std::string, ParamTree>> entries;
};

// The tree of `text` (flow style when it starts with '[' or '{', else block style), nullopt when
// it is not of that subset.
std::optional<ParamTree> parse_param_tree(std::string_view text);

}  // namespace headroom::policies
