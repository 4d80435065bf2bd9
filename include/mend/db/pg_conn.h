#pragma once

// The PostgreSQL layer the stores share: PgConn (one libpq connection, SQLSTATE mapped to Status,
// prepared statements), PgPool, PgBudget (one process's connections, shared by its pools),
// PgTransact with retries on serialization failures and deadlocks, the process's PgActivity, and
// helpers that keep passwords out of messages. A PgConn serves one user at a time; pools and
// budgets are thread-safe.

#include <libpq-fe.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"

namespace mend::db {

/// `url` with its password replaced by "***" (URI userinfo and `password=` parameters), for logs
/// and error messages.
std::string MaskPostgresUrl(const std::string& url);

/// One statement parameter: text, raw bytes (sent in binary, for bytea columns) or NULL.
struct PgParam {
  ///@{
  /// A parameter of each kind: text, an integer as text, bytes, NULL.
  static PgParam Text(std::string_view v) { return PgParam{std::string(v), false}; }
  static PgParam Int(int64_t v) { return PgParam{std::to_string(v), false}; }
  static PgParam Bytes(std::string_view v) { return PgParam{std::string(v), true}; }
  static PgParam Null() { return PgParam{std::nullopt, false}; }
  ///@}
  /// A bytea[] parameter (one dimension, no NULL element) in PostgreSQL's binary array format, so
  /// the bytes travel as they are; the statement must give it that type, e.g. `$1::bytea[]`.
  static PgParam BytesArray(const std::vector<std::string>& items);

  std::optional<std::string> value;  ///< nullopt: NULL
  bool binary = false;               ///< sent as bytes (bytea)
};

/// The rows of one statement, in text format. Owns the libpq result. Move-only.
class PgResult {
 public:
  /// Takes ownership of `res`.
  explicit PgResult(PGresult* res) : res_(res, &PQclear) {}

  /// How many rows.
  int rows() const { return PQntuples(res_.get()); }
  /// The name of column `col`.
  const char* ColumnName(int col) const { return PQfname(res_.get(), col); }
  /// Whether the value is NULL.
  bool IsNull(int row, int col) const { return PQgetisnull(res_.get(), row, col) != 0; }
  /// The value as text; "" for NULL.
  std::string Text(int row, int col) const;
  /// An integer column; nullopt when NULL or not an integer.
  std::optional<int64_t> Int(int row, int col) const;
  /// A bytea column decoded from its text form; nullopt when NULL or malformed.
  std::optional<std::string> Bytes(int row, int col) const;
  /// Rows changed by an INSERT, UPDATE or DELETE.
  int64_t affected() const;

 private:
  std::unique_ptr<PGresult, void (*)(PGresult*)> res_;
};

/// The detail code (Status::detail_code) of an error carrying SQLSTATE `state`, e.g.
/// "postgres_40001". Transactions retry on serialization failures and deadlocks.
std::string SqlStateDetail(std::string_view state);
/// Whether `s` is a serialization failure or a deadlock (SQLSTATE 40001, 40P01).
bool IsRetryableConflict(const Status& s);

/// Whether `s` is the server's answer to a prepared statement it does not have (SQLSTATE 26000:
/// a pooler gave the connection another session, or reset it). PgTransact runs the transaction
/// again once.
bool IsStatementMissing(const Status& s);

/// `message` with every occurrence of the password of `url` replaced by "***".
std::string ScrubPassword(std::string message, const std::string& url);

/// `name` as a quoted SQL identifier.
std::string QuoteIdentifier(const std::string& name);

/// A text[] parameter's value: `items` as an array literal, each element quoted (so commas,
/// braces, quotes, backslashes and NULL are data).
std::string PgTextArray(const std::vector<std::string>& items);

/// One libpq connection. Not thread-safe: the pool hands it to one user at a time.
///
/// Prepared statements are named after the connection (a random token) and a counter that never
/// repeats, so that behind a pooler in transaction mode (PgBouncer), which may run a statement on
/// another server session, a name never reaches a statement of someone else's. When the server
/// answers that a statement is not prepared (SQLSTATE 26000: the pooler moved the session or ran
/// `DISCARD ALL`), every statement is prepared again on next use; outside a transaction the call
/// that found it missing is prepared and run once more at once.
class PgConn {
 public:
  /// kInvalidArgument when libpq cannot parse `url`, kUnavailable when the server cannot be reached
  /// or refuses us. Messages never contain the password.
  static Result<std::unique_ptr<PgConn>> Connect(const std::string& url, Duration timeout);
  ~PgConn();
  PgConn(const PgConn&) = delete;
  PgConn& operator=(const PgConn&) = delete;

  /// How the server plans a statement. kPerCall: parsed and planned at every call, for the values
  /// given (an unnamed statement). kPrepared: prepared once per connection as a named statement,
  /// whose parse and plan later calls reuse (PostgreSQL may keep a generic plan after five calls);
  /// for the fixed statements of the save path, whose plan does not depend on the values
  /// (primary-key lookups, inserts, updates and deletes by key).
  enum class Plan { kPerCall, kPrepared };

