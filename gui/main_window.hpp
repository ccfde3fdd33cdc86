#pragma once

#include <QComboBox>
#include <QElapsedTimer>
#include <QLabel>
#include <QMainWindow>
#include <QProgressBar>
#include <QPushButton>
#include <QStringList>
#include <QTabWidget>
#include <QTimer>
#include <map>
#include <memory>

#include "gui/loader.hpp"
#include "gui/replay_view.hpp"
#include "gui/views.hpp"
#include "gui/whatif.hpp"

namespace headroom::gui {

// Renders the widget (a chart, the cluster map) as an SVG file; false when it cannot (or when
// built without Qt Svg).
bool write_svg(QWidget* widget, const QString& path);

class MainWindow : public QMainWindow {
  Q_OBJECT
 public:
  explicit MainWindow(QWidget* parent = nullptr);
  void open_files(const QStringList& paths);
  // After every pending load: grabs each tab to DIR/<tab>.png and quits (exit 1 when a load failed).
  void screenshots_when_loaded(const QString& dir);
  // After every pending load: quits (exit 1 when a load failed). Each load prints its read,
  // prepare and view times and the time from open to shown.
  void quit_when_loaded();
  // What File > What-if... does once its form is accepted: runs the edited scenario in the
  // background (busy bar and Cancel in the status bar) and opens the result next to the ones
  // already open. False when it cannot start (what_if_run()->error() says why).
  bool start_what_if(const QString& scenario_path, const std::string& yaml_text, const WhatIfKnobs& knobs);
  WhatIfRun* what_if_run() const { return whatif_; }
  // The open results, in the order they were opened.
  std::vector<std::shared_ptr<const ReplayData>> results() const;
  ReplayView* replay_view() const { return replay_; }
  // No message boxes (failures go to stderr only): for tests.
  void set_quiet(bool quiet) { quiet_ = quiet; }

 signals:
  void opened(const QString& path);  // a result was loaded and is in the views

 protected:
  void dragEnterEvent(QDragEnterEvent* event) override;
  void dropEvent(QDropEvent* event) override;

 private:
  void on_loaded(quint64 job, std::shared_ptr<const ReplayData> data);
  void on_failed(quint64 job, const QString& path, const QString& message);
  void on_idle();
  bool compare_dirty_ = false;  // runs loaded while more were coming: the Compare tab is filled at idle
  void set_current(int index);
  void open_dialog();
  void export_png();
  void export_svg();
  void what_if();
  void what_if_ended();
  void show_busy(bool on);
  void export_csv();
  void take_screenshots();

  Loader* loader_;
  QTabWidget* tabs_;
  TimelineView* timeline_;
  ReplayView* replay_;
  JobsView* jobs_;
  FairnessView* fairness_;
  CompareView* compare_;
  QComboBox* run_;
  QLabel* busy_label_;
  QProgressBar* busy_bar_;
  QPushButton* cancel_;
  std::map<quint64, std::shared_ptr<const ReplayData>> runs_;  // by load id: the order of opening
  QString screenshot_dir_;
  bool quit_when_loaded_ = false;
  quint64 first_shown_ = 0;                               // the load to show when it arrives (0: none)
  std::map<quint64, std::pair<double, double>> load_ms_;  // by load id: read, prepare
  int failures_ = 0;
  QElapsedTimer since_open_;
  bool quiet_ = false;
  WhatIfRun* whatif_ = nullptr;  // File > What-if...'s `headroom run`
  QTimer whatif_tick_;
};

}  // namespace headroom::gui
