#pragma once

#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "mend/base/status.h"
#include "mend/db/sqlite.h"

namespace mend::store::internal {

// Copies a SQLite database's WAL into the database file on a thread of its own (a passive
// checkpoint on a connection of its own), so that no commit runs the copy and its fsync inside its
// COMMIT, as SQLite's automatic checkpoint does (docs/store_schema.md, "The WAL's checkpoints").
// A passive checkpoint never blocks a writer: it copies what was committed when it began, and the
// next writer after a complete copy starts the WAL file over.
//
// Thread-safe.
class WalCheckpointer {
 public:
  // Takes `conn`, a connection to the database file, and starts the thread.
  explicit WalCheckpointer(std::unique_ptr<db::SqliteConn> conn);
  // Stops the thread (after the checkpoint it is running, if any) and closes the connection.
  ~WalCheckpointer();
  WalCheckpointer(const WalCheckpointer&) = delete;
  WalCheckpointer& operator=(const WalCheckpointer&) = delete;

  // Asks for a checkpoint and returns at once. Requests made while one waits are one request; one
  // made while a checkpoint runs gets another after it.
  void Request();

  // Waits until no checkpoint is asked for or running; for tests.
  void WaitIdle();

  // When no checkpoint is asked for or running: how many WAL frames the newest one left copied
  // into the database (nullopt when busy, or when none ran since Forget).
  std::optional<int64_t> CopiedIfIdle();
  // Forgets the newest checkpoint's frame count: the WAL started over, so it counts other frames.
  void Forget();

  struct Stats {
    int64_t checkpoints = 0;  // checkpoints that ran without an error
    int64_t failures = 0;     // checkpoints that failed (the next request tries again)
    Status last_error;        // the newest failure's error
  };
  Stats stats();

 private:
  void Loop();

  std::unique_ptr<db::SqliteConn> conn_;  // used by the thread only
  std::mutex mu_;
  std::condition_variable cv_;
  bool requested_ = false;         // guarded by mu_
  bool running_ = false;           // guarded by mu_
  bool stop_ = false;              // guarded by mu_
  Stats stats_;                    // guarded by mu_
  std::optional<int64_t> copied_;  // guarded by mu_
  std::thread thread_;             // last: started once everything above exists
};

}  // namespace mend::store::internal
