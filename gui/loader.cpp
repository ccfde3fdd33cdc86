#include "gui/loader.hpp"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QThread>
#include <algorithm>
#include <exception>

#include "results/hdf5_io.hpp"

namespace headroom::gui {

Loader::Loader(QObject* parent, ReadFn read) : QObject(parent), read_(std::move(read)) {
  if (!read_) read_ = [](const std::string& path) { return results::read_hdf5(path); };
  pool_.setMaxThreadCount(std::max(2, QThread::idealThreadCount() / 2));
}

Loader::~Loader() {
  cancel();
  pool_.waitForDone();
}

quint64 Loader::load(const QString& path) {
  const quint64 job = ++next_id_;
  running_.insert(job);
  const auto post = [this](auto fn) { QMetaObject::invokeMethod(this, std::move(fn), Qt::QueuedConnection); };
  pool_.start([this, job, path, post] {
    try {
      post([this, job, path] {
        if (!stale(job)) emit stage(job, path, tr("reading %1").arg(QFileInfo(path).fileName()));
      });
      QElapsedTimer clock;
      clock.start();
      results::RunResult result = read_(path.toStdString());
      const double read_ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
      if (stale(job)) {
        post([this, job, path] {
          emit cancelled(job, path);
          finish(job);
        });
        return;
      }
      post([this, job, path] {
        if (!stale(job)) emit stage(job, path, tr("preparing %1").arg(QFileInfo(path).fileName()));
      });
      clock.restart();
      std::shared_ptr<const ReplayData> data = prepare(std::move(result), path);
      const double prepare_ms = static_cast<double>(clock.nsecsElapsed()) / 1e6;
      post([this, job, path, data = std::move(data), read_ms, prepare_ms] {
        if (stale(job)) {
          emit cancelled(job, path);
        } else {
          emit timed(job, read_ms, prepare_ms);
          emit loaded(job, data);
        }
        finish(job);
      });
    } catch (const std::exception& e) {
      const QString message = QString::fromLocal8Bit(e.what());
      post([this, job, path, message] {
        if (stale(job))
          emit cancelled(job, path);
        else
          emit failed(job, path, message);
        finish(job);
      });
    }
  });
  return job;
}

void Loader::cancel() { cancelled_upto_.store(next_id_); }

void Loader::finish(quint64 job) {
  running_.erase(job);
  if (running_.empty()) emit idle();
}

}  // namespace headroom::gui
