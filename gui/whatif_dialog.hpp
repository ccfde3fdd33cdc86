#pragma once

#include <QComboBox>
#include <QDialog>
#include <QDoubleSpinBox>
#include <QLineEdit>
#include <QSpinBox>
#include <vector>

#include "gui/whatif.hpp"

namespace headroom::gui {

// The File > What-if... form: the scenario's name, each pool's node count, the policy and the
// arrival scale, filled from `knobs`. Its widgets are named whatif-name, whatif-pool-<i>,
// whatif-policy and whatif-arrival-scale.
class WhatIfDialog : public QDialog {
  Q_OBJECT
 public:
  WhatIfDialog(const QString& scenario_path, const WhatIfKnobs& knobs, QWidget* parent = nullptr);
  WhatIfKnobs knobs() const;  // as edited

 private:
  WhatIfKnobs base_;
  QLineEdit* name_;
  std::vector<QSpinBox*> nodes_;
  QComboBox* policy_;
  QDoubleSpinBox* scale_;
};

}  // namespace headroom::gui
