#include "gui/charts.hpp"

#include <QAreaSeries>
#include <QChart>
#include <QDateTime>
#include <QFontMetricsF>
#include <QGraphicsLayout>
#include <QGraphicsRectItem>
#include <QGraphicsTextItem>
#include <QKeyEvent>
#include <QLegend>
#include <QLineSeries>
#include <QLocale>
#include <QMouseEvent>
#include <QWheelEvent>
#include <algorithm>
#include <cmath>
#include <limits>

namespace headroom::gui {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

QChart* make_chart(const QString& title) {
  auto* chart = new QChart;
  chart->setTitle(title);
  QFont f = chart->titleFont();
  f.setBold(true);
  f.setPointSizeF(f.pointSizeF() * 1.05);
  chart->setTitleFont(f);
  chart->setMargins(QMargins(4, 4, 4, 4));
  chart->layout()->setContentsMargins(0, 0, 0, 0);
  chart->setBackgroundRoundness(0);
  // Axis numbers with thousands separators: "10,000", never "10000" (issue #36).
  chart->setLocalizeNumbers(true);
  chart->setLocale(QLocale(QLocale::English, QLocale::UnitedStates));
  chart->legend()->setAlignment(Qt::AlignRight);
  chart->legend()->setShowToolTips(true);
  QFont lf = chart->legend()->font();
  lf.setPointSizeF(lf.pointSizeF() * 0.9);
  chart->legend()->setFont(lf);
  return chart;
}

// A tick step (days) giving at most `labels` labels over `span` days.
double tick_step(double span, int labels = 10) {
  static const double steps[] = {1.0 / 24, 2.0 / 24, 3.0 / 24, 6.0 / 24, 0.5, 1, 2, 7, 14, 28, 56, 91, 182, 364};
  for (double s : steps)
    if (span / s <= labels) return s;
  return steps[std::size(steps) - 1] * std::ceil(span / labels / steps[std::size(steps) - 1]);
}

QDateTime utc(std::int64_t ms) { return QDateTime::fromMSecsSinceEpoch(ms, Qt::UTC); }

}  // namespace

ChartView::ChartView(QWidget* parent) : QChartView(parent), cursor_x_(kNaN) {
  setRenderHint(QPainter::Antialiasing);
  setRubberBand(QChartView::NoRubberBand);
  setFocusPolicy(Qt::ClickFocus);
  band_ = new QRubberBand(QRubberBand::Rectangle, this);
}

QValueAxis* ChartView::x_axis() const {
  const auto axes = chart()->axes(Qt::Horizontal);
  return axes.isEmpty() ? nullptr : qobject_cast<QValueAxis*>(axes.front());
}

QRect ChartView::plot_rect() const { return mapFromScene(chart()->mapToScene(chart()->plotArea())).boundingRect(); }

double ChartView::value_at(QPointF view_pos) const {
  const QValueAxis* x = x_axis();
  const QRectF plot = chart()->plotArea();
  if (!x || plot.width() <= 0) return kNaN;
  const QPointF p = chart()->mapFromScene(mapToScene(view_pos.toPoint()));
  return x->min() + (p.x() - plot.left()) / plot.width() * (x->max() - x->min());
}

void ChartView::set_cursor(double x) {
  cursor_x_ = x;
  place_cursor();
}

void ChartView::set_markers(std::vector<Marker> markers, Tick origin) {
  markers_ = std::move(markers);
  marker_origin_ = origin;
  refresh_mark_legend();
  place_markers();
}

void ChartView::refresh_mark_legend() {
  bool kinds[kOutageKinds] = {};
  for (const Marker& m : markers_) kinds[static_cast<int>(m.kind)] = true;
  const auto key_name = [](int k) { return QStringLiteral("outage-key-%1").arg(k); };
  bool any = false;
  for (int k = 0; k < kOutageKinds; ++k) {
    QAbstractSeries* have = nullptr;
    for (QAbstractSeries* s : chart()->series())
      if (s->objectName() == key_name(k)) have = s;
    any = any || kinds[k];
    if (kinds[k] && have == nullptr) {
      // An empty series: nothing drawn, a swatch in the legend.
      auto* key = new QLineSeries;
      key->setObjectName(key_name(k));
      key->setName(outage_kind_name(static_cast<OutageKind>(k)));
      key->setPen(QPen(outage_colour(static_cast<OutageKind>(k)), 6));
      chart()->addSeries(key);
      for (QAbstractAxis* axis : chart()->axes()) key->attachAxis(axis);
    } else if (!kinds[k] && have != nullptr) {
      chart()->removeSeries(have);
      delete have;
    }
  }
  if (any) chart()->legend()->setVisible(true);
}