  /// Runs one statement. Errors map SQLSTATE classes: 08 (connection), 57P (shutdown), 53
  /// (resources: kResourceExhausted), 40001/40P01 and 55P03 (kUnavailable once retries are spent),
  /// XX001/XX002 (kDataLoss); anything else kInternal. The detail code carries the SQLSTATE.
  Result<PgResult> Exec(const char* sql, const std::vector<PgParam>& params = {},
                        Plan plan = Plan::kPerCall);
  /// Runs one or more statements without parameters, e.g. "BEGIN" or a schema script.
  Status Run(const char* sql);

  /// Resets the session to what a new connection has (`DISCARD ALL`): settings, prepared
  /// statements, temporary tables. Outside any transaction.
  Status ResetSession();

  /// Prepares `sql` (with `params` parameters) as Exec's kPrepared does, unless it already is: for
  /// statements sent later in pipeline mode, where preparing is not possible. Errors as Exec.
  Status Prepare(const char* sql, int params);

  ///@{
  /// Pipeline mode (libpq's): statements are sent without waiting for each other's results, so a
  /// batch of them costs one round trip. The sequence, on a connection outside any transaction:
  /// Prepare every statement to be sent as kPrepared; EnterPipeline; Send each statement in order;
  /// Sync; Receive once per Send, in the same order; AwaitSync; ExitPipeline. Exec and Run fail
  /// while the connection is in pipeline mode.
  ///
  /// The server runs the statements in order. Once one fails, it skips the rest up to the Sync:
  /// Receive returns the failing statement's error (mapped as Exec maps it) and, for every
  /// statement skipped, kAborted with detail code "postgres_pipeline_aborted". Inside an explicit
  /// BEGIN, the transaction is then left failed: ROLLBACK after ExitPipeline. When the connection
  /// breaks, every call that needs the server returns kUnavailable and healthy() is false.
  ///
  /// EnterPipeline first looks, without waiting, for anything the server sent while the
  /// connection was idle: a server says nothing to an idle connection unless it is ending it (a
  /// restart, a terminated backend, an idle timeout), so such a connection is kUnavailable there,
  /// before anything was sent, and no longer healthy().
  Status EnterPipeline();
  Status Send(const char* sql, const std::vector<PgParam>& params = {}, Plan plan = Plan::kPerCall);
  Status Sync();
  Result<PgResult> Receive(const char* sql);
  Status AwaitSync();
  Status ExitPipeline();
  ///@}

  /// False once the connection is lost; the pool then drops it.
  bool healthy() const { return !ended_ && PQstatus(conn_) == CONNECTION_OK; }
  /// Whether the connection is outside any transaction and pipeline (a failed transaction left
  /// open is rolled back).
  bool idle() const {
    return PQtransactionStatus(conn_) == PQTRANS_IDLE && PQpipelineStatus(conn_) == PQ_PIPELINE_OFF;
  }

 private:
  PgConn(PGconn* conn, std::string url);
  // Counts the error and forgets the prepared statements when the server lost them.
  Status ErrorOf(const PGresult* res, std::string_view sql);
  // Takes ownership of `res`: the result, or the error it carries.
  Result<PgResult> Finish(PGresult* res, const char* sql);
  // The name of `sql` prepared on this connection, preparing it on first use.
  Result<const std::string*> PreparedName(const char* sql, int params);

  PGconn* conn_;
  std::string url_;     // for scrubbing messages only
  bool ended_ = false;  // the server spoke while the connection was idle: it is ending it
  // Statement text -> its prepared name. Prepared statements belong to the session: they outlive
  // a rolled-back transaction and go with the connection.
  std::unordered_map<std::string, std::string> prepared_;
  std::string statement_prefix_;   // "mend_<token>_", the connection's own
  uint64_t statements_named_ = 0;  // names given so far; never reused
};

/// What the process's PostgreSQL connections and pools have done since it started, summed over
/// every pool and connection (the `mend_pg_*` metrics, docs/metrics.md).
struct PgActivity {
  int64_t connections_open = 0;       ///< connections open now
  int64_t connections_in_use = 0;     ///< connections handed out by a pool now
  int64_t acquires = 0;               ///< connections handed out by pools
  int64_t waits = 0;                  ///< of those, how many were waited for
  double wait_seconds = 0;            ///< the time spent waiting, in all
  int64_t round_trips = 0;            ///< requests sent and answered (a pipeline counts once)
  int64_t errors = 0;                 ///< statements and requests that failed
  int64_t statements_reprepared = 0;  ///< statements prepared again after the server lost them
};
/// The process's PgActivity now.
PgActivity ProcessPgActivity();

class PgBudget;

/// A pool of up to `size` connections, opened on demand. Thread-safe. Callers are served in the
/// order they asked. With a PgBudget, every connection the pool opens takes one of the budget's
/// connections (see there).
class PgPool {
 public:
  /// `setup` runs on every new connection before its first use (e.g. setting search_path), and
  /// on a connection another pool of the budget gave up, after its session was reset.
  PgPool(std::string url, Duration timeout, int size, std::function<Status(PgConn&)> setup,
         std::shared_ptr<PgBudget> budget = nullptr);
  /// Closes the idle connections (and gives their places in the budget back). Every Handle must
  /// be gone.
  ~PgPool();
  PgPool(const PgPool&) = delete;
  PgPool& operator=(const PgPool&) = delete;

