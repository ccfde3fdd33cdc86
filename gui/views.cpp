#include "gui/views.hpp"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLocale>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>
#include <algorithm>
#include <cmath>

namespace headroom::gui {
namespace {

QString number(double v) { return QLocale(QLocale::English).toString(static_cast<qint64>(std::llround(v))); }

QString plural(std::int64_t n, const QString& one, const QString& many) {
  return QStringLiteral("%1 %2").arg(number(static_cast<double>(n)), n == 1 ? one : many);
}

QLabel* hint_label(const QString& text) {
  auto* l = new QLabel(text);
  l->setWordWrap(true);
  QPalette p = l->palette();
  p.setColor(QPalette::WindowText, QColor(0x55, 0x55, 0x55));
  l->setPalette(p);
  return l;
}

void setup_table(QTableView* t) {
  t->setSelectionBehavior(QAbstractItemView::SelectRows);
  t->setSelectionMode(QAbstractItemView::SingleSelection);
  t->setAlternatingRowColors(true);
  t->verticalHeader()->hide();
  t->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
  t->verticalHeader()->setDefaultSectionSize(t->fontMetrics().height() + 6);
  t->horizontalHeader()->setHighlightSections(false);
  t->setWordWrap(false);
}

std::vector<CurveChart::Source> tenant_sources(const Pyramid& p) {
  std::vector<CurveChart::Source> out;
  if (p.empty()) return out;
  for (std::size_t c = 0; c < p.full().curves.size(); ++c)
    out.push_back({&p, c, p.full().curves[c].name, tenant_colour(c), Qt::SolidLine});
  return out;
}

// The run's calendar origin (dates on the time axis when the trace gives one) and its outages.
void time_base(CurveChart* c, const ReplayData& d, bool markers = true) {
  const std::int64_t unix_ms = d.result.unix_start >= 0 ? d.result.unix_start * 1000 + d.origin : -1;
  c->set_time_base(unix_ms, c->calendar_wanted());
  c->set_markers(markers ? d.markers : std::vector<Marker>{}, d.origin);
}

}  // namespace

void View::track(ChartView* view) {
  connect(view, &ChartView::activated, this, [this](ChartView* v) { last_chart_ = v; });
}

void TimeCharts::add(CurveChart* chart) {
  charts_.push_back(chart);
  connect(chart, &ChartView::range_requested, this, &TimeCharts::set_range);
  connect(chart, &ChartView::reset_requested, this, &TimeCharts::reset);
  connect(chart, &ChartView::cursor_requested, this, &TimeCharts::set_cursor);
}

void TimeCharts::reset() {
  double lo = 0, hi = 0;
  bool any = false;
  for (CurveChart* c : charts_) {
    if (c->sources().empty()) continue;
    const auto [a, b] = c->full_range();
    lo = any ? std::min(lo, a) : a;
    hi = any ? std::max(hi, b) : b;
    any = true;
  }
  for (CurveChart* c : charts_) c->show_range(lo, hi);
}

void TimeCharts::set_range(double x0, double x1) {
  double lo = 0, hi = 0;
  bool any = false;
  for (CurveChart* c : charts_) {
    if (c->sources().empty()) continue;
    const auto [a, b] = c->full_range();
    lo = any ? std::min(lo, a) : a;
    hi = any ? std::max(hi, b) : b;
    any = true;
  }
  if (!any) return;
  const double min_span = 1.0 / 1440;  // one minute
  double span = std::clamp(x1 - x0, min_span, std::max(hi - lo, min_span));
  if (x0 < lo) x0 = lo;
  if (x0 + span > hi) x0 = std::max(lo, hi - span);
  for (CurveChart* c : charts_) c->show_range(x0, x0 + span);
}

void TimeCharts::set_cursor(double x) {
  cursor_ = x;
  for (CurveChart* c : charts_) c->set_cursor(x);
  emit cursor_changed(x);
}

TimelineView::TimelineView(QWidget* parent) : View(parent), sync_(new TimeCharts(this)) {
  by_tenant_ = new CurveChart(tr("GPUs in use by tenant"), tr("GPUs"));
  by_pool_ = new CurveChart(tr("GPUs in use and up, by pool"), tr("GPUs"));
  pending_jobs_ = new CurveChart(tr("Pending jobs by tenant"), tr("jobs"));
  pending_gpus_ = new CurveChart(tr("Pending GPUs by tenant"), tr("GPUs requested"));
  pending_reason_ = new CurveChart(tr("Pending jobs by why they wait"), tr("jobs"));
  fidelity_ = new CurveChart(tr("GPUs in use: recorded (trace) vs simulated"), tr("GPUs"));
  owners_ = new CurveChart(tr("GPUs owned by each system (node moves)"), tr("GPUs"));
  parts_used_ = new CurveChart(tr("GPUs in use by each system (solid) and GPUs it owns (dashed)"), tr("GPUs"));
  parts_pending_jobs_ = new CurveChart(tr("Pending jobs by system"), tr("jobs"));
  parts_pending_gpus_ = new CurveChart(tr("Pending GPUs by system"), tr("GPUs requested"));
  readout_ = new QLabel;
  readout_->setTextFormat(Qt::RichText);
  // The charts keep a readable height (axis labels, legends) and the page scrolls when the window
  // is smaller than that (issue #36: at 1280x720 the top charts were squeezed to ~40 px).
  auto* page = new QWidget;
  auto* grid = new QGridLayout(page);
  grid->setContentsMargins(0, 0, 0, 0);
  grid->setSpacing(6);
  // A run with partitions shows its per-system charts right below the site's (what a platform
  // team comes for: one system's idle GPUs against the other's backlog); hidden rows take no room.
  grid->addWidget(by_tenant_, 0, 0);
  grid->addWidget(by_pool_, 0, 1);
  grid->addWidget(parts_used_, 1, 0, 1, 2);
  grid->addWidget(parts_pending_jobs_, 2, 0);
  grid->addWidget(parts_pending_gpus_, 2, 1);
  for (CurveChart* c : {parts_used_, parts_pending_jobs_, parts_pending_gpus_}) c->hide();
  grid->addWidget(pending_jobs_, 3, 0);
  grid->addWidget(pending_gpus_, 3, 1);
  grid->addWidget(pending_reason_, 4, 0, 1, 2);
  pending_reason_->hide();
  grid->addWidget(fidelity_, 5, 0, 1, 2);
  fidelity_->hide();
  grid->addWidget(owners_, 6, 0, 1, 2);
  owners_->hide();
  for (CurveChart* c : {by_tenant_, by_pool_, pending_jobs_, pending_gpus_}) c->setMinimumHeight(kChartMinHeight);
  for (CurveChart* c : {pending_reason_, fidelity_, owners_, parts_used_}) c->setMinimumHeight(kWideChartMinHeight);
  for (CurveChart* c : {parts_pending_jobs_, parts_pending_gpus_}) c->setMinimumHeight(kChartMinHeight);
  auto* scroll = new QScrollArea;
  scroll->setObjectName(QStringLiteral("timeline_scroll"));
  scroll->setWidgetResizable(true);
  scroll->setFrameShape(QFrame::NoFrame);
  scroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
  scroll->setWidget(page);
  auto* layout = new QVBoxLayout(this);
  auto* top = new QHBoxLayout;
  top->addWidget(readout_, 1);
  top->addWidget(
      hint_label(tr("Drag or wheel: zoom \u00b7 \u2190/\u2192: pan \u00b7 click: cursor \u00b7 "
                    "double-click: everything")));
  layout->addLayout(top);
  layout->addWidget(scroll, 1);
  for (CurveChart* c : {by_tenant_, by_pool_, pending_jobs_, pending_gpus_, pending_reason_, fidelity_, owners_,
                        parts_used_, parts_pending_jobs_, parts_pending_gpus_}) {
    sync_->add(c);
    track(c);
  }
  connect(sync_, &TimeCharts::cursor_changed, this, &TimelineView::update_readout);
  update_readout(std::nan(""));
}

void TimelineView::set_data(std::shared_ptr<const ReplayData> data) {
  data_ = std::move(data);
  if (!data_) return;
  for (CurveChart* c : {by_tenant_, by_pool_, pending_jobs_, pending_gpus_, pending_reason_, fidelity_, owners_,
                        parts_used_, parts_pending_jobs_, parts_pending_gpus_})
    time_base(c, *data_);
  by_tenant_->set_sources(tenant_sources(data_->used_by_tenant), CurveChart::Mode::Stacked);
  pending_jobs_->set_sources(tenant_sources(data_->pending_jobs_by_tenant), CurveChart::Mode::Stacked);
  pending_gpus_->set_sources(tenant_sources(data_->pending_gpus_by_tenant), CurveChart::Mode::Stacked);
  std::vector<CurveChart::Source> pools;
  const Pyramid& p = data_->used_by_pool;
  if (!p.empty()) {
    const bool have_up = p.full().curves.size() == 2 * data_->result.pools.size() && !data_->result.pools.empty();
    for (std::size_t c = 0; c < p.full().curves.size(); ++c) {
      const std::size_t pool = have_up ? c / 2 : c;
      const bool up = have_up && c % 2 == 1;
      const QColor colour = up ? series_colour(pool).lighter(140) : series_colour(pool);
      pools.push_back({&p, c, p.full().curves[c].name, colour, up ? Qt::DashLine : Qt::SolidLine});
    }
  }
  by_pool_->set_sources(std::move(pools), CurveChart::Mode::Lines);
  by_pool_->chart()->legend()->setVisible(true);
  std::vector<CurveChart::Source> reasons;
  const Pyramid& why = data_->pending_by_reason;
  if (!why.empty()) {
    // none given, capacity, quota, priority, gang, reservation, preemption, admission, other
    static const QRgb kReasonColours[kPendingCodes] = {0xb0b0b0, 0x4e79a7, 0xf28e2b, 0xb07aa1, 0x59a14f,
                                                       0x76b7b2, 0xe15759, 0x9c755f, 0x606060};
    for (std::size_t c = 0; c < why.full().curves.size() && c < std::size_t{kPendingCodes}; ++c) {
      double peak = 0;
      for (double v : why.full().curves[c].y) peak = std::max(peak, v);
      if (peak > 0) reasons.push_back({&why, c, why.full().curves[c].name, QColor(kReasonColours[c]), Qt::SolidLine});
    }
  }
  // Never an unlabelled grey area: the legend always shows, and a policy that gives no reasons says so.
  const bool none_given = reasons.size() == 1 && reasons.front().curve == 0;
  const QString policy = QString::fromStdString(data_->result.policy);
  pending_reason_->chart()->setTitle(none_given ? tr("Pending jobs by why they wait: %1 gives no reasons").arg(policy)
                                                : tr("Pending jobs by why they wait"));
  pending_reason_->setVisible(!reasons.empty());
  pending_reason_->set_sources(std::move(reasons), CurveChart::Mode::Stacked);
  pending_reason_->chart()->legend()->setVisible(true);
  std::vector<CurveChart::Source> fidelity;
  if (const Pyramid& f = data_->recorded_vs_simulated; !f.empty()) {
    fidelity.push_back({&f, 0, f.full().curves[0].name, QColor(0x606060), Qt::DashLine});
    fidelity.push_back({&f, 1, f.full().curves[1].name, series_colour(0), Qt::SolidLine});
    if (f.full().curves.size() > 2) fidelity.push_back({&f, 2, f.full().curves[2].name, QColor(0x202020), Qt::DotLine});
  }
  fidelity_->setVisible(!fidelity.empty());
  fidelity_->set_sources(std::move(fidelity), CurveChart::Mode::Lines);
  fidelity_->chart()->legend()->setVisible(true);
  // A split site whose nodes move (docs/split.md): each system's GPUs over time, the moves as steps.
  std::vector<CurveChart::Source> owners;
  if (const Pyramid& o = data_->owned_by_partition; !o.empty())
    for (std::size_t c = 0; c < o.full().curves.size(); ++c) {
      const bool transit = c + 1 == o.full().curves.size();
      owners.push_back({&o, c, o.full().curves[c].name,
                        transit ? QColor(0x909090) : owner_colour(static_cast<std::int32_t>(c)),
                        transit ? Qt::DotLine : Qt::SolidLine});
    }
  owners_->setVisible(!owners.empty());
  owners_->set_sources(std::move(owners), CurveChart::Mode::Lines);
  owners_->chart()->legend()->setVisible(true);
  // A run with partitions (docs/split.md, "In the app"): each system in its cluster-map colour;
  // what it owns dashed beside what its jobs use, so idle GPUs of one system show against the
  // other's backlog below.
  std::vector<CurveChart::Source> used, jobs, gpus;
  if (const Pyramid& u = data_->used_by_partition; !u.empty())
    for (std::size_t c = 0; c < u.full().curves.size(); ++c) {
      const QColor colour = owner_colour(static_cast<std::int32_t>(c / 2));
      used.push_back({&u, c, u.full().curves[c].name, c % 2 == 1 ? colour.lighter(150) : colour,
                      c % 2 == 1 ? Qt::DashLine : Qt::SolidLine});
    }
  for (auto [p, out] :
       {std::pair{&data_->pending_jobs_by_partition, &jobs}, std::pair{&data_->pending_gpus_by_partition, &gpus}})
    if (!p->empty())
      for (std::size_t c = 0; c < p->full().curves.size(); ++c)
        out->push_back({p, c, p->full().curves[c].name, owner_colour(static_cast<std::int32_t>(c)), Qt::SolidLine});
  for (auto [chart, sources] :
       {std::pair{parts_used_, &used}, std::pair{parts_pending_jobs_, &jobs}, std::pair{parts_pending_gpus_, &gpus}}) {
    chart->setVisible(!sources->empty());
    chart->set_sources(std::move(*sources), CurveChart::Mode::Lines);
    chart->chart()->legend()->setVisible(true);
  }
  sync_->reset();
  update_readout(sync_->cursor());
}

void TimelineView::update_readout(double x) {
  if (!data_ || std::isnan(x) || data_->totals.empty()) {
    readout_->setText(tr("<b>Time cursor:</b> click a chart to place it"));
    return;
  }
  const Bucketed& full = data_->totals.full();
  const auto it = std::upper_bound(full.t_days.begin(), full.t_days.end(), x);
  const std::size_t i = it == full.t_days.begin() ? 0 : static_cast<std::size_t>(it - full.t_days.begin() - 1);
  const Tick at = static_cast<Tick>(std::llround(x * static_cast<double>(kTicksPerDay)));
  QString text = tr("<b>Cursor %1</b> &nbsp; %2 of %3 GPUs in use")
                     .arg(format_when(*data_, at), number(full.curves[0].y[i]),
                          number(static_cast<double>(data_->result.total_gpus)));
  for (std::size_t c = 1; c < full.curves.size(); ++c)
    text += QStringLiteral(" &nbsp;·&nbsp; %1 %2").arg(number(full.curves[c].y[i]), full.curves[c].name);
  // A run with partitions: each system's own figures at the same sample (a small system reads here
  // when its curves hug the axis beside a large one's).
  const Pyramid& used = data_->used_by_partition;
  const Pyramid& waiting = data_->pending_jobs_by_partition;
  if (!used.empty() && !waiting.empty() && i < used.full().t_days.size())
    for (std::size_t k = 0; k < data_->result.partitions.size() && 2 * k + 1 < used.full().curves.size(); ++k)
      text += tr(" &nbsp;·&nbsp; <span style='color:%1'><b>%2</b></span> %3 of %4 GPUs in use, %5 pending")
                  .arg(owner_colour(static_cast<std::int32_t>(k)).name(),
                       QString::fromStdString(data_->result.partitions[k].name).toHtmlEscaped(),
                       number(used.full().curves[2 * k].y[i]), number(used.full().curves[2 * k + 1].y[i]),
                       number(waiting.full().curves[k].y[i]));
  readout_->setText(text);
}

JobsView::JobsView(QWidget* parent) : View(parent) {
  model_ = new JobsModel(this);
  proxy_ = new JobFilterProxy(this);
  proxy_->setSourceModel(model_);
  events_ = new JobEventsModel(this);
  tenant_ = new QComboBox;
  tenant_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  state_ = new QComboBox;
  text_ = new QLineEdit;
  text_->setPlaceholderText(tr("Filter: job id, tenant or queue"));
  text_->setClearButtonEnabled(true);
  count_ = new QLabel;
  auto* filters = new QHBoxLayout;
  filters->addWidget(new QLabel(tr("Tenant")));
  filters->addWidget(tenant_);
  filters->addSpacing(12);
  filters->addWidget(new QLabel(tr("State")));
  filters->addWidget(state_);
  filters->addSpacing(12);
  filters->addWidget(text_, 1);
  filters->addSpacing(12);
  filters->addWidget(count_);

  table_ = new QTableView;
  setup_table(table_);
  table_->setModel(proxy_);
  table_->setSortingEnabled(true);
  table_->sortByColumn(-1, Qt::AscendingOrder);
  table_->horizontalHeader()->setSectionResizeMode(QHeaderView::Interactive);
  table_->horizontalHeader()->setStretchLastSection(true);

  title_ = new QLabel;
  QFont f = title_->font();
  f.setBold(true);
  f.setPointSizeF(f.pointSizeF() * 1.15);
  title_->setFont(f);
  summary_ = new QLabel;
  summary_->setWordWrap(true);
  summary_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  events_view_ = new QTableView;
  setup_table(events_view_);
  events_view_->setModel(events_);
  // A job's few events: the Reason column takes the rest of the width and wraps, rows grow to
  // hold it: never "unschedulable: no…" (issue #36).
  events_view_->horizontalHeader()->setStretchLastSection(true);
  events_view_->setWordWrap(true);
  events_view_->setTextElideMode(Qt::ElideNone);
  events_view_->verticalHeader()->setSectionResizeMode(QHeaderView::ResizeToContents);
  auto* detail = new QWidget;
  auto* dl = new QVBoxLayout(detail);
  dl->setContentsMargins(6, 0, 0, 0);
  dl->addWidget(title_);
  dl->addWidget(summary_);
  dl->addWidget(events_view_, 1);

  auto* split = new QSplitter(Qt::Horizontal);
  split->addWidget(table_);
  split->addWidget(detail);
  split->setStretchFactor(0, 1);
  split->setStretchFactor(1, 0);
  split->setSizes({1100, 460});
  auto* layout = new QVBoxLayout(this);
  layout->addLayout(filters);
  layout->addWidget(split, 1);

  connect(tenant_, &QComboBox::currentIndexChanged, this, [this] {
    proxy_->set_tenant(tenant_->currentData().toInt());
    update_count();
  });
  connect(state_, &QComboBox::currentIndexChanged, this, [this] {
    proxy_->set_state(state_->currentData().toInt());
    update_count();
  });
  connect(text_, &QLineEdit::textChanged, this, [this](const QString& t) {
    proxy_->set_text(t);
    update_count();
  });
  connect(table_->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this](const QModelIndex& current) {
    const int job = current.isValid() ? proxy_->mapToSource(current).row() : -1;
    show_job(job);
    emit job_selected(job);
  });
  show_job(-1);
}