void ChartView::place_markers() {
  marks_.clear();
  const QValueAxis* x = x_axis();
  const QRectF plot = chart()->plotArea();
  if (x && !markers_.empty() && x->max() > x->min() && plot.width() > 0) {
    const double per_px = (x->max() - x->min()) / plot.width();
    const auto px = [&](double days) { return plot.left() + (days - x->min()) / per_px; };
    std::vector<Mark> by_kind[kOutageKinds];
    for (const Marker& m : markers_) {
      const double d0 = static_cast<double>(m.start - marker_origin_) / static_cast<double>(kTicksPerDay);
      const double d1 = static_cast<double>(m.end - marker_origin_) / static_cast<double>(kTicksPerDay);
      if (d1 < x->min() || d0 > x->max()) continue;
      double a = px(std::max(d0, x->min())), b = px(std::min(d1, x->max()));
      if (b - a < 3) {
        const double mid = (a + b) / 2;
        a = mid - 1.5;
        b = mid + 1.5;
      }
      auto& list = by_kind[static_cast<int>(m.kind)];
      if (!list.empty() && a <= list.back().right + 1)
        list.back().right = std::max(list.back().right, b);
      else
        list.push_back(Mark{m.kind, a, b});
    }
    for (const auto& list : by_kind) marks_.insert(marks_.end(), list.begin(), list.end());
    std::stable_sort(marks_.begin(), marks_.end(), [](const Mark& a, const Mark& b) { return a.left < b.left; });
  }
  // A strip along the plot's top for every mark, one row a kind; a band over the plot for outages.
  std::size_t used = 0;
  const auto item = [&]() -> QGraphicsRectItem* {
    if (used == mark_items_.size()) {
      auto* r = new QGraphicsRectItem(chart());
      r->setPen(Qt::NoPen);
      mark_items_.push_back(r);
    }
    return mark_items_[used++];
  };
  for (const Mark& m : marks_) {
    const QColor c = outage_colour(m.kind);
    if (m.kind == OutageKind::Outage) {
      QGraphicsRectItem* band = item();
      QColor fill = c;
      fill.setAlpha(40);
      band->setBrush(fill);
      band->setRect(QRectF(m.left, plot.top(), m.right - m.left, plot.height()));
      band->setZValue(0.5);
      band->setToolTip(outage_kind_name(m.kind));
      band->show();
    }
    QGraphicsRectItem* strip = item();
    strip->setBrush(c);
    strip->setRect(QRectF(m.left, plot.top() + 4 * static_cast<int>(m.kind), m.right - m.left, 4));
    strip->setZValue(999);
    strip->setToolTip(outage_kind_name(m.kind));
    strip->show();
  }
  for (std::size_t i = used; i < mark_items_.size(); ++i) mark_items_[i]->hide();
}

void ChartView::place_cursor() {
  place_markers();
  const QValueAxis* x = x_axis();
  if (!cursor_line_) {
    cursor_line_ = new QGraphicsLineItem(chart());
    cursor_line_->setPen(QPen(QColor(0x20, 0x20, 0x20), 1.5, Qt::DashLine));
    cursor_line_->setZValue(1000);
  }
  const QRectF plot = chart()->plotArea();
  if (!x || std::isnan(cursor_x_) || cursor_x_ < x->min() || cursor_x_ > x->max() || x->max() <= x->min()) {
    cursor_line_->hide();
    return;
  }
  const double px = plot.left() + (cursor_x_ - x->min()) / (x->max() - x->min()) * plot.width();
  cursor_line_->setLine(px, plot.top(), px, plot.bottom());
  cursor_line_->show();
}

void ChartView::mousePressEvent(QMouseEvent* event) {
  emit activated(this);
  if (event->button() == Qt::LeftButton) {
    press_ = event->position().toPoint();
    pressing_ = true;
    event->accept();
    return;
  }
  if (event->button() == Qt::RightButton) {
    emit reset_requested();
    event->accept();
    return;
  }
  QChartView::mousePressEvent(event);
}

void ChartView::mouseMoveEvent(QMouseEvent* event) {
  if (pressing_) {
    const QPoint pos = event->position().toPoint();
    if (std::abs(pos.x() - press_.x()) > 4) {
      const QRect plot = plot_rect();
      band_->setGeometry(QRect(QPoint(std::min(pos.x(), press_.x()), plot.top()),
                               QPoint(std::max(pos.x(), press_.x()), plot.bottom())));
      band_->show();
    }
    event->accept();
    return;
  }
  QChartView::mouseMoveEvent(event);
}

