#pragma once

// check_params / parse_config for a policy whose parser fills its Config and returns every
// problem it found (file:line:column errors located at the values).

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "models/job.hpp"
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

// The items of a list as the scenario loader writes a flow sequence ("[a, b]", items trimmed and
// unquoted, empty ones dropped) or of a single scalar ("a").
inline std::vector<std::string> parse_flow_list(std::string_view text) {
  std::vector<std::string> out;
  if (text.size() >= 2 && text.front() == '[' && text.back() == ']') text = text.substr(1, text.size() - 2);
  while (!text.empty()) {
    const auto comma = text.find(',');
    std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view() : text.substr(comma + 1);
    while (!item.empty() && item.front() == ' ') item.remove_prefix(1);
    while (!item.empty() && item.back() == ' ') item.remove_suffix(1);
    if (item.size() >= 2 && (item.front() == '"' || item.front() == '\'') && item.back() == item.front())
      item = item.substr(1, item.size() - 2);
    if (!item.empty()) out.emplace_back(item);
  }
  return out;
}

// A list of job kinds (parse_flow_list): the kinds in `out`, every name that is not a kind in
// `unknown`.
inline void parse_job_kinds(std::string_view text, std::vector<models::JobKind>& out,
                            std::vector<std::string>& unknown) {
  out.clear();
  for (const std::string& item : parse_flow_list(text)) {
    models::JobKind k{};
    if (models::parse_job_kind(item, k))
      out.push_back(k);
    else
      unknown.push_back(item);
  }
}

}  // namespace headroom::policies
