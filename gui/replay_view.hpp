#pragma once

#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QSlider>
#include <QTableView>
#include <QTimer>
#include <QToolButton>
#include <QWidget>
#include <memory>
#include <vector>

#include "gui/cluster.hpp"
#include "gui/replay_data.hpp"
#include "gui/views.hpp"

namespace headroom::gui {

// The cluster at one instant: every pool's nodes as blocks of GPU cells coloured by the tenant
// holding them (idle cells light grey, partially used nodes framed in amber). When the cells
// would be smaller than 3 px, one square per node instead, its colour the main tenant's, mixed
// with grey by the share of the node in use.
class ClusterMap : public QWidget {
  Q_OBJECT
 public:
  explicit ClusterMap(QWidget* parent = nullptr);
  void set_data(std::shared_ptr<const ReplayData> data);
  void set_time(Tick t);  // absolute ticks
  void set_highlight(int job);
  const Occupancy& occupancy() const { return occ_; }
  // By node: 1 + the OutageKind of the outage it is in at the time shown, 0 when in service.
  const std::vector<std::uint8_t>& out_of_service() const { return out_; }
  // A split site: by node, the system (row of /partitions) that owns it at the time shown.
  const std::vector<std::int32_t>& owners() const { return owner_; }
  bool per_node() const { return per_node_; }
  int job_at(QPoint p) const;  // -1: none
  double last_paint_ms() const { return paint_ms_; }
  double last_query_ms() const { return query_ms_; }

 signals:
  void job_clicked(int job);
  void job_activated(int job);  // double-click

 protected:
  void paintEvent(QPaintEvent* event) override;
  void resizeEvent(QResizeEvent* event) override;
  void mousePressEvent(QMouseEvent* event) override;
  void mouseDoubleClickEvent(QMouseEvent* event) override;
  bool event(QEvent* event) override;

 private:
  struct PoolBox {
    int pool = 0, first_node = 0, nodes = 0, gpus_per_node = 0;
    int top = 0;  // y of the pool's label
    int per_row = 1;
    QString label;
  };
  void relayout();
  QRect node_rect(const PoolBox& b, int i) const;
  QColor job_colour(std::uint32_t job) const;
  int node_at(QPoint p, const PoolBox** box) const;

  std::shared_ptr<const ReplayData> data_;
  Occupancy occ_;
  std::vector<std::uint8_t> out_;
  std::vector<std::int32_t> owner_;  // a split site: by node, its system at the time shown
  std::vector<PoolBox> boxes_;
  bool per_node_ = false;
  int cell_ = 8, cols_ = 8, rows_ = 1, node_w_ = 0, node_h_ = 0, gap_ = 3, label_h_ = 16;
  int highlight_ = -1;
  double paint_ms_ = 0, query_ms_ = 0;
};

// Replay: play the run back at a chosen speed, with the cluster map and the queue at the cursor.
class ReplayView : public View {
  Q_OBJECT
 public:
  explicit ReplayView(QWidget* parent = nullptr);
  void set_data(std::shared_ptr<const ReplayData> data);
  void set_cursor(double x_days);  // from the Timeline; does not echo
  void set_highlight(int job) { map_->set_highlight(job); }
  QAbstractItemModel* current_table() const override { return queue_; }
  ClusterMap* map() const { return map_; }
  QueueModel* queue() const { return queue_; }

  Tick time() const { return time_; }  // the cursor, absolute ticks
  bool playing() const { return timer_.isActive(); }
  Tick step_ticks() const { return speed(); }  // simulated ticks per second of play, and per step
  // What each timer tick does with the wall time since the previous one: moves the cursor by
  // speed x wall_ms (whole ticks; a remainder under one tick carries over) and stops at the end.
  // Tests call it directly instead of waiting for the timer.
  void advance(qint64 wall_ms);

 signals:
  void cursor_moved(double x_days);
  void open_job(int job);

 protected:
  QWidget* default_chart() const override { return map_; }

 private:
  void set_time(Tick t, bool echo);
  void play(bool on);
  void tick();
  void step(int direction);
  Tick speed() const;
  void update_labels();

  std::shared_ptr<const ReplayData> data_;
  ClusterMap* map_;
  QueueModel* queue_;
  QTableView* queue_view_;
  QToolButton *play_, *back_, *forward_;
  QComboBox* speed_;
  QSlider* slider_;
  QLabel *clock_, *stats_, *legend_, *queue_title_, *selected_;
  QTimer timer_;
  QElapsedTimer wall_;
  Tick time_ = 0;
  double carry_ms_ = 0;
};

}  // namespace headroom::gui
