#include <QApplication>
#include <QCommandLineParser>

#include "gui/main_window.hpp"

int main(int argc, char** argv) {
  QApplication app(argc, argv);
  QApplication::setApplicationName("headroom-gui");
  QApplication::setApplicationVersion("0.1.0");
  QCommandLineParser parser;
  parser.setApplicationDescription("Replays headroom results: queues, utilization and tenant fairness.");
  parser.addHelpOption();
  parser.addVersionOption();
  parser.addPositionalArgument("results", "Result files (.h5) written by `headroom run`.", "[run.h5 ...]");
  const QCommandLineOption screenshots("screenshot-dir", "After loading, save each tab to DIR/<tab>.png and quit.",
                                       "DIR");
  const QCommandLineOption load_only("load-only",
                                     "Open the results, print how long each took (read, prepare, views) and quit.");
  const QCommandLineOption size("size", "Window size, e.g. 1560x960.", "WxH", "1560x960");
  parser.addOption(screenshots);
  parser.addOption(size);
  parser.addOption(load_only);
  parser.process(app);

  headroom::gui::MainWindow window;
  const QStringList wh = parser.value(size).split('x');
  if (wh.size() == 2) window.resize(wh[0].toInt(), wh[1].toInt());
  window.show();
  window.open_files(parser.positionalArguments());
  if (parser.isSet(load_only)) window.quit_when_loaded();
  if (parser.isSet(screenshots)) window.screenshots_when_loaded(parser.value(screenshots));
  return app.exec();
}
