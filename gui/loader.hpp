#pragma once

#include <QObject>
#include <QString>
#include <QThreadPool>
#include <atomic>
#include <functional>
#include <memory>
#include <set>

#include "gui/replay_data.hpp"

namespace headroom::gui {

// Reads and prepares result files on worker threads (hotspot's JobTracker pattern): every load
// gets a rising id, cancel() makes every id issued so far stale, and results come back to the
// loader's thread through queued calls; stale ones are dropped.
class Loader : public QObject {
  Q_OBJECT
 public:
  using ReadFn = std::function<results::RunResult(const std::string&)>;

  explicit Loader(QObject* parent = nullptr, ReadFn read = {});
  ~Loader() override;  // waits for running workers; their results are dropped

  quint64 load(const QString& path);
  void cancel();
  bool busy() const { return !running_.empty(); }
  int running() const { return static_cast<int>(running_.size()); }

 signals:
  void stage(quint64 job, const QString& path, const QString& what);
  // Just before `loaded`: wall milliseconds spent reading the file and preparing the data.
  void timed(quint64 job, double read_ms, double prepare_ms);
  void loaded(quint64 job, std::shared_ptr<const ReplayData> data);
  void failed(quint64 job, const QString& path, const QString& message);
  void cancelled(quint64 job, const QString& path);
  void idle();

 private:
  bool stale(quint64 job) const { return job <= cancelled_upto_.load(); }
  void finish(quint64 job);

  ReadFn read_;
  QThreadPool pool_;
  quint64 next_id_ = 0;
  std::atomic<quint64> cancelled_upto_{0};
  std::set<quint64> running_;
};

}  // namespace headroom::gui