void JobsView::set_data(std::shared_ptr<const ReplayData> data) {
  data_ = std::move(data);
  model_->set_data(data_);
  proxy_->source_reset();
  const QSignalBlocker b1(tenant_), b2(state_);
  tenant_->clear();
  state_->clear();
  tenant_->addItem(tr("All tenants"), -1);
  state_->addItem(tr("All states"), -1);
  if (data_) {
    for (std::size_t i = 0; i < data_->tenants.size(); ++i) {
      const TenantStats& t = data_->tenants[i];
      QPixmap swatch(12, 12);
      swatch.fill(tenant_colour(i));
      tenant_->addItem(QIcon(swatch), tr("%1 (%2 jobs)").arg(t.name, number(static_cast<double>(t.jobs))),
                       static_cast<int>(t.id));
    }
    for (int s = 0; s < kJobStates; ++s) {
      const std::int64_t n = data_->kpis.by_state[static_cast<std::size_t>(s)];
      if (n > 0)
        state_->addItem(tr("%1 (%2)").arg(state_name(static_cast<std::uint8_t>(s)), number(static_cast<double>(n))), s);
    }
  }
  proxy_->set_tenant(-1);
  proxy_->set_state(-1);
  table_->resizeColumnsToContents();
  show_job(-1);
  update_count();
}

