#include "gui/replay_view.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QHelpEvent>
#include <QMouseEvent>
#include <QPainter>
#include <QSplitter>
#include <QStyle>
#include <QToolTip>
#include <QVBoxLayout>
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "results/format.hpp"

namespace headroom::gui {
namespace {

const QColor kIdle(0xea, 0xea, 0xea);
const QColor kNodeFrame(0xb8, 0xb8, 0xb8);
const QColor kPartialFrame(0xe0, 0x8a, 0x00);
const QColor kHighlight(0x10, 0x10, 0x10);

QColor mix(const QColor& a, const QColor& b, double f) {
  return QColor::fromRgbF(static_cast<float>(a.redF() + (b.redF() - a.redF()) * f),
                          static_cast<float>(a.greenF() + (b.greenF() - a.greenF()) * f),
                          static_cast<float>(a.blueF() + (b.blueF() - a.blueF()) * f));
}

bool timing() { return qEnvironmentVariableIsSet("HEADROOM_GUI_TIMING"); }

}  // namespace

QColor map_tenant_colour(std::size_t rank) {
  // "Other tenants" darker than in the charts, to stand apart from idle cells.
  return rank >= kTopTenants ? tenant_colour(kTopTenants).darker(135) : tenant_colour(rank);
}

ClusterMap::ClusterMap(QWidget* parent) : QWidget(parent) {
  setMinimumSize(320, 200);
  setMouseTracking(false);
  setAttribute(Qt::WA_OpaquePaintEvent);
}

void ClusterMap::set_data(std::shared_ptr<const ReplayData> data) {
  data_ = std::move(data);
  highlight_ = -1;
  occ_ = Occupancy{};
  out_.clear();
  owner_.clear();
  relayout();
  update();
}

void ClusterMap::set_time(Tick t) {
  if (!data_) return;
  QElapsedTimer clock;
  clock.start();
  out_ = nodes_out_at(data_->outages, data_->cluster.nodes, t);
  occ_ = occupancy_at(data_->cluster, t, out_);
  owner_ = node_owner_at(data_->result, data_->cluster.nodes, t);
  query_ms_ = static_cast<double>(clock.nsecsElapsed()) / 1e6;
  update();
}

void ClusterMap::set_highlight(int job) {
  if (job == highlight_) return;
  highlight_ = job;
  update();
}

void ClusterMap::resizeEvent(QResizeEvent* event) {
  QWidget::resizeEvent(event);
  relayout();
}

void ClusterMap::relayout() {
  boxes_.clear();
  if (!data_) return;
  const ClusterIndex& x = data_->cluster;
  const results::RunResult& r = data_->result;
  label_h_ = fontMetrics().height() + 4;
  // Pools, then any nodes past them (an inconsistent file) as one more box.
  for (std::size_t p = 0; p < r.pools.size(); ++p) {
    PoolBox b;
    b.pool = static_cast<int>(p);
    b.first_node = x.pool_first_node[p];
    b.nodes = r.pools[p].nodes;
    b.gpus_per_node = std::max(1, r.pools[p].gpus_per_node);
    b.label = tr("%1 \u2014 %2 nodes \u00d7 %3 %4")
                  .arg(QString::fromStdString(r.pools[p].name))
                  .arg(b.nodes)
                  .arg(r.pools[p].gpus_per_node)
                  .arg(QString::fromStdString(r.pools[p].gpu_type));
    if (b.nodes > 0) boxes_.push_back(b);
  }
  std::int32_t pooled = 0;
  for (const auto& p : r.pools) pooled += std::max(0, p.nodes);
  if (x.nodes > pooled) {
    PoolBox b;
    b.pool = -1;
    b.first_node = pooled;
    b.nodes = x.nodes - pooled;
    b.gpus_per_node = 1;
    for (std::int32_t n = pooled; n < x.nodes; ++n) b.gpus_per_node = std::max(b.gpus_per_node, x.node_gpus[n]);
    b.label = tr("nodes outside the pools");
    boxes_.push_back(b);
  }
  if (boxes_.empty()) return;
  int gpn = 1;
  for (const PoolBox& b : boxes_) gpn = std::max(gpn, b.gpus_per_node);
  const int w = std::max(1, width() - 8), h = std::max(1, height() - 4);
  const auto fits = [&](int node_w, int node_h, int gap) {
    int y = 0;
    for (const PoolBox& b : boxes_) {
      const int per_row = std::max(1, (w + gap) / (node_w + gap));
      const int rows = (b.nodes + per_row - 1) / per_row;
      y += label_h_ + rows * (node_h + gap) + 4;
    }
    return y <= h;
  };
  // Near-square nodes: 8 GPUs as 4 x 2, 4 as 2 x 2, 16 as 4 x 4.
  cols_ = 1;
  while (cols_ * cols_ < gpn) ++cols_;
  rows_ = (gpn + cols_ - 1) / cols_;
  per_node_ = true;
  for (int c = 16; c >= 3; --c) {
    const int gap = c >= 6 ? 4 : 3;
    if (fits(cols_ * c + 2, rows_ * c + 2, gap)) {
      per_node_ = false;
      cell_ = c;
      gap_ = gap;
      node_w_ = cols_ * c + 2;
      node_h_ = rows_ * c + 2;
      break;
    }
  }
  if (per_node_) {
    int s = 1;
    for (s = 16; s > 1; --s)
      if (fits(s, s, s >= 4 ? 1 : 0)) break;
    cell_ = s;
    gap_ = s >= 4 ? 1 : 0;
    node_w_ = node_h_ = s;
  }
  int y = 2;
  for (PoolBox& b : boxes_) {
    b.top = y;
    b.per_row = std::max(1, (w + gap_) / (node_w_ + gap_));
    const int rows = (b.nodes + b.per_row - 1) / b.per_row;
    y += label_h_ + rows * (node_h_ + gap_) + 4;
  }
}

QRect ClusterMap::node_rect(const PoolBox& b, int i) const {
  const int row = i / b.per_row, col = i % b.per_row;
  return {4 + col * (node_w_ + gap_), b.top + label_h_ + row * (node_h_ + gap_), node_w_, node_h_};
}

QColor ClusterMap::job_colour(std::uint32_t job) const {
  const results::JobRecord& j = data_->result.jobs[job];
  return map_tenant_colour(j.tenant < data_->tenant_rank.size() ? data_->tenant_rank[j.tenant] : kTopTenants);
}

void ClusterMap::paintEvent(QPaintEvent*) {
  QElapsedTimer clock;
  clock.start();
  QPainter p(this);
  p.fillRect(rect(), palette().color(QPalette::Base));
  if (!data_ || boxes_.empty()) {
    p.setPen(palette().color(QPalette::Text));
    p.drawText(rect(), Qt::AlignCenter, data_ ? tr("This result has no pools") : tr("Open a result to replay it"));
    return;
  }
  const bool have_occ = occ_.offset.size() == static_cast<std::size_t>(data_->cluster.nodes) + 1;
  const auto& gpus = data_->cluster.node_gpus;
  for (const PoolBox& b : boxes_) {
    p.setPen(palette().color(QPalette::Text));
    p.drawText(QRect(4, b.top, width() - 8, label_h_), Qt::AlignLeft | Qt::AlignVCenter, b.label);
    for (int i = 0; i < b.nodes; ++i) {
      const int node = b.first_node + i;
      const QRect r = node_rect(b, i);
      if (r.top() > height()) break;
      const std::uint32_t u0 = have_occ ? occ_.offset[node] : 0, u1 = have_occ ? occ_.offset[node + 1] : 0;
      const int cap = std::max(1, gpus[node]);
      const int used = have_occ ? occ_.used[node] : 0;
      bool lit = false;
      for (std::uint32_t k = u0; k < u1; ++k) lit = lit || static_cast<int>(occ_.uses[k].job) == highlight_;
      const int out_kind = static_cast<std::size_t>(node) < out_.size() ? out_[static_cast<std::size_t>(node)] : 0;
      // Cordoned but still running jobs: drawn with its jobs, framed and its free GPUs tinted in
      // the outage's colour (those GPUs are down: not placeable).
      const QColor drain = out_kind > 0 ? outage_colour(static_cast<OutageKind>(out_kind - 1)) : QColor();
      const bool draining = out_kind > 0 && used > 0;
      if (out_kind > 0 && used == 0) {
        // Out of service: the outage's colour, crossed out.
        const QColor& c = drain;
        p.fillRect(r, mix(c, Qt::white, 0.55));
        p.setPen(QPen(c, r.width() >= 6 ? 1.5 : 1.0));
        if (r.width() >= 4) {
          p.drawLine(r.topLeft(), r.bottomRight());
          p.drawLine(r.topRight(), r.bottomLeft());
        }
        continue;
      }
      const std::int32_t owner =
          static_cast<std::size_t>(node) < owner_.size() ? owner_[static_cast<std::size_t>(node)] : -1;
      const QColor idle = owner >= 0 ? mix(kIdle, owner_colour(owner), 0.25) : kIdle;
      if (per_node_) {
        QColor c = idle;
        if (used > 0) {
          // The tenant holding most of the node.
          std::uint32_t best = occ_.uses[u0].job;
          std::int32_t most = -1;
          for (std::uint32_t k = u0; k < u1; ++k)
            if (occ_.uses[k].gpus > most) {
              most = occ_.uses[k].gpus;
              best = occ_.uses[k].job;
            }
          c = mix(draining ? mix(drain, Qt::white, 0.55) : idle, job_colour(best),
                  0.3 + 0.7 * static_cast<double>(used) / cap);
        }
        p.fillRect(r, c);
        if (draining && r.width() >= 4) {
          p.setPen(QPen(drain, 1));
          p.setBrush(Qt::NoBrush);
          p.drawRect(r.adjusted(0, 0, -1, -1));
        }
        if (lit) {
          p.setPen(QPen(kHighlight, 2));
          p.drawRect(r.adjusted(-1, -1, 0, 0));
        }
        continue;
      }
      p.fillRect(r, draining                 ? drain
                    : owner >= 0             ? owner_colour(owner)
                    : used > 0 && used < cap ? kPartialFrame
                                             : kNodeFrame);
      int slot = 0;
      const auto cell_rect = [&](int s) {
        return QRect(r.left() + 1 + (s % cols_) * cell_, r.top() + 1 + (s / cols_) * cell_, cell_ - 1, cell_ - 1);
      };
      for (std::uint32_t k = u0; k < u1 && slot < cap; ++k) {
        const QColor c = job_colour(occ_.uses[k].job);
        const int n = std::max(1, occ_.uses[k].gpus);
        for (int g = 0; g < n && slot < cap; ++g, ++slot) p.fillRect(cell_rect(slot), c);
      }
      for (; slot < cap; ++slot) p.fillRect(cell_rect(slot), draining ? mix(drain, Qt::white, 0.55) : idle);
      if (lit) {
        // Outline the highlighted job's cells.
        p.setPen(QPen(kHighlight, 2));
        p.setBrush(Qt::NoBrush);
        int s = 0;
        for (std::uint32_t k = u0; k < u1 && s < cap; ++k) {
          const int n = std::max(1, occ_.uses[k].gpus);
          if (static_cast<int>(occ_.uses[k].job) == highlight_) {
            const QRect a = cell_rect(s), z = cell_rect(std::min(cap, s + n) - 1);
            if (a.top() == z.top())
              p.drawRect(a.united(z).adjusted(0, 0, -1, -1));
            else
              p.drawRect(r.adjusted(1, 1, -2, -2));
          }
          s += n;
        }
      }
    }
  }
  paint_ms_ = static_cast<double>(clock.nsecsElapsed()) / 1e6;
  if (timing())
    std::fprintf(stderr, "headroom-gui: cluster map %d nodes (%s): query %.2f ms, paint %.2f ms\n",
                 data_->cluster.nodes, per_node_ ? "one cell per node" : "one cell per GPU", query_ms_, paint_ms_);
}

int ClusterMap::node_at(QPoint pt, const PoolBox** box) const {
  for (const PoolBox& b : boxes_) {
    const int top = b.top + label_h_;
    if (pt.y() < top || pt.x() < 4) continue;
    const int col = (pt.x() - 4) / (node_w_ + gap_), row = (pt.y() - top) / (node_h_ + gap_);
    if (col >= b.per_row) continue;
    const int i = row * b.per_row + col;
    if (i >= b.nodes) continue;
    if (!node_rect(b, i).contains(pt)) continue;
    *box = &b;
    return b.first_node + i;
  }
  return -1;
}

int ClusterMap::job_at(QPoint pt) const {
  const PoolBox* b = nullptr;
  const int node = node_at(pt, &b);
  if (node < 0 || occ_.offset.size() <= static_cast<std::size_t>(node) + 1) return -1;
  const std::uint32_t u0 = occ_.offset[node], u1 = occ_.offset[node + 1];
  if (u0 == u1) return -1;
  if (per_node_) {
    std::uint32_t best = occ_.uses[u0].job;
    std::int32_t most = -1;
    for (std::uint32_t k = u0; k < u1; ++k)
      if (occ_.uses[k].gpus > most) {
        most = occ_.uses[k].gpus;
        best = occ_.uses[k].job;
      }
    return static_cast<int>(best);
  }
  const QRect r = node_rect(*b, node - b->first_node);
  const int col = std::clamp((pt.x() - r.left() - 1) / cell_, 0, cols_ - 1);
  const int row = std::clamp((pt.y() - r.top() - 1) / cell_, 0, rows_ - 1);
  const int slot = row * cols_ + col;
  int s = 0;
  for (std::uint32_t k = u0; k < u1; ++k) {
    s += std::max(1, occ_.uses[k].gpus);
    if (slot < s) return static_cast<int>(occ_.uses[k].job);
  }
  return -1;
}

void ClusterMap::mousePressEvent(QMouseEvent* event) {
  if (event->button() == Qt::LeftButton) emit job_clicked(job_at(event->position().toPoint()));
}

void ClusterMap::mouseDoubleClickEvent(QMouseEvent* event) {
  const int job = job_at(event->position().toPoint());
  if (job >= 0) emit job_activated(job);
}

bool ClusterMap::event(QEvent* event) {
  if (event->type() == QEvent::ToolTip && data_) {
    auto* help = static_cast<QHelpEvent*>(event);
    const PoolBox* b = nullptr;
    const int node = node_at(help->pos(), &b);
    if (node < 0) {
      QToolTip::hideText();
      event->ignore();
      return true;
    }
    QString text = tr("<b>node %1</b> (%2): %3 of %4 GPUs in use")
                       .arg(node)
                       .arg(b->label.section(QStringLiteral(" \u2014"), 0, 0))
                       .arg(occ_.used.empty() ? 0 : occ_.used[node])
                       .arg(data_->cluster.node_gpus[node]);
    const int job = job_at(help->pos());
    if (job >= 0) {
      const results::JobRecord& j = data_->result.jobs[static_cast<std::size_t>(job)];
      Tick start = j.start;
      const ClusterIndex& x = data_->cluster;
      for (std::uint32_t k = x.run_offset[job]; k < x.run_offset[job + 1] && x.runs[k].first <= occ_.time; ++k)
        start = x.runs[k].first;
      text += tr("<br>job <b>%1</b> of %2, %3 GPUs, started %4 (ran %5 so far)")
                  .arg(j.trace_id)
                  .arg(data_->tenant_name(j.tenant))
                  .arg(j.gpus)
                  .arg(format_when(*data_, start - data_->origin), format_duration(occ_.time - start));
    }
    QToolTip::showText(help->globalPos(), text, this);
    return true;
  }
  return QWidget::event(event);
}

// --- ReplayView ---

namespace {
struct Speed {
  const char* name;
  Tick per_second;
};
constexpr Speed kSpeeds[] = {{"1 min / s", 60'000},
                             {"10 min / s", 600'000},
                             {"1 hour / s", 3'600'000},
                             {"6 hours / s", 21'600'000},
                             {"1 day / s", 86'400'000}};
}  // namespace

ReplayView::ReplayView(QWidget* parent) : View(parent) {
  map_ = new ClusterMap;
  queue_ = new QueueModel(this);
  queue_view_ = new QTableView;
  queue_view_->setModel(queue_);
  queue_view_->setSelectionBehavior(QAbstractItemView::SelectRows);
  queue_view_->setSelectionMode(QAbstractItemView::SingleSelection);
  queue_view_->setAlternatingRowColors(true);
  queue_view_->verticalHeader()->hide();
  queue_view_->verticalHeader()->setDefaultSectionSize(queue_view_->fontMetrics().height() + 6);
  // The policy's words in full (issue #36: "Priority: one or mo…"): the column takes its text's
  // width and the table scrolls sideways; hovering shows it too.
  queue_view_->horizontalHeader()->setStretchLastSection(false);
  queue_view_->horizontalHeader()->setSectionResizeMode(QueueModel::Reason, QHeaderView::ResizeToContents);
  queue_view_->horizontalHeader()->setResizeContentsPrecision(200);
  queue_view_->setTextElideMode(Qt::ElideNone);
  queue_view_->setWordWrap(false);

  back_ = new QToolButton;
  back_->setIcon(style()->standardIcon(QStyle::SP_MediaSeekBackward));
  back_->setToolTip(tr("Step back (one second of play at this speed)"));
  play_ = new QToolButton;
  play_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  play_->setToolTip(tr("Play / pause (Space)"));
  play_->setShortcut(Qt::Key_Space);
  forward_ = new QToolButton;
  forward_->setIcon(style()->standardIcon(QStyle::SP_MediaSeekForward));
  forward_->setToolTip(tr("Step forward (one second of play at this speed)"));
  speed_ = new QComboBox;
  for (const Speed& s : kSpeeds) speed_->addItem(tr(s.name));
  speed_->setCurrentIndex(2);
  speed_->setToolTip(tr("Simulated time per second of wall time"));
  slider_ = new QSlider(Qt::Horizontal);
  slider_->setRange(0, 10000);
  back_->setObjectName(QStringLiteral("replay-back"));
  play_->setObjectName(QStringLiteral("replay-play"));
  forward_->setObjectName(QStringLiteral("replay-forward"));
  speed_->setObjectName(QStringLiteral("replay-speed"));
  slider_->setObjectName(QStringLiteral("replay-slider"));
  clock_ = new QLabel;
  clock_->setObjectName(QStringLiteral("replay-clock"));
  clock_->setMinimumWidth(clock_->fontMetrics().horizontalAdvance(QStringLiteral("Cursor 13d 23:59:59 ")));
  auto* controls = new QHBoxLayout;
  controls->addWidget(back_);
  controls->addWidget(play_);
  controls->addWidget(forward_);
  controls->addSpacing(8);
  controls->addWidget(new QLabel(tr("Speed")));
  controls->addWidget(speed_);
  controls->addSpacing(8);
  controls->addWidget(slider_, 1);
  controls->addWidget(clock_);

  stats_ = new QLabel;
  stats_->setTextFormat(Qt::RichText);
  legend_ = new QLabel;
  legend_->setTextFormat(Qt::RichText);
  legend_->setWordWrap(true);
  selected_ = new QLabel;
  selected_->setTextFormat(Qt::RichText);
  selected_->setWordWrap(true);
  auto* left = new QWidget;
  auto* ll = new QVBoxLayout(left);
  ll->setContentsMargins(0, 0, 0, 0);
  ll->addWidget(stats_);
  ll->addWidget(legend_);
  ll->addWidget(map_, 1);
  ll->addWidget(selected_);
  queue_title_ = new QLabel;
  queue_title_->setTextFormat(Qt::RichText);
  queue_title_->setWordWrap(true);
  auto* right = new QWidget;
  auto* rl = new QVBoxLayout(right);
  rl->setContentsMargins(0, 0, 0, 0);
  rl->addWidget(queue_title_);
  rl->addWidget(queue_view_, 1);
  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(left);
  split->addWidget(right);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({920, 620});
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(controls);
  layout->addWidget(split, 1);

  timer_.setInterval(40);
  connect(&timer_, &QTimer::timeout, this, &ReplayView::tick);
  connect(play_, &QToolButton::clicked, this, [this] { play(!timer_.isActive()); });
  connect(back_, &QToolButton::clicked, this, [this] { step(-1); });
  connect(forward_, &QToolButton::clicked, this, [this] { step(1); });
  connect(slider_, &QSlider::valueChanged, this, [this](int v) {
    if (!data_ || slider_->signalsBlocked()) return;
    const Tick a = data_->result.sim_start, b = std::max(data_->result.sim_end, a);
    set_time(a + static_cast<Tick>(std::llround(static_cast<double>(b - a) * v / 10000.0)), true);
  });
  connect(map_, &ClusterMap::job_clicked, this, [this](int job) {
    map_->set_highlight(job);
    if (job < 0 || !data_) {
      selected_->setText(tr("Click a cell to select its job; double-click to open it in the Jobs tab."));
      return;
    }
    const results::JobRecord& j = data_->result.jobs[static_cast<std::size_t>(job)];
    selected_->setText(tr("<b>Job %1</b> \u2014 %2, %3 GPUs, submitted %4, first start %5, %6. "
                          "Double-click to open it in the Jobs tab.")
                           .arg(j.trace_id)
                           .arg(data_->tenant_name(j.tenant))
                           .arg(j.gpus)
                           .arg(format_when(*data_, j.submit - data_->origin),
                                j.start >= 0 ? format_when(*data_, j.start - data_->origin) : tr("never"),
                                state_name(j.state)));
  });
  connect(map_, &ClusterMap::job_activated, this, &ReplayView::open_job);
  connect(queue_view_, &QTableView::doubleClicked, this, [this](const QModelIndex& i) {
    const int job = queue_->job_at(i.row());
    if (job >= 0) emit open_job(job);
  });
  set_data(nullptr);
}

Tick ReplayView::speed() const {
  const int i = std::clamp(speed_->currentIndex(), 0, static_cast<int>(std::size(kSpeeds)) - 1);
  return kSpeeds[i].per_second;
}

void ReplayView::set_data(std::shared_ptr<const ReplayData> data) {
  play(false);
  data_ = std::move(data);
  map_->set_data(data_);
  queue_->set_data(data_);
  for (QWidget* w : {static_cast<QWidget*>(play_), static_cast<QWidget*>(back_), static_cast<QWidget*>(forward_),
                     static_cast<QWidget*>(slider_), static_cast<QWidget*>(speed_)})
    w->setEnabled(data_ != nullptr);
  QString legend;
  if (data_) {
    for (std::size_t i = 0; i < std::min(kTopTenants, data_->tenants.size()); ++i)
      legend += QStringLiteral("<span style='color:%1'>\u25a0</span>&nbsp;%2 &nbsp; ")
                    .arg(tenant_colour(i).name(), data_->tenants[i].name.toHtmlEscaped());
    if (data_->tenants.size() > kTopTenants)
      legend += QStringLiteral("<span style='color:%1'>\u25a0</span>&nbsp;%2 &nbsp; ")
                    .arg(map_tenant_colour(kTopTenants).name(), tr("other tenants"));
    legend += QStringLiteral("<span style='color:%1'>\u25a0</span>&nbsp;%2 &nbsp; ").arg(kIdle.name(), tr("idle GPU"));
    if (data_->result.partitions.empty()) {
      legend += QStringLiteral("<span style='color:%1'>\u25a1</span>&nbsp;%2")
                    .arg(kPartialFrame.name(), tr("amber: partly used node"));
    } else {
      // A split site: each node framed in the colour of the system that owns it at the cursor.
      for (std::size_t s = 0; s < data_->result.partitions.size(); ++s)
        legend +=
            QStringLiteral("%1<span style='color:%2'>\u25a1</span>&nbsp;%3")
                .arg(s == 0 ? QString() : QStringLiteral(" &nbsp; "), owner_colour(static_cast<std::int32_t>(s)).name(),
                     tr("owned by %1").arg(QString::fromStdString(data_->result.partitions[s].name).toHtmlEscaped()));
    }
    // The kinds of outage this run had: their nodes are crossed out while out of service.
    bool kinds[kOutageKinds] = {};
    for (const NodeOutage& o : data_->outages) kinds[static_cast<int>(o.kind)] = true;
    for (int k = 0; k < kOutageKinds; ++k)
      if (kinds[k])
        legend +=
            QStringLiteral(" &nbsp; <span style='color:%1'>\u2612</span>&nbsp;%2")
                .arg(outage_colour(static_cast<OutageKind>(k)).name(),
                     static_cast<OutageKind>(k) == OutageKind::Drain
                         ? tr("%1 (node out; framed while its jobs finish)").arg(outage_kind_name(OutageKind::Drain))
                         : tr("%1 (node out)").arg(outage_kind_name(static_cast<OutageKind>(k))));
  }
  legend_->setText(legend);
  selected_->setText(tr("Click a cell to select its job; double-click to open it in the Jobs tab."));
  time_ = data_ ? data_->result.sim_start : 0;
  set_time(time_, false);
  if (data_ && data_->cluster.slices.empty())
    stats_->setText(
        tr("<b>This file has no /placements</b> (written before they were recorded): the map "
           "stays empty; the queue is rebuilt from /jobs."));
}

void ReplayView::set_cursor(double x_days) {
  if (!data_ || std::isnan(x_days)) return;
  const Tick t = data_->origin + static_cast<Tick>(std::llround(x_days * static_cast<double>(kTicksPerDay)));
  if (t == time_) return;
  set_time(t, false);
}

void ReplayView::set_time(Tick t, bool echo) {
  if (data_) t = std::clamp(t, data_->result.sim_start, std::max(data_->result.sim_start, data_->result.sim_end));
  time_ = t;
  map_->set_time(t);
  QElapsedTimer clock;
  clock.start();
  queue_->set_time(t);
  if (timing() && data_)
    std::fprintf(stderr, "headroom-gui: queue at cursor: %d pending of %zu jobs in %.2f ms\n", queue_->rowCount(),
                 data_->result.jobs.size(), static_cast<double>(clock.nsecsElapsed()) / 1e6);
  update_labels();
  if (echo && data_) emit cursor_moved(data_->x_days(t));
}

void ReplayView::update_labels() {
  if (!data_) {
    clock_->setText(QString());
    stats_->setText(tr("Open a result to replay it."));
    queue_title_->setText(tr("<b>Queue at the cursor</b>"));
    return;
  }
  const Tick a = data_->result.sim_start, b = std::max(data_->result.sim_end, a + 1);
  {
    const QSignalBlocker block(slider_);
    slider_->setValue(static_cast<int>(std::llround(10000.0 * static_cast<double>(time_ - a) / (b - a))));
  }
  clock_->setText(tr("Cursor %1").arg(format_when(*data_, time_ - data_->origin)));
  const Occupancy& o = map_->occupancy();
  if (!data_->cluster.slices.empty()) {
    QString text = tr("<b>%1 of %2 GPUs in use</b> &nbsp; nodes: %3 full, <span style='color:%4'><b>%5 partly "
                      "used</b></span>, %6 idle")
                       .arg(QString::fromStdString(results::thousands(o.used_gpus)))
                       .arg(QString::fromStdString(results::thousands(data_->result.total_gpus)))
                       .arg(QString::fromStdString(results::thousands(o.full_nodes)))
                       .arg(kPartialFrame.darker(120).name())
                       .arg(QString::fromStdString(results::thousands(o.partial_nodes)))
                       .arg(QString::fromStdString(results::thousands(o.idle_nodes)));
    const QString out_colour = outage_colour(OutageKind::Outage).name();
    if (o.draining_nodes > 0)
      text += tr(", <span style='color:%1'><b>%2 draining</b></span> (cordoned, jobs still running)")
                  .arg(outage_colour(OutageKind::Drain).name(),
                       QString::fromStdString(results::thousands(o.draining_nodes)));
    if (o.out_nodes > 0)
      text += tr(", <span style='color:%1'><b>%2 out of service</b></span>")
                  .arg(out_colour, QString::fromStdString(results::thousands(o.out_nodes)));
    if (o.down_gpus > 0)
      text += tr(" &nbsp; <span style='color:%1'><b>%2 GPUs down</b></span>")
                  .arg(out_colour, QString::fromStdString(results::thousands(o.down_gpus)));
    if (map_->per_node()) text += tr(" &nbsp; (one cell per node, darker = fuller)");
    stats_->setText(text);
  }
  // The head of the queue and why it waits, in full (the table's last column is often cut off).
  QString head;
  if (!queue_->entries().empty()) {
    const QueueEntry& q = queue_->entries().front();
    const auto& reasons = data_->result.reasons;
    const QString words =
        q.reason < reasons.size() && !reasons[q.reason].empty()
            ? QString::fromStdString(reasons[q.reason]).toHtmlEscaped()
            : tr("%1 gives no reason").arg(QString::fromStdString(data_->result.policy).toHtmlEscaped());
    head = tr("<br>Head of line: job %1, %2").arg(data_->result.jobs[q.job].trace_id).arg(why_text(q.code, words));
  }
  queue_title_->setText(tr("<b>Queue at the cursor: %1 pending</b> (longest wait first; double-click opens the job)%2")
                            .arg(queue_->rowCount())
                            .arg(head));
  queue_view_->resizeColumnToContents(QueueModel::Tenant);
}

void ReplayView::play(bool on) {
  if (on && data_) {
    if (time_ >= data_->result.sim_end) set_time(data_->result.sim_start, true);
    wall_.start();
    carry_ms_ = 0;
    timer_.start();
    play_->setIcon(style()->standardIcon(QStyle::SP_MediaPause));
  } else {
    timer_.stop();
    play_->setIcon(style()->standardIcon(QStyle::SP_MediaPlay));
  }
}

void ReplayView::tick() { advance(wall_.restart()); }

void ReplayView::advance(qint64 wall_ms) {
  if (!data_) return play(false);
  const double ms = static_cast<double>(wall_ms) + carry_ms_;
  const double advance = static_cast<double>(speed()) * ms / 1000.0;
  const auto whole = static_cast<Tick>(advance);
  carry_ms_ = whole > 0 ? 0 : ms;
  if (whole == 0) return;
  const Tick next = time_ + whole;
  set_time(next, true);
  if (next >= data_->result.sim_end) play(false);
}

void ReplayView::step(int direction) {
  if (!data_) return;
  set_time(time_ + direction * speed(), true);
}

}  // namespace headroom::gui
