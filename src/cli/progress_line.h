#pragma once

#include <mutex>
#include <ostream>
#include <string>

namespace mend::cli {

// Progress on a terminal: one line rewritten in place on stderr. Disabled, it prints nothing, so
// output that is not a terminal (a file, a pipe, a test) stays free of it. Thread-safe.
class ProgressLine {
 public:
  ProgressLine(std::ostream& err, bool enabled) : err_(err), enabled_(enabled) {}
  ~ProgressLine() { Finish(); }
  ProgressLine(const ProgressLine&) = delete;
  ProgressLine& operator=(const ProgressLine&) = delete;

  void Show(const std::string& text) {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mu_);
    err_ << "\r\033[K" << text << std::flush;
    shown_ = true;
  }
  // Clears the line, so what is printed next starts on a clean one.
  void Finish() {
    if (!enabled_) return;
    std::lock_guard<std::mutex> lock(mu_);
    if (!shown_) return;
    err_ << "\r\033[K" << std::flush;
    shown_ = false;
  }

 private:
  std::ostream& err_;
  const bool enabled_;
  bool shown_ = false;
  std::mutex mu_;
};

}  // namespace mend::cli