void JobsView::select_row(int proxy_row) {
  if (proxy_row < 0 || proxy_row >= proxy_->rowCount()) return;
  table_->selectRow(proxy_row);
  table_->setCurrentIndex(proxy_->index(proxy_row, 0));
}

void JobsView::select_job(int job) {
  if (!data_ || job < 0 || job >= model_->rowCount()) return;
  QModelIndex at = proxy_->mapFromSource(model_->index(job, 0));
  if (!at.isValid()) {
    tenant_->setCurrentIndex(0);
    state_->setCurrentIndex(0);
    text_->clear();
    at = proxy_->mapFromSource(model_->index(job, 0));
  }
  if (!at.isValid()) return;
  table_->setCurrentIndex(at);
  table_->selectRow(at.row());
  table_->scrollTo(at, QAbstractItemView::PositionAtCenter);
}

void JobsView::update_count() {
  count_->setText(tr("%1 of %2 jobs").arg(number(proxy_->rowCount()), number(model_->rowCount())));
}

void JobsView::show_job(int job) {
  events_->set_job(data_, job);
  if (!data_ || job < 0) {
    title_->setText(tr("No job selected"));
    summary_->setText(tr("Select a job to see its life: submit, start, preemptions and end."));
    return;
  }
  const ReplayData& d = *data_;
  const results::JobRecord& j = d.result.jobs[static_cast<std::size_t>(job)];
  title_->setText(tr("Job %1 \u2014 %2").arg(j.trace_id).arg(d.tenant_name(j.tenant)));
  const QString gpus = j.gpu_milli > 0 && j.gpus <= 1 ? tr("%1 of a GPU").arg(j.gpu_milli / 1000.0, 0, 'f', 3)
                                                      : plural(j.gpus, tr("GPU"), tr("GPUs"));
  QStringList lines;
  lines << tr("%1, %2, queue %3, %4").arg(gpus, kind_name(j.kind), d.queue_name(j.queue), state_name(j.state));
  QString times = tr("submitted %1").arg(format_when(d, j.submit - d.origin));
  if (j.start >= 0) times += tr(", waited %1").arg(format_duration(j.start - j.submit));
  if (j.start >= 0 && j.end >= 0) times += tr(", ran %1").arg(format_duration(j.end - j.start));
  times += tr(", recorded run time %1").arg(format_duration(j.runtime));
  lines << times;
  if (j.pool >= 0)
    lines << tr("pool %1, %2 from node %3")
                 .arg(d.pool_name(j.pool), plural(j.nodes_used, tr("node"), tr("nodes")))
                 .arg(j.first_node);
  lines << plural(j.preemptions, tr("preemption"), tr("preemptions"));
  if (!events_->from_audit_log()) lines << tr("(no audit events for this job in the file; rebuilt from /jobs)");
  summary_->setText(lines.join(QLatin1Char('\n')));
  for (int c : {JobEventsModel::Time, JobEventsModel::Event, JobEventsModel::Detail})
    events_view_->resizeColumnToContents(c);
  events_view_->resizeRowsToContents();
}