void ChartView::mouseReleaseEvent(QMouseEvent* event) {
  if (pressing_ && event->button() == Qt::LeftButton) {
    pressing_ = false;
    const double a = value_at(press_), b = value_at(event->position());
    if (band_->isVisible()) {
      band_->hide();
      if (!std::isnan(a) && !std::isnan(b) && a != b) emit range_requested(std::min(a, b), std::max(a, b));
    } else if (!std::isnan(b)) {
      emit cursor_requested(b);
    }
    event->accept();
    return;
  }
  QChartView::mouseReleaseEvent(event);
}

void ChartView::mouseDoubleClickEvent(QMouseEvent* event) {
  emit reset_requested();
  event->accept();
}

void ChartView::wheelEvent(QWheelEvent* event) {
  const QValueAxis* x = x_axis();
  const double at = value_at(event->position());
  if (!x || std::isnan(at) || event->angleDelta().y() == 0) return QChartView::wheelEvent(event);
  const double factor = event->angleDelta().y() > 0 ? 0.8 : 1.25;
  emit range_requested(at - (at - x->min()) * factor, at + (x->max() - at) * factor);
  event->accept();
}

void ChartView::keyPressEvent(QKeyEvent* event) {
  const QValueAxis* x = x_axis();
  if (x && (event->key() == Qt::Key_Left || event->key() == Qt::Key_Right)) {
    const double shift = (x->max() - x->min()) * (event->key() == Qt::Key_Left ? -0.2 : 0.2);
    emit range_requested(x->min() + shift, x->max() + shift);
    return;
  }
  if (x && (event->key() == Qt::Key_Plus || event->key() == Qt::Key_Minus)) {
    const double mid = (x->min() + x->max()) / 2, half = (x->max() - x->min()) / 2;
    const double f = event->key() == Qt::Key_Plus ? 0.5 : 2.0;
    emit range_requested(mid - half * f, mid + half * f);
    return;
  }
  if (event->key() == Qt::Key_Home || event->key() == Qt::Key_0) {
    emit reset_requested();
    return;
  }
  QChartView::keyPressEvent(event);
}

void ChartView::resizeEvent(QResizeEvent* event) {
  QChartView::resizeEvent(event);
  place_cursor();
}

CurveChart::CurveChart(const QString& title, const QString& y_title, QWidget* parent) : ChartView(parent) {
  setChart(make_chart(title));
  x_ = new QCategoryAxis;
  x_->setLabelsPosition(QCategoryAxis::AxisLabelsPositionOnValue);
  x_->setTitleText(tr("days since first submit"));
  y_ = new QValueAxis;
  y_->setTitleText(y_title);
  chart()->addAxis(x_, Qt::AlignBottom);
  chart()->addAxis(y_, Qt::AlignLeft);
  connect(chart(), &QChart::plotAreaChanged, this, [this] { place_cursor(); });
}

void CurveChart::set_sources(std::vector<Source> sources, Mode mode, double scale, QString y_format) {
  chart()->removeAllSeries();
  shown_ = {};
  sources_ = std::move(sources);
  mode_ = mode;
  scale_ = scale;
  y_->setLabelFormat(y_format);
  for (const Source& s : sources_) {
    QAbstractSeries* series = nullptr;
    if (mode_ == Mode::Stacked) {
      auto* area = new QAreaSeries(new QLineSeries, new QLineSeries);
      area->setColor(s.colour);
      area->setBorderColor(s.colour.darker(115));
      QPen pen = area->pen();
      pen.setWidthF(0.6);
      area->setPen(pen);
      series = area;
    } else {
      auto* line = new QLineSeries;
      QPen pen(s.colour, 2.0, s.style);
      line->setPen(pen);
      series = line;
    }
    series->setName(s.name);
    chart()->addSeries(series);
    series->attachAxis(x_);
    series->attachAxis(y_);
  }
  chart()->legend()->setVisible(sources_.size() > 1);
  refresh_mark_legend();
  const auto [x0, x1] = full_range();
  show_range(x0, x1);
}

std::pair<double, double> CurveChart::full_range() const {
  double lo = 0, hi = 0;
  bool any = false;
  for (const Source& s : sources_) {
    if (!s.pyramid || s.pyramid->empty()) continue;
    const auto& t = s.pyramid->full().t_days;
    lo = any ? std::min(lo, t.front()) : t.front();
    hi = any ? std::max(hi, t.back()) : t.back();
    any = true;
  }
  return {lo, hi};
}

