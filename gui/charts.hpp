#pragma once

#include <QCategoryAxis>
#include <QChartView>
#include <QColor>
#include <QGraphicsLineItem>
#include <QRubberBand>
#include <QValueAxis>
#include <vector>

#include "gui/replay_data.hpp"

namespace headroom::gui {

// A chart over time (x in days). Drag to zoom into a span, wheel to zoom around the pointer,
// arrow keys to pan, click to place the time cursor, double-click or right-click to reset.
// The view only reports what the user asked for; the owner applies ranges to every chart it syncs.
class ChartView : public QChartView {
  Q_OBJECT
 public:
  explicit ChartView(QWidget* parent = nullptr);
  void set_cursor(double x);  // NaN hides it
  double cursor() const { return cursor_x_; }
  // Marks node outages, maintenance drains and failures on the time axis (x = days since
  // `origin`): a band over the plot for scripted outages, a strip along its top for each kind,
  // at least 3 px wide whatever the zoom; spans closer than a pixel merge. Empty: none.
  void set_markers(std::vector<Marker> markers, Tick origin);
  // The marks drawn now: (kind, left px, right px) by left edge, for tests.
  struct Mark {
    OutageKind kind;
    double left, right;
  };
  const std::vector<Mark>& marks() const { return marks_; }

 signals:
  void range_requested(double x0, double x1);
  void reset_requested();
  void cursor_requested(double x);
  void activated(ChartView* view);

 protected:
  void mousePressEvent(QMouseEvent* event) override;
  void mouseMoveEvent(QMouseEvent* event) override;
  void mouseReleaseEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  void wheelEvent(QWheelEvent* event) override;
  void keyPressEvent(QKeyEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;

  QValueAxis* x_axis() const;
  void place_cursor();  // and the outage marks
  // One legend entry per kind of outage the run had, in the chart's legend beside the curves'
  // (never over the plot); again after the series were replaced.
  void refresh_mark_legend();

 private:
  double value_at(QPointF view_pos) const;
  QRect plot_rect() const;

  QRubberBand* band_ = nullptr;
  QPoint press_;
  bool pressing_ = false;
  double cursor_x_;
  QGraphicsLineItem* cursor_line_ = nullptr;
  void place_markers();
  std::vector<Marker> markers_;
  Tick marker_origin_ = 0;
  std::vector<Mark> marks_;
  std::vector<QGraphicsRectItem*> mark_items_;
};

// Curves from bucketed pyramids, as lines or as a stacked area; redrawn at the bucket size that
// fits the visible span.
class CurveChart : public ChartView {
  Q_OBJECT
 public:
  struct Source {
    const Pyramid* pyramid = nullptr;
    std::size_t curve = 0;
    QString name;
    QColor colour;
    Qt::PenStyle style = Qt::SolidLine;
  };
  enum class Mode { Lines, Stacked };

  CurveChart(const QString& title, const QString& y_title, QWidget* parent = nullptr);
  void set_sources(std::vector<Source> sources, Mode mode, double scale = 1.0, QString y_format = "%.0f");
  void set_fixed_y(double max) {
    fixed_y_ = max;
    shown_ = {};
  }
  // Shows [x0, x1] at the level of detail the plot's width needs; a no-op when that range at
  // those levels is what it shows already (a new result's charts are filled once, not again by
  // the shared range reset).
  void show_range(double x0, double x1);
  // The span of all data, in days ([0, 0] when empty).
  std::pair<double, double> full_range() const;
  // Calendar time on the x axis: x = 0 is `unix_ms` (ms since the Unix epoch, UTC; -1 when the
  // trace gives no date), shown as dates when `calendar` is on, else as days since the first submit.
  void set_time_base(std::int64_t unix_ms, bool calendar);
  bool calendar() const { return calendar_ && unix_ms_ >= 0; }
  bool calendar_wanted() const { return calendar_; }
  std::int64_t unix_ms() const { return unix_ms_; }
  // The x axis' labels and where they sit (days), as drawn now.
  std::vector<std::pair<double, QString>> time_labels() const;
  const std::vector<Source>& sources() const { return sources_; }

 private:
  std::vector<Source> sources_;
  Mode mode_ = Mode::Lines;
  double scale_ = 1.0;
  double fixed_y_ = 0;
  struct Shown {
    double x0 = 0, x1 = 0;
    std::vector<const Bucketed*> levels;  // by source: the level of detail drawn; empty: nothing shown
    bool operator==(const Shown&) const = default;
  } shown_;
  QCategoryAxis* x_ = nullptr;
  QValueAxis* y_ = nullptr;
  std::int64_t unix_ms_ = -1;
  bool calendar_ = true;
  void label_time_axis(double x0, double x1);
};

// Wait CDFs (x: hours, y: fraction of jobs that waited at most x).
class CdfChart : public QChartView {
  Q_OBJECT
 public:
  explicit CdfChart(QWidget* parent = nullptr);
  void set_cdfs(const std::vector<Cdf>& cdfs);
};

}  // namespace headroom::gui