FairnessView::FairnessView(QWidget* parent) : View(parent), sync_(new TimeCharts(this)) {
  share_ = new CurveChart(tr("Share of GPUs in use by tenant"), tr("share"));
  share_->set_fixed_y(100);
  cdf_ = new CdfChart;
  jain_ = new QLabel;
  jain_->setTextFormat(Qt::RichText);
  jain_->setWordWrap(true);
  tenants_ = new TenantModel(this);
  auto* table = new QTableView;
  setup_table(table);
  table->setModel(tenants_);
  sync_->add(share_);
  track(share_);

  auto* charts = new QSplitter(Qt::Horizontal);
  charts->addWidget(share_);
  charts->addWidget(cdf_);
  auto* bottom = new QWidget;
  auto* bl = new QVBoxLayout(bottom);
  bl->setContentsMargins(0, 0, 0, 0);
  bl->addWidget(jain_);
  bl->addWidget(table, 1);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(charts);
  split->addWidget(bottom);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);
  connect(tenants_, &QAbstractItemModel::modelReset, table, [table] { table->resizeColumnsToContents(); });
}

void FairnessView::set_data(std::shared_ptr<const ReplayData> data) {
  data_ = std::move(data);
  tenants_->set_data(data_);
  if (!data_) return;
  time_base(share_, *data_);
  share_->set_sources(tenant_sources(data_->share_by_tenant), CurveChart::Mode::Stacked, 100.0, "%.0f %");
  sync_->reset();
  cdf_->set_cdfs(data_->wait_cdfs);
  jain_->setText(jain_text(*data_));
}

