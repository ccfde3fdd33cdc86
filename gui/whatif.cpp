#include "gui/whatif.hpp"

#include <yaml-cpp/yaml.h>

#include <QDir>
#include <QFileInfo>
#include <QStandardPaths>
#include <filesystem>
#include <stdexcept>

namespace headroom::gui {
namespace {

YAML::Node load(const std::string& text) {
  try {
    YAML::Node root = YAML::Load(text);
    if (!root.IsMap()) throw std::runtime_error("the scenario is not a YAML map");
    return root;
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(std::string("cannot read the scenario: ") + e.what());
  }
}

YAML::Node pools_of(const YAML::Node& root) {
  const YAML::Node cluster = root["cluster"];
  if (!cluster || !cluster.IsMap()) throw std::runtime_error("the scenario has no cluster map");
  YAML::Node pools = cluster["pools"];
  if (!pools || !pools.IsSequence()) throw std::runtime_error("the scenario has no cluster.pools list");
  return pools;
}

}  // namespace

WhatIfKnobs read_knobs(const std::string& yaml_text) {
  const YAML::Node root = load(yaml_text);
  WhatIfKnobs k;
  try {
    if (root["name"]) k.name = root["name"].as<std::string>();
    const YAML::Node pools = pools_of(root);
    for (std::size_t i = 0; i < pools.size(); ++i) {
      const YAML::Node p = pools[i];
      const std::string name = p["name"] ? p["name"].as<std::string>() : "pool " + std::to_string(i);
      if (!p["nodes"]) throw std::runtime_error("cluster.pools[" + std::to_string(i) + "] has no nodes");
      k.pool_nodes.emplace_back(name, p["nodes"].as<int>());
    }
    const YAML::Node policy = root["policy"];
    if (policy && policy.IsScalar())
      k.policy = policy.as<std::string>();
    else if (policy && policy.IsMap() && policy["name"])
      k.policy = policy["name"].as<std::string>();
    else
      throw std::runtime_error("the scenario has no policy.name");
    const YAML::Node workload = root["workload"];
    if (workload && workload.IsMap() && workload["arrival_scale"])
      k.arrival_scale = workload["arrival_scale"].as<double>();
  } catch (const YAML::Exception& e) {
    throw std::runtime_error(std::string("cannot read the scenario's knobs: ") + e.what());
  }
  return k;
}

std::string apply_knobs(const std::string& yaml_text, const WhatIfKnobs& k, const std::string& base_dir) {
  YAML::Node root = load(yaml_text);
  const WhatIfKnobs before = read_knobs(yaml_text);
  if (!k.name.empty()) root["name"] = k.name;
  YAML::Node pools = pools_of(root);
  if (pools.size() != k.pool_nodes.size()) throw std::runtime_error("the knobs name a different number of pools");
  for (std::size_t i = 0; i < pools.size(); ++i) {
    YAML::Node p = pools[i];
    p["nodes"] = k.pool_nodes[i].second;
  }
  if (k.policy != before.policy) {
    YAML::Node policy(YAML::NodeType::Map);
    policy["name"] = k.policy;
    root["policy"] = policy;
  }
  YAML::Node workload = root["workload"];
  if (workload && workload.IsMap()) {
    if (k.arrival_scale != before.arrival_scale || workload["arrival_scale"])
      workload["arrival_scale"] = k.arrival_scale;
    if (workload["trace"] && workload["trace"].IsScalar() && !base_dir.empty()) {
      const std::filesystem::path trace = workload["trace"].as<std::string>();
      if (trace.is_relative())
        workload["trace"] = (std::filesystem::path(base_dir) / trace).lexically_normal().string();
    }
  }
  YAML::Emitter out;
  out << root;
  if (!out.good()) throw std::runtime_error("cannot write the edited scenario: " + out.GetLastError());
  return std::string(out.c_str()) + "\n";
}

QStringList known_policies() {
  return {QStringLiteral("fifo"),    QStringLiteral("sjf"), QStringLiteral("kubernetes"), QStringLiteral("slurm"),
          QStringLiteral("volcano"), QStringLiteral("kai"), QStringLiteral("kueue"),      QStringLiteral("fgd")};
}

QString find_headroom(const QString& app_dir) {
  for (const QString& candidate : {QDir(app_dir).filePath(QStringLiteral("headroom")),
                                   QDir(app_dir).filePath(QStringLiteral("../apps/headroom"))}) {
    const QFileInfo f(candidate);
    if (f.isFile() && f.isExecutable()) return f.canonicalFilePath();
  }
  return QStandardPaths::findExecutable(QStringLiteral("headroom"));
}

}  // namespace headroom::gui
