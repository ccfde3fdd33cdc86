#include "gui/whatif.hpp"

#include <yaml-cpp/yaml.h>

#include <QDir>
#include <QFile>
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

QStringList known_policies(const QString& headroom) {
  // The registry lives in the headroom program (the GUI reads results only): it lists its
  // policies, one a line.
  if (headroom.isEmpty()) return {};
  QProcess process;
  process.start(headroom, {QStringLiteral("policies"), QStringLiteral("--names")});
  if (!process.waitForFinished(5000) || process.exitStatus() != QProcess::NormalExit || process.exitCode() != 0) {
    process.kill();
    return {};
  }
  QStringList names;
  for (const QString& line : QString::fromUtf8(process.readAllStandardOutput()).split(QLatin1Char('\n')))
    if (!line.trimmed().isEmpty()) names << line.trimmed();
  return names;
}

QString find_headroom(const QString& app_dir) {
  if (const QString env = qEnvironmentVariable("HEADROOM_BIN"); !env.isEmpty()) {
    const QFileInfo f(env);
    return f.isFile() && f.isExecutable() ? f.absoluteFilePath() : QString();
  }
  for (const QString& candidate : {QDir(app_dir).filePath(QStringLiteral("headroom")),
                                   QDir(app_dir).filePath(QStringLiteral("../apps/headroom"))}) {
    const QFileInfo f(candidate);
    if (f.isFile() && f.isExecutable()) return f.canonicalFilePath();
  }
  return QStandardPaths::findExecutable(QStringLiteral("headroom"));
}

WhatIfRun::WhatIfRun(QString headroom, QObject* parent) : QObject(parent), headroom_(std::move(headroom)) {}

WhatIfRun::~WhatIfRun() {
  if (process_ == nullptr) return;
  process_->disconnect(this);
  process_->kill();
  process_->waitForFinished(5000);
  remove_output();
}

bool WhatIfRun::start(const QString& scenario_path, const std::string& yaml_text, const WhatIfKnobs& knobs) {
  error_.clear();
  if (process_ != nullptr) {
    error_ = tr("A what-if run is already going");
    return false;
  }
  const QFileInfo source(scenario_path);
  std::string edited;
  try {
    edited = apply_knobs(yaml_text, knobs, source.absolutePath().toStdString());
  } catch (const std::exception& e) {
    error_ = QString::fromStdString(e.what());
    return false;
  }
  QDir dir(source.absolutePath());
  if (!QFileInfo(dir.path()).isWritable()) dir = QDir(QDir::tempPath());
  const QString stem = source.completeBaseName() + QStringLiteral(".whatif");
  scenario_ = dir.filePath(stem + QStringLiteral(".yaml"));
  output_ = dir.filePath(stem + QStringLiteral(".h5"));
  QFile out(scenario_);
  if (!out.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text) ||
      out.write(edited.data(), static_cast<qint64>(edited.size())) != static_cast<qint64>(edited.size())) {
    error_ = tr("Cannot write %1").arg(scenario_);
    return false;
  }
  out.close();
  if (headroom_.isEmpty()) {
    error_ = tr("Cannot find the headroom program next to headroom-gui or on PATH. The edited scenario is in "
                "%1: run it with headroom run.")
                 .arg(scenario_);
    return false;
  }
  remove_output();
  cancelling_ = false;
  process_ = new QProcess(this);
  process_->setProcessChannelMode(QProcess::MergedChannels);
  connect(process_, &QProcess::finished, this, &WhatIfRun::on_finished);
  connect(process_, &QProcess::errorOccurred, this, &WhatIfRun::on_error);
  clock_.start();
  process_->start(headroom_, {QStringLiteral("run"), scenario_, QStringLiteral("-o"), output_});
  return true;
}

void WhatIfRun::cancel() {
  if (process_ == nullptr || cancelling_) return;
  cancelling_ = true;
  process_->kill();
}

void WhatIfRun::on_error(QProcess::ProcessError error) {
  // A process that never started sends no `finished`.
  if (error != QProcess::FailedToStart || process_ == nullptr) return;
  const QString message = tr("Cannot start %1: %2").arg(headroom_, process_->errorString());
  process_->deleteLater();
  process_ = nullptr;
  if (cancelling_) {
    emit cancelled();
    return;
  }
  emit failed(message);
}

void WhatIfRun::on_finished(int code, QProcess::ExitStatus status) {
  if (process_ == nullptr) return;
  const QString log = QString::fromLocal8Bit(process_->readAll());
  process_->deleteLater();
  process_ = nullptr;
  if (cancelling_) {
    remove_output();
    emit cancelled();
  } else if (status == QProcess::NormalExit && code == 0 && QFileInfo::exists(output_)) {
    emit finished(output_);
  } else {
    remove_output();  // a crashed run may leave a partial file
    emit failed(status == QProcess::NormalExit
                    ? tr("headroom run stopped (exit %1):\n%2").arg(code).arg(log.right(2000))
                    : tr("headroom run crashed:\n%1").arg(log.right(2000)));
  }
}

void WhatIfRun::remove_output() const {
  if (output_.isEmpty()) return;
  QFile::remove(output_);
  // write_hdf5 writes <output>.tmp.<pid> and renames it when complete; a killed run may leave one.
  const QFileInfo out(output_);
  QDir dir = out.absoluteDir();
  for (const QString& name : dir.entryList({out.fileName() + QStringLiteral(".tmp.*")}, QDir::Files))
    QFile::remove(dir.filePath(name));
}

}  // namespace headroom::gui
