#include "store/wal_checkpointer.h"

#include <utility>

namespace mend::store::internal {

WalCheckpointer::WalCheckpointer(std::unique_ptr<db::SqliteConn> conn)
    : conn_(std::move(conn)), thread_([this] { Loop(); }) {}

WalCheckpointer::~WalCheckpointer() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void WalCheckpointer::Request() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (requested_) return;
    requested_ = true;
  }
  cv_.notify_all();
}

void WalCheckpointer::WaitIdle() {
  std::unique_lock<std::mutex> lock(mu_);
  cv_.wait(lock, [&] { return stop_ || (!requested_ && !running_); });
}

std::optional<int64_t> WalCheckpointer::CopiedIfIdle() {
  std::lock_guard<std::mutex> lock(mu_);
  if (requested_ || running_) return std::nullopt;
  return copied_;
}

void WalCheckpointer::Forget() {
  std::lock_guard<std::mutex> lock(mu_);
  copied_.reset();
}

WalCheckpointer::Stats WalCheckpointer::stats() {
  std::lock_guard<std::mutex> lock(mu_);
  return stats_;
}

void WalCheckpointer::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [&] { return stop_ || requested_; });
    if (stop_) return;
    requested_ = false;
    running_ = true;
    lock.unlock();
    // PASSIVE: copies what it can without waiting for a lock, so a writer never waits for it.
    // Its row: whether it was blocked, the WAL's frames, the frames now copied.
    std::optional<int64_t> copied;
    Status s = [&]() -> Status {
      MEND_ASSIGN_OR_RETURN(db::SqliteStmt stmt, conn_->Prepare("PRAGMA wal_checkpoint(PASSIVE)"));
      MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (row && stmt.Int(2) >= 0) copied = stmt.Int(2);
      return OkStatus();
    }();
    lock.lock();
    running_ = false;
    if (s.ok()) {
      stats_.checkpoints += 1;
      copied_ = copied;
    } else {
      stats_.failures += 1;
      stats_.last_error = std::move(s);
    }
    cv_.notify_all();
  }
}

}  // namespace mend::store::internal
