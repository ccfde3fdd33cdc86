#include "gui/whatif_dialog.hpp"

#include <QCoreApplication>
#include <QDialogButtonBox>
#include <QFileInfo>
#include <QFormLayout>
#include <QPushButton>

namespace headroom::gui {

WhatIfDialog::WhatIfDialog(const QString& scenario_path, const WhatIfKnobs& knobs, QWidget* parent)
    : QDialog(parent), base_(knobs) {
  setWindowTitle(tr("What-if: %1").arg(QFileInfo(scenario_path).fileName()));
  auto* form = new QFormLayout(this);
  name_ = new QLineEdit(QString::fromStdString(knobs.name + "-whatif"));
  name_->setObjectName(QStringLiteral("whatif-name"));
  form->addRow(tr("Scenario name"), name_);
  for (std::size_t i = 0; i < knobs.pool_nodes.size(); ++i) {
    auto* box = new QSpinBox;
    box->setObjectName(QStringLiteral("whatif-pool-%1").arg(i));
    box->setRange(0, 1'000'000);
    box->setValue(knobs.pool_nodes[i].second);
    box->setSuffix(tr(" nodes"));
    form->addRow(tr("Pool %1").arg(QString::fromStdString(knobs.pool_nodes[i].first)), box);
    nodes_.push_back(box);
  }
  policy_ = new QComboBox;
  policy_->setObjectName(QStringLiteral("whatif-policy"));
  policy_->setEditable(true);
  policy_->addItems(known_policies(find_headroom(QCoreApplication::applicationDirPath())));
  policy_->setCurrentText(QString::fromStdString(knobs.policy));
  form->addRow(tr("Policy"), policy_);
  scale_ = new QDoubleSpinBox;
  scale_->setObjectName(QStringLiteral("whatif-arrival-scale"));
  scale_->setRange(0.01, 100);
  scale_->setDecimals(2);
  scale_->setSingleStep(0.1);
  scale_->setValue(knobs.arrival_scale);
  scale_->setToolTip(tr("workload.arrival_scale: above 1 the jobs arrive faster (more load)"));
  form->addRow(tr("Arrival scale"), scale_);
  auto* buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel);
  buttons->button(QDialogButtonBox::Ok)->setText(tr("Run"));
  form->addRow(buttons);
  connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
  connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
}

WhatIfKnobs WhatIfDialog::knobs() const {
  WhatIfKnobs k = base_;
  k.name = name_->text().trimmed().toStdString();
  for (std::size_t i = 0; i < nodes_.size(); ++i) k.pool_nodes[i].second = nodes_[i]->value();
  k.policy = policy_->currentText().trimmed().toStdString();
  k.arrival_scale = scale_->value();
  return k;
}

}  // namespace headroom::gui