void CurveChart::show_range(double x0, double x1) {
  if (!(x1 > x0)) x1 = x0 + 1;
  const std::size_t max_points = static_cast<std::size_t>(std::max(200, static_cast<int>(chart()->plotArea().width())));
  Shown now{x0, x1, {}};
  for (const Source& s : sources_)
    now.levels.push_back(s.pyramid && !s.pyramid->empty() && s.curve < s.pyramid->full().curves.size()
                             ? &s.pyramid->level_for(x0, x1, max_points)
                             : nullptr);
  if (!now.levels.empty() && now == shown_) return;
  shown_ = std::move(now);
  x_->setRange(x0, x1);
  label_time_axis(x0, x1);
  const auto series = chart()->series();
  std::vector<double> base;
  double y_max = 0;
  for (std::size_t k = 0; k < sources_.size() && k < static_cast<std::size_t>(series.size()); ++k) {
    const Source& s = sources_[k];
    QList<QPointF> upper, lower;
    if (s.pyramid && !s.pyramid->empty() && s.curve < s.pyramid->full().curves.size()) {
      const Bucketed& level = s.pyramid->level_for(x0, x1, max_points);
      const auto& t = level.t_days;
      const auto& y = level.curves[s.curve].y;
      const std::size_t lo = static_cast<std::size_t>(
          std::max<std::ptrdiff_t>(0, std::lower_bound(t.begin(), t.end(), x0) - t.begin() - 1));
      const std::size_t hi =
          std::min(t.size(), static_cast<std::size_t>(std::upper_bound(t.begin(), t.end(), x1) - t.begin()) + 1);
      // A bucket of several samples is drawn as its lowest and highest sample (in the order they
      // came; lowest first when stacked, so that the areas stack), half a bucket apart: a
      // one-sample outage or peak shows at any width.
      const bool extremes = level.samples_per_bucket > 1;
      const Curve& curve = level.curves[s.curve];
      const std::size_t per = extremes ? 2 : 1;
      if (mode_ == Mode::Stacked && base.size() != t.size() * per) base.assign(t.size() * per, 0.0);
      for (std::size_t i = lo; i < hi; ++i) {
        const double half = !extremes          ? 0
                            : i + 1 < t.size() ? (t[i + 1] - t[i]) / 2
                            : i > 0            ? (t[i] - t[i - 1]) / 2
                                               : 0;
        for (std::size_t k = 0; k < per; ++k) {
          const double x = t[i] + (k == 1 ? half : 0);
          double raw = y[i];
          if (extremes) {
            const bool low_now = mode_ == Mode::Stacked || curve.lo_first[i] ? k == 0 : k == 1;
            raw = low_now ? curve.low(i) : curve.high(i);
          }
          const double v = raw * scale_;
          if (mode_ == Mode::Stacked) {
            double& b = base[i * per + k];
            lower.append(QPointF(x, b));
            b += v;
            upper.append(QPointF(x, b));
            y_max = std::max(y_max, b);
          } else {
            upper.append(QPointF(x, v));
            y_max = std::max(y_max, v);
          }
        }
      }
    }
    if (auto* area = qobject_cast<QAreaSeries*>(series[static_cast<qsizetype>(k)])) {
      area->upperSeries()->replace(upper);
      area->lowerSeries()->replace(lower);
    } else if (auto* line = qobject_cast<QLineSeries*>(series[static_cast<qsizetype>(k)])) {
      line->replace(upper);
    }
  }
  if (fixed_y_ > 0) {
    y_->setRange(0, fixed_y_);
  } else {
    y_->setRange(0, y_max > 0 ? y_max * 1.05 : 1.0);
    y_->applyNiceNumbers();
    // Counts labelled as whole numbers ("%.0f": GPUs, jobs) under a nice step below 1 would read
    // "0 0 0 1 1 1" (no job pending at all, or a few): ticks at each whole number instead.
    const int ticks = y_->tickCount();
    if (y_->labelFormat() == QStringLiteral("%.0f") && ticks > 1 && y_->max() / (ticks - 1) < 1.0) {
      const int top = std::max(1, static_cast<int>(std::ceil(y_max)));
      y_->setRange(0, top);
      y_->setTickCount(top + 1);
    }
  }
  place_cursor();
}

void CurveChart::set_time_base(std::int64_t unix_ms, bool calendar) {
  unix_ms_ = unix_ms;
  calendar_ = calendar;
  if (x_->max() > x_->min()) label_time_axis(x_->min(), x_->max());
}