CompareView::CompareView(QWidget* parent) : View(parent), sync_(new TimeCharts(this)) {
  kpis_ = new KpiCompareModel(this);
  // A tree: the run-wide KPIs, then a split site's partitions (unfolded), services, tenants and job
  // kinds (folded), compare's rows.
  table_ = new QTreeView;
  table_->setAlternatingRowColors(true);
  table_->setUniformRowHeights(true);
  table_->setSelectionBehavior(QAbstractItemView::SelectRows);
  table_->setModel(kpis_);
  table_->header()->setStretchLastSection(false);
  hint_ =
      hint_label(tr("Open two or more results (File > Open, or drop them here) to compare them; "
                    "differences are against the first."));
  used_ = new CurveChart(tr("GPUs in use"), tr("GPUs"));
  pending_ = new CurveChart(tr("Pending jobs"), tr("jobs"));
  for (CurveChart* c : {used_, pending_}) {
    c->setMinimumHeight(210);  // a plot of ~130 px under the title and above the time axis
    sync_->add(c);
    track(c);
  }
  // Many runs (a bake-off's 20): one legend for both charts under them, in columns, instead of
  // two legends cut to the charts' height.
  run_legend_ = new QLabel;
  run_legend_->setObjectName(QStringLiteral("run_legend"));
  run_legend_->setTextFormat(Qt::RichText);
  run_legend_->hide();
  auto* charts = new QWidget;
  auto* cv = new QVBoxLayout(charts);
  cv->setContentsMargins(0, 0, 0, 0);
  auto* cl = new QHBoxLayout;
  cl->addWidget(used_);
  cl->addWidget(pending_);
  cv->addLayout(cl, 1);
  cv->addWidget(run_legend_);
  auto* top = new QWidget;
  auto* tl = new QVBoxLayout(top);
  tl->setContentsMargins(0, 0, 0, 0);
  tl->addWidget(hint_);
  tl->addWidget(table_, 1);
  // The scorecard: each drill's targets under each system, the why-line of the current cell below.
  verdicts_ = new ScorecardModel(this);
  verdict_table_ = new QTableView;
  verdict_table_->setObjectName(QStringLiteral("scorecard"));
  verdict_table_->setModel(verdicts_);
  verdict_table_->setSelectionMode(QAbstractItemView::SingleSelection);
  verdict_table_->verticalHeader()->hide();
  why_ = new QLabel;
  why_->setObjectName(QStringLiteral("scorecard_why"));
  why_->setWordWrap(true);
  why_->setTextInteractionFlags(Qt::TextSelectableByMouse);
  connect(verdict_table_->selectionModel(), &QItemSelectionModel::currentChanged, this,
          [this](const QModelIndex& current) {
            const QString line = verdicts_->why_line(current);
            if (!line.isEmpty()) why_->setText(tr("why: %1").arg(line));
          });
  verdict_table_->hide();
  why_->hide();
  tl->addWidget(verdict_table_);
  tl->addWidget(why_);
  auto* split = new QSplitter(Qt::Vertical);
  split->addWidget(top);
  split->addWidget(charts);
  split->setStretchFactor(0, 3);
  split->setStretchFactor(1, 2);
  split->setSizes({520, 340});
  auto* layout = new QVBoxLayout(this);
  layout->addWidget(split);
}