  /// A connection for the caller alone, returned to the pool when the handle is destroyed (or
  /// dropped when it is broken or left inside a transaction).
  class Handle {
   public:
    /// A connection of `pool` (Acquire makes them).
    Handle(PgPool* pool, std::unique_ptr<PgConn> conn) : pool_(pool), conn_(std::move(conn)) {}
    /// Moves the connection; the moved-from handle returns nothing.
    Handle(Handle&&) = default;
    Handle& operator=(Handle&&) = delete;
    ~Handle();
    ///@{
    /// The connection.
    PgConn& operator*() { return *conn_; }
    PgConn* operator->() { return conn_.get(); }
    ///@}

   private:
    PgPool* pool_;
    std::unique_ptr<PgConn> conn_;
  };

  /// Waits, behind those who asked first, while every connection is in use (and, with a budget,
  /// while the budget has none to give); connects when the pool is not full (errors as
  /// PgConn::Connect, or the setup's).
  Result<Handle> Acquire();

  /// Callers waiting for a connection of this pool now (not those waiting for the budget).
  int waiting() const;

  /// The shared state of a pool: its connections and the callers waiting for one (in the .cc).
  struct State;

 private:
  void Return(std::unique_ptr<PgConn> conn);
  // Connects and sets up a connection of this pool.
  Result<std::unique_ptr<PgConn>> Open();

  const std::string url_;
  const Duration timeout_;
  const std::function<Status(PgConn&)> setup_;
  const std::shared_ptr<PgBudget> budget_;
  const std::shared_ptr<State> state_;
};

/// The connections one process may hold to one PostgreSQL database, shared by the pools of every
/// module that uses it (`postgres.max_connections`, docs/configuration.md), so that the process
/// holds at most that many whatever each pool's size. A pool takes one for every connection it
/// opens and gives it back when it closes it. A pool that needs one while none is left waits, in
/// the order of asking, and is served by the pools of the others: a connection returned while
/// someone waits goes to the first waiter instead of staying idle, and an idle connection of any
/// pool is handed over at once. A connection that moves to another pool has its session reset
/// (`DISCARD ALL`: settings, prepared statements, temporary tables) and is set up by its new pool.
///
/// A caller that holds a connection while it asks for another (of any pool of the budget) can
/// wait forever once the budget is spent; mend's modules never do. Thread-safe.
class PgBudget {
 public:
  /// At most `max_connections` (at least 1) connections at once.
  explicit PgBudget(int max_connections);
  PgBudget(const PgBudget&) = delete;
  PgBudget& operator=(const PgBudget&) = delete;

  /// The most connections the pools may hold at once.
  int max_connections() const { return max_; }
  /// Connections the pools hold now (in use or idle).
  int held() const;
  /// Pools waiting for a connection now.
  int waiting() const;

 private:
  friend class PgPool;
  struct Waiter;
  // A connection for `pool`: {nullptr, ...} is the right to open one; else one given up by a pool
  // (`moved`: another than `pool`). Waits behind earlier callers while none is left.
  struct Grant {
    std::unique_ptr<PgConn> conn;
    bool moved = false;
    bool waited = false;
  };
  Grant Take(const PgPool::State* pool);
  // `conn`, healthy and idle, returned by `pool`: to the first waiter, or back into the pool's
  // idle connections (under this budget's lock, so that no waiter misses it).
  void Return(const std::shared_ptr<PgPool::State>& pool, std::unique_ptr<PgConn> conn);
  // A connection of this budget was closed (or never opened): its place goes to the first waiter.
  void Release(int n = 1);
  void Register(const std::shared_ptr<PgPool::State>& pool);
  void ReleaseLocked(int n);

  const int max_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int held_ = 0;                                     // guarded by mu_
  std::vector<Waiter*> waiters_;                     // in order of asking; guarded by mu_
  std::vector<std::weak_ptr<PgPool::State>> pools_;  // guarded by mu_
};

/// Runs `body` in one transaction begun by `begin` (e.g. "BEGIN" or "BEGIN ISOLATION LEVEL
/// REPEATABLE READ READ ONLY") on a connection of `pool`: COMMIT when it returns OK, ROLLBACK
/// otherwise. A serialization failure or deadlock (IsRetryableConflict) runs it again, up to
/// `max_attempts` times in all; so does, once each, a connection found closed before COMMIT and
/// a prepared statement the server lost (IsStatementMissing).
Status PgTransact(PgPool& pool, const char* begin, const std::function<Status(PgConn&)>& body,
                  int max_attempts = 5);

/// The same on one connection of the caller's (e.g. a store's first, which creates its tables
/// before its pool's connections can be set up): `body` runs in BEGIN ... COMMIT, again after a
/// serialization failure or deadlock, up to `max_attempts` times in all, and once after a
/// prepared statement the server lost.
Status PgTransactOn(PgConn& conn, const std::function<Status(PgConn&)>& body, int max_attempts = 5);

}  // namespace mend::db