void CurveChart::label_time_axis(double x0, double x1) {
  // As many labels as fit whole ("May 12" or "May 12 06:00" each, never "May ..."), at most 10.
  const QString widest = QString::fromLatin1(tick_step(x1 - x0) >= 1 ? "May 12" : "May 12 06:00");
  const double label_px = QFontMetricsF(x_->labelsFont()).horizontalAdvance(widest) + 18;
  const double plot_px = chart()->plotArea().width() > 0 ? chart()->plotArea().width() : 600;
  const double step = tick_step(std::max(x1 - x0, 1e-6), std::clamp(static_cast<int>(plot_px / label_px), 2, 10));
  for (const QString& label : x_->categoriesLabels()) x_->remove(label);
  const bool dates = calendar();
  // Calendar ticks fall on UTC midnights (and whole hours); relative ones on whole days.
  const double day_ms = static_cast<double>(kTicksPerDay);
  const double anchor =
      dates ? -static_cast<double>(((unix_ms_ % kTicksPerDay) + kTicksPerDay) % kTicksPerDay) / day_ms : 0.0;
  const QLocale c = QLocale::c();
  x_->setStartValue(x0 - step);
  for (double t = anchor + std::ceil((x0 - anchor) / step - 1e-9) * step; t <= x1 + 1e-9; t += step) {
    QString label;
    if (dates) {
      const QDateTime at = utc(unix_ms_ + static_cast<std::int64_t>(std::llround(t * day_ms)));
      label = c.toString(at, step >= 1 ? QStringLiteral("MMM d") : QStringLiteral("MMM d hh:mm"));
    } else {
      label = QString::number(t, 'f', step >= 1 ? 0 : step >= 0.25 ? 2 : 3);
    }
    x_->append(label, t);
  }
  if (dates) {
    const int y0 = utc(unix_ms_ + static_cast<std::int64_t>(x0 * day_ms)).date().year();
    const int y1 = utc(unix_ms_ + static_cast<std::int64_t>(x1 * day_ms)).date().year();
    x_->setTitleText(y0 == y1 ? tr("date, %1 (UTC)").arg(y0) : tr("date, %1\u2013%2 (UTC)").arg(y0).arg(y1));
  } else {
    x_->setTitleText(tr("days since first submit"));
  }
}

std::vector<std::pair<double, QString>> CurveChart::time_labels() const {
  std::vector<std::pair<double, QString>> out;
  for (const QString& label : x_->categoriesLabels()) out.emplace_back(x_->endValue(label), label);
  return out;
}

CdfChart::CdfChart(QWidget* parent) : QChartView(parent) {
  setRenderHint(QPainter::Antialiasing);
  setChart(make_chart(tr("Wait time CDF per tenant")));
}

void CdfChart::set_cdfs(const std::vector<Cdf>& cdfs) {
  chart()->removeAllSeries();
  for (QAbstractAxis* a : chart()->axes()) {
    chart()->removeAxis(a);
    delete a;
  }
  auto* x = new QValueAxis;
  x->setTitleText(tr("wait (hours)"));
  auto* y = new QValueAxis;
  y->setTitleText(tr("jobs that waited at most x"));
  y->setRange(0, 100);
  y->setLabelFormat("%.0f %");  // localized numbers (make_chart): the rest is literal, one "%"
  chart()->addAxis(x, Qt::AlignBottom);
  chart()->addAxis(y, Qt::AlignLeft);
  double x_max = 0;
  for (const Cdf& c : cdfs) {
    auto* line = new QLineSeries;
    line->setName(c.name);
    const bool all = c.rank >= kTopTenants;
    line->setPen(QPen(all ? QColor(0x30, 0x30, 0x30) : tenant_colour(c.rank), all ? 2.5 : 1.6,
                      all ? Qt::DashLine : Qt::SolidLine));
    QList<QPointF> points;
    double prev_y = 0;
    for (std::size_t i = 0; i < c.x_hours.size(); ++i) {
      points.append(QPointF(c.x_hours[i], 100.0 * prev_y));  // steps: flat until the next wait
      points.append(QPointF(c.x_hours[i], 100.0 * c.y[i]));
      prev_y = c.y[i];
      x_max = std::max(x_max, c.x_hours[i]);
    }
    line->replace(points);
    chart()->addSeries(line);
    line->attachAxis(x);
    line->attachAxis(y);
  }
  x->setRange(0, x_max > 0 ? x_max * 1.02 : 1.0);
  x->applyNiceNumbers();
  x->setLabelFormat("%.0f");
}

}  // namespace headroom::gui
