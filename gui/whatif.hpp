#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QProcess>
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

// Policies the combo box offers: what `headroom policies --names` lists (the box is editable);
// empty when that program cannot be run.
QStringList known_policies(const QString& headroom);

// The `headroom` binary: $HEADROOM_BIN when set, else next to headroom-gui (or in ../apps/ of a
// build tree), else on PATH; empty when not found.
QString find_headroom(const QString& app_dir);

// One what-if run: writes the edited scenario next to the original (in the temp folder when that
// folder is not writable) as <stem>.whatif.yaml and runs `headroom run` on it in a QProcess into
// <stem>.whatif.h5. Exactly one of finished, failed or cancelled follows a successful start().
class WhatIfRun : public QObject {
  Q_OBJECT
 public:
  explicit WhatIfRun(QString headroom, QObject* parent = nullptr);
  ~WhatIfRun() override;  // kills a run still going

  // False, with error() saying why, when the scenario cannot be edited or written, the binary is
  // missing or a run is already going. A result left by an earlier what-if of the same scenario
  // is removed first.
  bool start(const QString& scenario_path, const std::string& yaml_text, const WhatIfKnobs& knobs);
  // Kills the run; `cancelled` follows once the process is gone and its output (a partial file
  // included) removed. A failed run's partial output is removed too.
  void cancel();

  bool running() const { return process_ != nullptr; }
  const QString& headroom() const { return headroom_; }
  const QString& scenario() const { return scenario_; }  // the edited YAML
  const QString& output() const { return output_; }      // the result file
  const QString& error() const { return error_; }
  qint64 elapsed_ms() const { return clock_.isValid() ? clock_.elapsed() : 0; }

 signals:
  void finished(const QString& result);
  void failed(const QString& message);
  void cancelled();

 private:
  void on_finished(int code, QProcess::ExitStatus status);
  void on_error(QProcess::ProcessError error);
  void remove_output() const;

  QString headroom_, scenario_, output_, error_;
  QProcess* process_ = nullptr;
  bool cancelling_ = false;
  QElapsedTimer clock_;
};

}  // namespace headroom::gui
