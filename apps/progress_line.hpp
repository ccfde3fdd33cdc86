#pragma once

// A one-line progress report on stderr, rewritten (with \r) twice a second by a thread of its own
// while runs go on, and cleared when it ends; only when stderr is a terminal.
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

namespace headroom::app {

class ProgressLine {
 public:
  // `text()` gives the line; it is called from the printing thread.
  explicit ProgressLine(std::function<std::string()> text) : text_(std::move(text)) {
    if (isatty(STDERR_FILENO) == 0) return;
    thread_ = std::thread([this] {
      std::unique_lock<std::mutex> lock(mu_);
      while (!done_) {
        std::fprintf(stderr, "\r\033[K%s", text_().c_str());
        std::fflush(stderr);
        wake_.wait_for(lock, std::chrono::milliseconds(500), [this] { return done_; });
      }
      std::fputs("\r\033[K", stderr);
      std::fflush(stderr);
    });
  }
  // Prints `text` to stderr in place of the line (redrawn below it on the next tick).
  void message(const std::string& text) {
    std::lock_guard<std::mutex> lock(mu_);
    if (thread_.joinable() && !done_) std::fputs("\r\033[K", stderr);
    std::fputs(text.c_str(), stderr);
    std::fflush(stderr);
  }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;
  // Stops the thread and clears the line.
  void stop() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  ~ProgressLine() { stop(); }

 private:
  std::function<std::string()> text_;
  std::mutex mu_;
  std::condition_variable wake_;
  bool done_ = false;
  std::thread thread_;
};

}  // namespace headroom::app
