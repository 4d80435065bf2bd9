// `mend reflect migrate`: the WAL queue's jobs move into the PostgreSQL queue, one committed
// insert before each record's removal.

#include <memory>
#include <string>

#include "lessonq/pg_job_table.h"
#include "mend/base/file_system.h"
#include "mend/base/home_layout.h"
#include "mend/lessonq/postgres_queue.h"
#include "mend/lessonq/wal_codec.h"
#include "mend/lessonq/wal_dir.h"

namespace mend::lessonq {
namespace {

// Reads a record without WalDir::Read, which removes a record that fails a check: a corrupt
// record is reported and kept here, for the operator to look at.
Result<Job> ReadKeeping(FileSystem& fs, WalDir& dir, const std::string& id) {
  const std::string path = dir.PathFor(id);
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> file, fs.OpenReadable(path));
  MEND_ASSIGN_OR_RETURN(Job job, ReadWalRecord(*file));
  if (job.id != id) {
    return DataLossError("corrupt WAL record: " + path + " holds job \"" + job.id + "\"");
  }
  return job;
}

// Moves every record of `dir` into `state`; counts what was inserted and what was there.
Status MoveDir(FileSystem& fs, WalDir& dir, PgJobTable& table, JobState state,
               MigrateReport& report) {
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> ids, dir.ListIds());
  for (const std::string& id : ids) {
    Result<Job> job = ReadKeeping(fs, dir, id);
    if (job.status().code() == StatusCode::kNotFound) continue;  // acknowledged meanwhile
    if (job.status().code() == StatusCode::kDataLoss) {
      report.corrupt.push_back(dir.PathFor(id));
      continue;
    }
    MEND_RETURN_IF_ERROR(job.status());
    // The insert commits before the record goes: a crash in between leaves the job in both, and
    // the next run finds it present and only removes the record.
    MEND_ASSIGN_OR_RETURN(bool inserted, table.Insert(*job, state));
    Status removed = dir.Remove(id);
    if (!removed.ok() && removed.code() != StatusCode::kNotFound) return removed;
    if (state == JobState::kDead) {
      ++report.dead_letters;
    } else if (inserted) {
      ++report.moved;
    } else {
      ++report.already_present;
    }
  }
  return OkStatus();
}

}  // namespace

Result<MigrateReport> MigrateWalToPostgres(Env env, const std::string& base_dir,
                                           const PgQueueOptions& pg) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WalDir> wal,
                        WalDir::Open(*env.fs, home::LessonWalDir(base_dir)));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WalDir> dlq,
                        WalDir::Open(*env.fs, home::LessonDlqDir(base_dir)));
  Result<std::unique_ptr<FileLock>> lock = env.fs->Lock(home::LessonQueueLockFile(base_dir));
  if (lock.status().code() == StatusCode::kUnavailable) {
    return UnavailableError("a mend process runs the lesson workers of the WAL at " + base_dir +
                            "; stop it (or switch it to the PostgreSQL queue) and migrate again");
  }
  MEND_RETURN_IF_ERROR(lock.status());
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<PgJobTable> table, PgJobTable::Open(pg, 1));
  MigrateReport report;
  MEND_RETURN_IF_ERROR(MoveDir(*env.fs, *wal, *table, JobState::kPending, report));
  MEND_RETURN_IF_ERROR(MoveDir(*env.fs, *dlq, *table, JobState::kDead, report));
  return report;
}

}  // namespace mend::lessonq
