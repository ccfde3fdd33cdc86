#pragma once

// check_params / parse_config for a policy whose parser fills its Config and returns every
// problem it found (file:line:column errors located at the values).

#include <utility>
#include <vector>

#include "policies/api.hpp"
#include "sim/errors.hpp"

namespace headroom::policies {

// Appends the parser's errors to `errors`.
template <typename Config, typename ParseInto>
void collect_param_errors(const PolicyParams& params, std::vector<sim::InputError>& errors, ParseInto parse_into) {
  Config config;
  for (auto& e : parse_into(params, config)) errors.push_back(std::move(e));
}

// The parsed configuration; throws the first error.
template <typename Config, typename ParseInto>
Config parse_params_or_throw(const PolicyParams& params, ParseInto parse_into) {
  Config config;
  auto errors = parse_into(params, config);
  if (!errors.empty()) throw errors.front();
  return config;
}

}  // namespace headroom::policies
