#include "gui/main_window.hpp"

#include <QApplication>
#include <QAreaSeries>
#include <QDir>
#include <QDragEnterEvent>
#include <QDropEvent>
#include <QElapsedTimer>
#include <QFile>
#include <QFileDialog>
#include <QFileInfo>
#include <QFontMetricsF>
#include <QGraphicsTextItem>
#include <QLabel>
#include <QLegend>
#include <QLegendMarker>
#include <QLineSeries>
#include <QMenuBar>
#include <QMessageBox>
#include <QMimeData>
#include <QStatusBar>
#include <QTextStream>
#include <QTimer>
#include <QToolBar>
#include <cstdio>
#ifdef HEADROOM_GUI_SVG
#include <QPainter>
#include <QSvgGenerator>
#endif

#include <QCoreApplication>
#include <QDialog>

#include "gui/tables.hpp"
#include "gui/whatif.hpp"
#include "gui/whatif_dialog.hpp"

namespace headroom::gui {

MainWindow::MainWindow(QWidget* parent) : QMainWindow(parent), loader_(new Loader(this)) {
  setWindowTitle(tr("headroom"));
  setAcceptDrops(true);
  tabs_ = new QTabWidget;
  timeline_ = new TimelineView;
  jobs_ = new JobsView;
  fairness_ = new FairnessView;
  compare_ = new CompareView;
  replay_ = new ReplayView;
  tabs_->addTab(timeline_, tr("Timeline"));
  tabs_->addTab(replay_, tr("Replay"));
  tabs_->addTab(jobs_, tr("Jobs"));
  tabs_->addTab(fairness_, tr("Fairness"));
  tabs_->addTab(compare_, tr("Compare"));
  setCentralWidget(tabs_);

  QMenu* file = menuBar()->addMenu(tr("&File"));
  QAction* open = file->addAction(tr("&Open..."), this, &MainWindow::open_dialog);
  open->setShortcut(QKeySequence::Open);
  file->addAction(tr("&What-if..."), this, &MainWindow::what_if)->setShortcut(tr("Ctrl+W"));
  file->addSeparator();
  file->addAction(tr("Export chart as &PNG..."), this, &MainWindow::export_png)->setShortcut(tr("Ctrl+E"));
  [[maybe_unused]] QAction* svg = file->addAction(tr("Export chart as &SVG..."), this, &MainWindow::export_svg);
#ifndef HEADROOM_GUI_SVG
  svg->setEnabled(false);
  svg->setToolTip(tr("Built without Qt Svg"));
#endif
  file->addAction(tr("Export table as &CSV..."), this, &MainWindow::export_csv)->setShortcut(tr("Ctrl+Shift+E"));
  file->addSeparator();
  file->addAction(tr("&Quit"), qApp, &QApplication::quit)->setShortcut(QKeySequence::Quit);
  QMenu* view = menuBar()->addMenu(tr("&View"));
  // Calendar dates on the time axes when the trace gives a start date; off: days since the first submit.
  QAction* calendar = view->addAction(tr("&Calendar time (UTC)"));
  calendar->setObjectName(QStringLiteral("calendar_time"));
  calendar->setCheckable(true);
  calendar->setChecked(true);
  connect(calendar, &QAction::toggled, this, [this](bool on) {
    for (CurveChart* c : findChildren<CurveChart*>()) c->set_time_base(c->unix_ms(), on);
  });
  view->addAction(tr("&Reset zoom"), this,
                  [this] {
                    if (auto* v = qobject_cast<View*>(tabs_->currentWidget())) v->reset_zoom();
                  })
      ->setShortcut(tr("Ctrl+0"));

  // One time cursor: the Timeline's charts and the Replay tab move it together.
  connect(timeline_->sync(), &TimeCharts::cursor_changed, replay_, &ReplayView::set_cursor);
  connect(replay_, &ReplayView::cursor_moved, timeline_, &TimelineView::set_cursor);
  connect(jobs_, &JobsView::job_selected, replay_, &ReplayView::set_highlight);
  connect(replay_, &ReplayView::open_job, this, [this](int job) {
    tabs_->setCurrentWidget(jobs_);
    jobs_->select_job(job);
  });

  QToolBar* bar = addToolBar(tr("Run"));
  bar->setMovable(false);
  bar->addAction(open);
  bar->addSeparator();
  bar->addWidget(new QLabel(tr(" Result: ")));
  run_ = new QComboBox;
  run_->setSizeAdjustPolicy(QComboBox::AdjustToContents);
  run_->setToolTip(tr("The result shown on the Timeline, Jobs and Fairness tabs"));
  bar->addWidget(run_);
  connect(run_, &QComboBox::currentIndexChanged, this, &MainWindow::set_current);

  busy_label_ = new QLabel;
  busy_bar_ = new QProgressBar;
  busy_bar_->setRange(0, 0);
  busy_bar_->setMaximumWidth(160);
  cancel_ = new QPushButton(tr("Cancel"));
  statusBar()->addPermanentWidget(busy_label_);
  statusBar()->addPermanentWidget(busy_bar_);
  statusBar()->addPermanentWidget(cancel_);
  for (QWidget* w :
       {static_cast<QWidget*>(busy_label_), static_cast<QWidget*>(busy_bar_), static_cast<QWidget*>(cancel_)})
    w->hide();
  statusBar()->showMessage(tr("Open a result file: File > Open, or drop .h5 files here"));
  cancel_->setObjectName(QStringLiteral("cancel"));
  connect(cancel_, &QPushButton::clicked, this, [this] {
    if (whatif_->running()) {
      whatif_->cancel();
      return;
    }
    loader_->cancel();
    first_shown_ = 0;
    statusBar()->showMessage(tr("Loading cancelled"), 5000);
  });

  connect(loader_, &Loader::stage, this, [this](quint64, const QString&, const QString& what) {
    busy_label_->setText(loader_->running() > 1 ? tr("%1 (%2 files)").arg(what).arg(loader_->running()) : what);
  });
  connect(loader_, &Loader::timed, this, [this](quint64 job, double read_ms, double prepare_ms) {
    load_ms_[job] = {read_ms, prepare_ms};
  });
  connect(loader_, &Loader::loaded, this, &MainWindow::on_loaded);
  connect(loader_, &Loader::failed, this, &MainWindow::on_failed);

  whatif_ = new WhatIfRun(find_headroom(QCoreApplication::applicationDirPath()), this);
  connect(&whatif_tick_, &QTimer::timeout, this, [this] {
    busy_label_->setText(tr("What-if: running headroom (%1)").arg(format_duration(whatif_->elapsed_ms())));
  });
  connect(whatif_, &WhatIfRun::finished, this, [this](const QString& result) {
    what_if_ended();
    statusBar()->showMessage(tr("What-if finished in %1").arg(format_duration(whatif_->elapsed_ms())), 5000);
    open_files({result});
  });
  connect(whatif_, &WhatIfRun::failed, this, [this](const QString& message) {
    what_if_ended();
    std::fprintf(stderr, "headroom-gui: what-if failed: %s\n", qPrintable(message));
    if (screenshot_dir_.isEmpty() && !quit_when_loaded_ && !quiet_)
      QMessageBox::warning(this, tr("What-if failed"), message);
  });
  connect(whatif_, &WhatIfRun::cancelled, this, [this] {
    what_if_ended();
    statusBar()->showMessage(tr("What-if run cancelled"), 5000);
  });
  connect(loader_, &Loader::idle, this, &MainWindow::on_idle);
}

void MainWindow::open_files(const QStringList& paths) {
  if (!loader_->busy()) since_open_.start();
  for (const QString& p : paths) {
    const quint64 job = loader_->load(p);
    // With nothing shown yet, the first file named is shown, whichever finishes loading first.
    if (runs_.empty() && first_shown_ == 0) first_shown_ = job;
  }
  if (loader_->busy())
    for (QWidget* w :
         {static_cast<QWidget*>(busy_label_), static_cast<QWidget*>(busy_bar_), static_cast<QWidget*>(cancel_)})
      w->show();
}

void MainWindow::on_loaded(quint64 job, std::shared_ptr<const ReplayData> data) {
  QElapsedTimer views;
  views.start();
  runs_[job] = data;
  const QSignalBlocker block(run_);
  const QString current = run_->currentData().toString();
  run_->clear();
  std::vector<std::shared_ptr<const ReplayData>> ordered;
  for (const auto& [id, run] : runs_) {
    ordered.push_back(run);
    run_->addItem(tr("%1 (%2)").arg(run->label, QString::fromStdString(run->result.policy)), QString::number(id));
  }
  int keep = run_->findData(current);
  if (job == first_shown_) {
    keep = -1;
    first_shown_ = 0;
  }
  const int show = keep >= 0 ? keep : run_->findData(QString::number(job));
  run_->setCurrentIndex(show);
  if (keep < 0) set_current(show);
  // Opening many files at once (the 20 runs of a bake-off): the Compare tab is filled once, when
  // the last one is in (on_idle), not once per file.
  compare_dirty_ = loader_->running() > 1;
  if (!compare_dirty_) compare_->set_runs(std::move(ordered));
  statusBar()->showMessage(tr("Loaded %1").arg(data->path), 5000);
  emit opened(data->path);
  const auto [read_ms, prepare_ms] = load_ms_[job];
  std::fprintf(stderr, "headroom-gui: loaded %s (%zu jobs) in %lld ms: read %.0f ms, prepare %.0f ms, views %.0f ms\n",
               qPrintable(data->path), data->result.jobs.size(), static_cast<long long>(since_open_.elapsed()), read_ms,
               prepare_ms, static_cast<double>(views.nsecsElapsed()) / 1e6);
}

std::vector<std::shared_ptr<const ReplayData>> MainWindow::results() const {
  std::vector<std::shared_ptr<const ReplayData>> out;
  for (const auto& [id, run] : runs_) out.push_back(run);
  return out;
}

void MainWindow::on_failed(quint64 job, const QString& path, const QString& message) {
  ++failures_;
  if (job == first_shown_) first_shown_ = 0;
  std::fprintf(stderr, "headroom-gui: cannot open %s: %s\n", qPrintable(path), qPrintable(message));
  if (screenshot_dir_.isEmpty() && !quit_when_loaded_ && !quiet_)
    QMessageBox::warning(this, tr("Cannot open result"), message);
}

void MainWindow::show_busy(bool on) {
  for (QWidget* w :
       {static_cast<QWidget*>(busy_label_), static_cast<QWidget*>(busy_bar_), static_cast<QWidget*>(cancel_)})
    w->setVisible(on);
}

void MainWindow::on_idle() {
  if (compare_dirty_) {
    compare_dirty_ = false;
    QElapsedTimer clock;
    clock.start();
    compare_->set_runs(results());
    if (quit_when_loaded_)
      std::fprintf(stderr, "headroom-gui: Compare tab over %zu runs in %.0f ms; all open in %lld ms\n", runs_.size(),
                   static_cast<double>(clock.nsecsElapsed()) / 1e6, static_cast<long long>(since_open_.elapsed()));
  }
  if (!whatif_->running()) show_busy(false);
  if (!screenshot_dir_.isEmpty()) QTimer::singleShot(300, this, &MainWindow::take_screenshots);
  if (quit_when_loaded_) qApp->exit(failures_ > 0 || runs_.empty() ? 1 : 0);
}

void MainWindow::quit_when_loaded() {
  quit_when_loaded_ = true;
  if (!loader_->busy()) QTimer::singleShot(0, this, [this] { qApp->exit(failures_ > 0 || runs_.empty() ? 1 : 0); });
}

void MainWindow::set_current(int index) {
  const quint64 id = run_->itemData(index).toString().toULongLong();
  const auto it = runs_.find(id);
  if (it == runs_.end()) return;
  setWindowTitle(tr("%1 \u2014 headroom").arg(it->second->label));
  timeline_->set_data(it->second);
  replay_->set_data(it->second);
  replay_->set_cursor(timeline_->sync()->cursor());  // keep the shared cursor where it was
  jobs_->set_data(it->second);
  fairness_->set_data(it->second);
}

void MainWindow::open_dialog() {
  const QStringList paths =
      QFileDialog::getOpenFileNames(this, tr("Open results"), QString(), tr("headroom results (*.h5);;All files (*)"));
  open_files(paths);
}

void MainWindow::dragEnterEvent(QDragEnterEvent* event) {
  if (event->mimeData()->hasUrls()) event->acceptProposedAction();
}

void MainWindow::dropEvent(QDropEvent* event) {
  QStringList paths;
  for (const QUrl& url : event->mimeData()->urls())
    if (url.isLocalFile()) paths << url.toLocalFile();
  open_files(paths);
  event->acceptProposedAction();
}

void MainWindow::export_png() {
  auto* v = qobject_cast<View*>(tabs_->currentWidget());
  QWidget* chart = v ? v->current_chart() : nullptr;
  if (!chart) {
    statusBar()->showMessage(tr("This tab has no chart to export"), 5000);
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), tr("chart.png"), tr("PNG image (*.png)"));
  if (path.isEmpty()) return;
  if (!chart->grab().save(path, "PNG"))
    QMessageBox::warning(this, tr("Export failed"), tr("Cannot write %1").arg(path));
}

