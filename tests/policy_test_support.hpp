#pragma once

// Helpers shared by the policy tests: policy parameters written by hand, and scenario text that
// must be refused.

#include <gtest/gtest.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "policies/api.hpp"
#include "scenarios/scenario.hpp"
#include "sim/errors.hpp"

namespace headroom::testing {

// A policy block of key -> value, located at test.yaml lines 1, 2, ... column 3.
inline policies::PolicyParams params(const std::map<std::string, std::string>& kv) {
  policies::PolicyParams out;
  int line = 1;
  for (const auto& [k, v] : kv) out[k] = policies::ParamValue{v, "test.yaml", line++, 3};
  return out;
}

// The same in the order given (line k for the k-th pair), for parameters whose order means
// something, such as the creation order of KAI queues.
inline policies::PolicyParams ordered_params(const std::vector<std::pair<std::string, std::string>>& kv) {
  policies::PolicyParams out;
  int line = 1;
  for (const auto& [k, v] : kv) out[k] = policies::ParamValue{v, "test.yaml", line++, 3};
  return out;
}

// Appends a KAI queue with every GPU field set (cpu and memory unlimited by default) to
// parameters given in order (ordered_params).
inline void kai_queue(std::vector<std::pair<std::string, std::string>>& kv, const std::string& name, int quota,
                      double weight, int limit, const std::string& parent = "", int priority = 100) {
  const std::string q = "queues." + name + ".";
  if (!parent.empty()) kv.emplace_back(q + "parentQueue", parent);
  kv.emplace_back(q + "priority", std::to_string(priority));
  kv.emplace_back(q + "resources.gpu.quota", std::to_string(quota));
  kv.emplace_back(q + "resources.gpu.overQuotaWeight", std::to_string(weight));
  kv.emplace_back(q + "resources.gpu.limit", std::to_string(limit));
}

// Where inline scenario text claims to live (its relative paths resolve from there).
inline const std::string kInlineScenario = std::string(HEADROOM_SOURCE_DIR) + "/tests/data/scenarios/inline.yaml";

// The errors that parsing `text` reports; a test failure when it is accepted.
inline std::vector<sim::InputError> scenario_errors(const std::string& text,
                                                    const std::string& file = kInlineScenario) {
  try {
    scenarios::parse_scenario(text, file);
  } catch (const sim::InputErrors& e) {
    return e.errors();
  }
  ADD_FAILURE() << "expected errors";
  return {};
}

// `s` with the first `from` replaced by `to`; a test failure when `from` is absent.
inline std::string replace(std::string s, const std::string& from, const std::string& to) {
  const auto at = s.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return s.replace(at, from.size(), to);
}

// The error-check fixture of the policy tests: `text` gives exactly one error, at `line` (and
// `column` when > 0), about key `where`, saying `message` (a message starting with "..." need only
// contain the rest).
inline void expect_one_error(const std::string& text, int line, const std::string& where, const std::string& message,
                             int column = 0, const std::string& file = kInlineScenario) {
  const auto errors = scenario_errors(text, file);
  ASSERT_EQ(errors.size(), 1u) << message;
  EXPECT_EQ(errors[0].line(), line) << message;
  if (column > 0) {
    EXPECT_EQ(errors[0].column(), column) << message;
  }
  EXPECT_EQ(errors[0].where(), where) << message;
  if (message.starts_with("...")) {
    EXPECT_NE(errors[0].message().find(message.substr(3)), std::string::npos) << errors[0].message();
  } else {
    EXPECT_EQ(errors[0].message(), message);
  }
}

}  // namespace headroom::testing
