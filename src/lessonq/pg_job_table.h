#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/db/pg_conn.h"
#include "mend/lessonq/job.h"
#include "mend/lessonq/postgres_queue.h"

namespace mend::lessonq {

enum class JobState { kPending, kDead };

// The pending rows a process's workers may claim (its WorkerScope): rows whose recorded provider
// fits `endpoint` (JobFitsEndpoint), and with `ids` only those ids.
struct ClaimFilter {
  LessonEndpoint endpoint;
  std::optional<std::vector<std::string>> ids;
};

// A job a worker holds: its row may be changed only while `token` is still the row's claim token,
// and no other worker claims it before `locked_until`.
struct ClaimedJob {
  Job job;
  int64_t token = 0;
  Time locked_until{};
};

// Pending and dead jobs in lesson_jobs (docs/lesson_queue.md, "The PostgreSQL queue"). Every
// method is one statement, committed on return, on a pooled connection. Claim, Complete and
// Release use connections of their own, whose commits do not wait for the disk when
// options.claim_commit says so. While a job is claimed its next_attempt_at equals its
// locked_until, so the one partial index on next_attempt_at finds due jobs and expired claims
// alike. The numbers of pending and dead rows are kept by triggers (pg_schema.cc). Errors as
// PgConn::Exec (kUnavailable when the server is gone). Thread-safe.
class PgJobTable {
 public:
  // Connects and creates or checks the tables (kFailedPrecondition for a newer schema).
  static Result<std::unique_ptr<PgJobTable>> Open(const PgQueueOptions& options, int pool_size);

  // Inserts `job` in `state` unless a row of its id and state exists; true when inserted.
  Result<bool> Insert(const Job& job, JobState state);
  // Claims up to `limit` pending jobs of `filter` due at `now` (next_attempt_at <= now, oldest
  // first) until `locked_until`. A job whose previous claim expired counts that claim as a failed
  // attempt with the error `expired_error`. `completed`, jobs the caller finished, are completed
  // as CompleteAll does in the same statement: one commit for all. On error nothing happened.
  Result<std::vector<ClaimedJob>> Claim(Time now, Time locked_until, int limit,
                                        const std::string& expired_error, const ClaimFilter& filter,
                                        const std::vector<ClaimedJob>& completed = {});
  // Each of these applies to a claimed job and returns false when `claimed.token` is no longer
  // the row's (the claim expired and someone else took it over): nothing was changed then.
  Result<bool> Complete(const ClaimedJob& claimed);           // deletes the row
  Result<bool> Reschedule(const ClaimedJob& claimed);         // attempts, next attempt, last error
  Result<bool> Bury(const ClaimedJob& claimed);               // becomes a dead letter
  Result<bool> Release(const ClaimedJob& claimed, Time due);  // unclaimed, due at `due`
  // Complete and Release for many jobs in one statement; how many rows were still claimed by
  // them (the others are left alone, as above).
  Result<int64_t> CompleteAll(const std::vector<ClaimedJob>& claimed);
  Result<int64_t> ReleaseAll(const std::vector<ClaimedJob>& claimed, Time due);

  // Deletes unclaimed (or expired) pending jobs enqueued before `cutoff`; how many.
  Result<int64_t> DiscardStale(Time cutoff, Time now);
  // Makes every unclaimed pending job of `filter` due at `now`.
  Status MakeAllDue(Time now, const ClaimFilter& filter);
  // The earliest time a pending job of `filter` becomes claimable; nullopt when none is pending.
  Result<std::optional<Time>> EarliestDue(const ClaimFilter& filter);
  struct Counts {
    int64_t pending = 0;
    int64_t dead = 0;
  };
  // The numbers of pending and dead rows, from the counts the triggers keep: no scan.
  Result<Counts> Count();
  // Jobs in `state`, oldest enqueue first.
  Result<std::vector<Job>> List(JobState state);
  // A dead letter becomes pending with attempts 0, due at `now` (replacing a pending row of the
  // same id). kNotFound when there is no such dead letter.
  Status Revive(const std::string& id, Time now);
  Status Purge(const std::string& id);  // kNotFound when absent

  // "PostgreSQL at URL (schema S)", the password masked.
  std::string location() const;

 private:
  enum class Pool { kDefault, kClaims };

  PgJobTable(const PgQueueOptions& options, int pool_size);
  Status SetUp(db::PgConn& conn, bool claims);
  Status Init();
  Result<db::PgResult> Exec(const char* sql, const std::vector<db::PgParam>& params,
                            Pool pool = Pool::kDefault);

  const PgQueueOptions options_;
  db::PgPool pool_;
  db::PgPool claim_pool_;
};

}  // namespace mend::lessonq