void CompareView::set_runs(std::vector<std::shared_ptr<const ReplayData>> runs) {
  runs_ = std::move(runs);
  kpis_->set_runs(runs_);
  // A split site's partitions (a few rows per system) open unfolded: they are what sets a split
  // run apart from one shared pool.
  const QModelIndex boundary = kpis_->find(QStringLiteral("boundary_idle_gpu_hours"));
  if (boundary.isValid() && boundary.parent().isValid()) table_->expandRecursively(boundary.parent());
  for (int c = 0; c < kpis_->columnCount(); ++c) table_->resizeColumnToContents(c);
  // Every KPI of `headroom compare`: the tree scrolls, the charts keep their room.
  table_->setMinimumHeight(std::min(12, kpis_->rowCount() + 2) * table_->fontMetrics().height() * 3 / 2);
  hint_->setVisible(runs_.size() < 2);
  verdicts_->set_runs(runs_);
  const bool scored = verdicts_->rowCount() > 0;
  verdict_table_->setVisible(scored);
  why_->setVisible(scored);
  if (scored) {
    verdict_table_->resizeColumnsToContents();
    verdict_table_->setMinimumHeight(std::min(8, verdicts_->rowCount() + 1) * verdict_table_->rowHeight(0) + 4);
    const QModelIndex first = verdicts_->first_to_explain();
    verdict_table_->setCurrentIndex(first);
    why_->setText(tr("why: %1").arg(verdicts_->why_line(first)));
  }
  std::vector<CurveChart::Source> used, pending;
  for (std::size_t i = 0; i < runs_.size(); ++i) {
    const Pyramid& p = runs_[i]->totals;
    if (p.empty()) continue;
    const QColor colour = series_colour(i);
    const QString name = kpis_->differs(i).isEmpty() ? runs_[i]->label : kpis_->differs(i);
    used.push_back({&p, 0, name, colour, Qt::SolidLine});
    for (std::size_t c = 1; c < p.full().curves.size(); ++c)
      if (p.full().curves[c].name == QLatin1String("pending jobs"))
        pending.push_back({&p, c, name, colour, Qt::SolidLine});
  }
  if (!runs_.empty()) {
    // Several runs: the first one's calendar; outages are each run's own, so none are marked.
    time_base(used_, *runs_.front(), runs_.size() == 1);
    time_base(pending_, *runs_.front(), runs_.size() == 1);
  }
  const bool shared_legend = used.size() > kChartLegendRuns;
  QStringList names, colours;
  for (const CurveChart::Source& s : used) names << s.name, colours << s.colour.name();
  QString html;
  if (shared_legend) {
    constexpr int kColumns = 4;
    const int rows = (static_cast<int>(used.size()) + kColumns - 1) / kColumns;
    html = QStringLiteral("<table cellspacing='0' cellpadding='1'>");
    for (int r = 0; r < rows; ++r) {
      html += QStringLiteral("<tr>");
      for (int c = 0; c < kColumns; ++c) {
        const int i = c * rows + r;  // down the columns: a drill's systems stay together
        if (i < names.size())
          html += QStringLiteral("<td><span style='color:%1'>\u25ac\u25ac</span>&nbsp;%2&nbsp;&nbsp;&nbsp;</td>")
                      .arg(colours[i], names[i].toHtmlEscaped());
      }
      html += QStringLiteral("</tr>");
    }
    html += QStringLiteral("</table>");
  }
  run_legend_->setText(html);
  run_legend_->setProperty("entries", names);
  run_legend_->setProperty("colours", colours);
  run_legend_->setVisible(shared_legend);
  used_->set_sources(std::move(used), CurveChart::Mode::Lines);
  pending_->set_sources(std::move(pending), CurveChart::Mode::Lines);
  for (CurveChart* c : {used_, pending_}) c->chart()->legend()->setVisible(!shared_legend && c->sources().size() > 1);
  sync_->reset();
}

}  // namespace headroom::gui
