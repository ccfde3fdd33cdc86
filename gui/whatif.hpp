#pragma once

#include <QString>
#include <QStringList>
#include <string>
#include <vector>

namespace headroom::gui {

// The main knobs of a scenario YAML that File > What-if... edits: each pool's node count, the
// policy's name and the workload's arrival_scale. The run itself is `headroom run` in a QProcess:
// the GUI links results/ only.
struct WhatIfKnobs {
  std::string name;                                     // scenario name
  std::vector<std::pair<std::string, int>> pool_nodes;  // cluster.pools[i]: name, nodes
  std::string policy;                                   // policy.name
  double arrival_scale = 1.0;                           // workload.arrival_scale (1 when absent)
};

// Reads the knobs; throws std::runtime_error naming what is missing or malformed.
WhatIfKnobs read_knobs(const std::string& yaml_text);

// The scenario with the knobs replaced, as YAML. A changed policy keeps only its name (the old
// policy's parameters may not apply to the new one); a relative workload.trace becomes absolute
// against `base_dir` so that the edited file can live anywhere. Throws std::runtime_error.
std::string apply_knobs(const std::string& yaml_text, const WhatIfKnobs& knobs, const std::string& base_dir);

// Policies the combo box offers (the registry's names at the time of writing; the box is editable).
QStringList known_policies();

// The `headroom` binary: next to headroom-gui (or in ../apps/ of a build tree), else on PATH;
// empty when not found.
QString find_headroom(const QString& app_dir);

}  // namespace headroom::gui