void MainWindow::export_svg() {
#ifdef HEADROOM_GUI_SVG
  auto* v = qobject_cast<View*>(tabs_->currentWidget());
  QWidget* chart = v ? v->current_chart() : nullptr;
  if (!chart) {
    statusBar()->showMessage(tr("This tab has no chart to export"), 5000);
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Export chart"), tr("chart.svg"), tr("SVG image (*.svg)"));
  if (path.isEmpty()) return;
  if (!write_svg(chart, path)) QMessageBox::warning(this, tr("Export failed"), tr("Cannot write %1").arg(path));
#endif
}

bool write_svg(QWidget* widget, const QString& path) {
#ifdef HEADROOM_GUI_SVG
  QSvgGenerator svg;
  svg.setFileName(path);
  svg.setSize(widget->size());
  svg.setViewBox(QRect(QPoint(0, 0), widget->size()));
  svg.setTitle(QStringLiteral("headroom chart"));
  QPainter painter;
  if (!painter.begin(&svg)) return false;
  widget->render(&painter, QPoint(), QRegion(), QWidget::DrawChildren);
  return painter.end() && QFileInfo(path).size() > 0;
#else
  (void)widget;
  (void)path;
  return false;
#endif
}

void MainWindow::what_if() {
  if (whatif_->running()) {
    statusBar()->showMessage(tr("A what-if run is already going"), 5000);
    return;
  }
  QString start_dir;
  if (const auto it = runs_.find(run_->currentData().toString().toULongLong()); it != runs_.end())
    start_dir = QFileInfo(QString::fromStdString(it->second->result.scenario_file)).absolutePath();
  const QString yaml = QFileDialog::getOpenFileName(this, tr("What-if: open a scenario"), start_dir,
                                                    tr("Scenarios (*.yaml *.yml);;All files (*)"));
  if (yaml.isEmpty()) return;
  QFile f(yaml);
  if (!f.open(QIODevice::ReadOnly | QIODevice::Text)) {
    QMessageBox::warning(this, tr("What-if"), tr("Cannot read %1").arg(yaml));
    return;
  }
  const std::string text = f.readAll().toStdString();
  WhatIfKnobs knobs;
  try {
    knobs = read_knobs(text);
  } catch (const std::exception& e) {
    QMessageBox::warning(this, tr("What-if"), tr("%1: %2").arg(yaml, QString::fromStdString(e.what())));
    return;
  }
  WhatIfDialog dialog(yaml, knobs, this);
  if (dialog.exec() != QDialog::Accepted) return;
  if (!start_what_if(yaml, text, dialog.knobs())) QMessageBox::warning(this, tr("What-if"), whatif_->error());
}

bool MainWindow::start_what_if(const QString& scenario_path, const std::string& yaml_text, const WhatIfKnobs& knobs) {
  if (!whatif_->start(scenario_path, yaml_text, knobs)) return false;
  whatif_tick_.setInterval(500);
  whatif_tick_.start();
  busy_label_->setText(tr("What-if: running headroom"));
  show_busy(true);
  statusBar()->showMessage(tr("What-if: %1 run %2").arg(whatif_->headroom(), whatif_->scenario()));
  return true;
}

void MainWindow::what_if_ended() {
  whatif_tick_.stop();
  if (!loader_->busy()) show_busy(false);
}

void MainWindow::export_csv() {
  auto* v = qobject_cast<View*>(tabs_->currentWidget());
  QAbstractItemModel* model = v ? v->current_table() : nullptr;
  if (!model) {
    statusBar()->showMessage(tr("This tab has no table to export"), 5000);
    return;
  }
  const QString path = QFileDialog::getSaveFileName(this, tr("Export table"), tr("table.csv"), tr("CSV (*.csv)"));
  if (path.isEmpty()) return;
  QFile f(path);
  if (!f.open(QIODevice::WriteOnly | QIODevice::Truncate | QIODevice::Text)) {
    QMessageBox::warning(this, tr("Export failed"), tr("Cannot write %1").arg(path));
    return;
  }
  QTextStream(&f) << to_csv(*model);
}

void MainWindow::screenshots_when_loaded(const QString& dir) {
  screenshot_dir_ = dir;
  if (!loader_->busy()) QTimer::singleShot(300, this, &MainWindow::take_screenshots);
}

void MainWindow::take_screenshots() {
  if (!QDir().mkpath(screenshot_dir_)) {
    std::fprintf(stderr, "headroom-gui: cannot create %s\n", qPrintable(screenshot_dir_));
    qApp->exit(1);
    return;
  }
  // Show the cursor and a selected job, as a user would after a click or two.
  if (!runs_.empty()) {
    const auto& d = runs_.begin()->second;
    if (!d->totals.empty()) {
      const auto& t = d->totals.full().t_days;
      timeline_->set_cursor(t[t.size() * 2 / 5]);
    }
    // A job running at the cursor, so that the map shows its outline.
    const Occupancy& o = replay_->map()->occupancy();
    if (!o.uses.empty())
      jobs_->select_job(static_cast<int>(o.uses[o.uses.size() / 2].job));
    else
      jobs_->select_row(0);
#ifdef HEADROOM_GUI_SVG
    tabs_->setCurrentWidget(timeline_);
    for (int k = 0; k < 5; ++k) QApplication::processEvents();
    const QString svg = QDir(screenshot_dir_).filePath(QStringLiteral("timeline-chart.svg"));
    if (!write_svg(timeline_->current_chart(), svg)) {
      std::fprintf(stderr, "headroom-gui: cannot write %s\n", qPrintable(svg));
      ++failures_;
    }
#endif
  }
  static const char* const names[] = {"timeline", "replay", "jobs", "fairness", "compare"};
  for (int i = 0; i < tabs_->count(); ++i) {
    tabs_->setCurrentIndex(i);
    for (int k = 0; k < 5; ++k) QApplication::processEvents();
    const QString path = QDir(screenshot_dir_).filePath(QString::fromLatin1(names[i]) + QStringLiteral(".png"));
    if (!grab().save(path, "PNG")) {
      std::fprintf(stderr, "headroom-gui: cannot write %s\n", qPrintable(path));
      ++failures_;
    } else {
      std::fprintf(stderr, "headroom-gui: wrote %s\n", qPrintable(path));
    }
  }
  // What each time chart drew, for scripts to check (scripts/gui-screenshots: the failure
  // drill's outage reaches 0 in the pool chart): tab, chart, series, points, lowest and highest y,
  // plot width in pixels, outage marks.
  QFile tsv(QDir(screenshot_dir_).filePath(QStringLiteral("charts.tsv")));
  if (tsv.open(QIODevice::WriteOnly | QIODevice::Text)) {
    QTextStream out(&tsv);
    out << "tab\tchart\tseries\tpoints\tmin\tmin_at_day\tmax\tplot_px\tmarks\n";
    for (int i = 0; i < tabs_->count() && i < static_cast<int>(std::size(names)); ++i)
      for (const CurveChart* c : tabs_->widget(i)->findChildren<CurveChart*>()) {
        if (!c->isVisible() && !c->isVisibleTo(tabs_->widget(i))) continue;
        for (QAbstractSeries* series : c->chart()->series()) {
          const auto* line = qobject_cast<QLineSeries*>(series);
          if (const auto* area = qobject_cast<QAreaSeries*>(series)) line = area->upperSeries();
          if (line == nullptr || series->objectName().startsWith(QLatin1String("outage-key"))) continue;
          double lo = 0, hi = 0, lo_x = 0;
          const auto points = line->points();
          for (qsizetype k = 0; k < points.size(); ++k) {
            if (k == 0 || points[k].y() < lo) lo_x = points[k].x();
            lo = k == 0 ? points[k].y() : std::min(lo, points[k].y());
            hi = k == 0 ? points[k].y() : std::max(hi, points[k].y());
          }
          out << names[i] << '\t' << c->chart()->title() << '\t' << series->name() << '\t' << points.size() << '\t'
              << lo << '\t' << lo_x << '\t' << hi << '\t' << qRound(c->chart()->plotArea().width()) << '\t'
              << c->marks().size() << '\n';
        }
      }
  } else {
    ++failures_;
  }
  // How each chart was laid out, for scripts/gui-screenshots (issue #36): its height and its
  // plot's, whether the legend got the room it asks for (else entries are cut), every legend
  // entry, and whether something drawn over the plot hides it (a legend inside the plot area).
  QFile layout_tsv(QDir(screenshot_dir_).filePath(QStringLiteral("layout.tsv")));
  if (layout_tsv.open(QIODevice::WriteOnly | QIODevice::Text)) {
    QTextStream out(&layout_tsv);
    out << "tab\tchart\theight\tplot_height\tlegend_height\tlegend_wanted\tlegend_inside_plot\tentries\tcolours\n";
    for (int i = 0; i < tabs_->count() && i < static_cast<int>(std::size(names)); ++i) {
      tabs_->setCurrentIndex(i);
      for (int k = 0; k < 5; ++k) QApplication::processEvents();
      for (const QChartView* v : tabs_->widget(i)->findChildren<QChartView*>()) {
        if (!v->isVisibleTo(tabs_->widget(i))) continue;
        const QChart* c = v->chart();
        const QLegend* legend = c->legend();
        QStringList entries;
        for (const QLegendMarker* m : legend->markers())
          if (m->isVisible()) entries << m->label();
        const QRectF plot = c->plotArea();
        const QRectF lg = legend->isVisible() ? legend->geometry() : QRectF();
        bool inside = !lg.isEmpty() && plot.intersects(lg);
        for (const QGraphicsItem* item : c->childItems())
          if (item->type() == QGraphicsTextItem::Type && item->isVisible() &&
              plot.intersects(item->mapRectToParent(item->boundingRect())))
            inside = true;
        // The height its entries need: one row each (a legend at the side lists them one a line).
        const double row = std::max(QFontMetricsF(legend->font()).height(), 12.0) + 7;
        const double wanted = legend->isVisible() ? row * static_cast<double>(entries.size()) : 0;
        QStringList colours;  // of the curves (not the outage keys)
        for (const QAbstractSeries* series : c->series()) {
          if (series->objectName().startsWith(QLatin1String("outage-key"))) continue;
          if (const auto* area = qobject_cast<const QAreaSeries*>(series))
            colours << area->color().name();
          else if (const auto* line = qobject_cast<const QLineSeries*>(series))
            colours << line->pen().color().name();
        }
        out << names[i] << '\t' << c->title() << '\t' << v->height() << '\t' << qRound(plot.height()) << '\t'
            << qRound(lg.height()) << '\t' << qRound(wanted) << '\t' << (inside ? 1 : 0) << '\t'
            << entries.join(QLatin1Char('|')) << '\t' << colours.join(QLatin1Char('|')) << '\n';
      }
      // The Compare tab's one legend for many runs.
      for (const QLabel* l : tabs_->widget(i)->findChildren<QLabel*>(QStringLiteral("run_legend")))
        if (l->isVisibleTo(tabs_->widget(i)))
          out << names[i] << "\trun legend\t" << l->height() << '\t' << l->height() << '\t' << l->height() << '\t'
              << l->sizeHint().height() << "\t0\t" << l->property("entries").toStringList().join(QLatin1Char('|'))
              << '\t' << l->property("colours").toStringList().join(QLatin1Char('|')) << '\n';
    }
  } else {
    ++failures_;
  }
  qApp->exit(failures_ > 0 || runs_.empty() ? 1 : 0);
}

}  // namespace headroom::gui
