#include "policies/common/calibration.hpp"

#include <algorithm>

namespace headroom::policies {

std::vector<std::int64_t> limit_ladder(std::int64_t lo, std::int64_t hi) {
  std::vector<std::int64_t> out;
  if (hi <= 0) return out;
  std::int64_t v = 1;
  while (v < std::max<std::int64_t>(lo, 1)) v *= 2;
  for (; v < hi; v *= 2) out.push_back(v);
  out.push_back(hi);
  return out;
}

}  // namespace headroom::policies
