// observe.db: opening, the schema, and writing batches of spans with the run summaries.
#include "mend/obs/span_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <set>
#include <utility>

#include "mend/base/file_system.h"
#include "obs/run_summary.h"
#include "obs/span_store_rows.h"
#include "obs/span_store_sql.h"
#include "obs/sqlite_conn.h"

namespace mend::obs {
namespace {

using internal::SqliteConn;
using internal::SqliteStmt;

Status CheckVersion(int64_t version, const std::string& path) {
  if (version > kSpanStoreSchemaVersion) {
    return FailedPreconditionError(path + " has schema version " + std::to_string(version) +
                                   ", newer than this build's " +
                                   std::to_string(kSpanStoreSchemaVersion) + "; upgrade mend");
  }
  return OkStatus();
}

Status InitSchema(SqliteConn& conn, const std::string& path) {
  MEND_RETURN_IF_ERROR(conn.Exec(internal::kPragmas));
  return conn.InWriteTransaction([&]() -> Status {
    MEND_RETURN_IF_ERROR(conn.Exec(internal::kCreateMeta));
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn.Prepare(internal::kSchemaVersion));
    MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
    if (row) return CheckVersion(stmt.Int(0), path);
    return conn.Exec(internal::kCreateSchemaV1);
  });
}

// Inserts `span`; a span already stored under its ids is replaced, and the runs it belonged to
// before and now are returned in `dirty` so their summaries are rebuilt.
Status InsertSpan(SqliteConn& conn, const SpanData& span, internal::SpanRowText& text,
                  std::set<std::string>& dirty) {
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt insert, conn.Prepare(internal::kInsertSpan));
    internal::BindSpan(insert, span, text);
    MEND_RETURN_IF_ERROR(insert.Run());
    if (conn.Changes() == 1) return OkStatus();
  }
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt old, conn.Prepare(internal::kRunOfSpan));
    old.BindText(1, span.context.trace_id).BindText(2, span.context.span_id);
    MEND_ASSIGN_OR_RETURN(bool row, old.Step());
    if (row) dirty.insert(old.Text(0));
  }
  dirty.insert(span.run_id);
  MEND_ASSIGN_OR_RETURN(SqliteStmt replace, conn.Prepare(internal::kReplaceSpan));
  internal::BindSpan(replace, span, text);
  return replace.Run();
}

Status WriteBatch(SqliteConn& conn, const std::vector<SpanData>& spans, int64_t newly_dropped) {
  std::map<std::string, internal::RunAccumulator> runs;
  std::set<std::string> dirty;
  internal::SpanRowText text;
  // A batch's spans mostly come from one run, in a row: the previous span's summary is reused
  // without a map lookup.
  internal::RunAccumulator* last = nullptr;
  for (const SpanData& span : spans) {
    MEND_RETURN_IF_ERROR(InsertSpan(conn, span, text, dirty));
    if (span.run_id.empty()) continue;
    if (last == nullptr || last->summary.run_id != span.run_id) last = &runs[span.run_id];
    last->Add(span);
  }
  for (const auto& [run_id, acc] : runs) {
    // A run with a replaced span is rebuilt from its spans below instead.
    if (dirty.contains(run_id)) continue;
    MEND_ASSIGN_OR_RETURN(SqliteStmt upsert, conn.Prepare(internal::kUpsertRun));
    internal::BindRun(upsert, acc);
    MEND_RETURN_IF_ERROR(upsert.Run());
  }
  for (const std::string& run_id : dirty) {
    if (!run_id.empty()) MEND_RETURN_IF_ERROR(internal::RecomputeRun(conn, run_id));
  }
  if (newly_dropped > 0) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt add, conn.Prepare(internal::kAddDropped));
    MEND_RETURN_IF_ERROR(add.Bind(1, newly_dropped).Run());
  }
  return OkStatus();
}

}  // namespace

SpanStore::SpanStore(std::unique_ptr<internal::SqliteConn> conn) : conn_(std::move(conn)) {}
SpanStore::~SpanStore() = default;

Result<std::unique_ptr<SpanStore>> SpanStore::Open(const std::string& path,
                                                   const std::string& vfs) {
  // Missing directories are created 0700: observe.db holds prompts and tool output.
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0)
    MEND_RETURN_IF_ERROR(PosixFileSystem::Default()->CreateDirs(path.substr(0, slash)));
  // SQLite would create the file 0644 and give its -wal and -shm files that mode.
  MEND_RETURN_IF_ERROR(PosixFileSystem::MakePrivateFile(path));
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConn> conn,
                        SqliteConn::Open(path, SqliteConn::Access::kReadWrite, vfs));
  MEND_RETURN_IF_ERROR(InitSchema(*conn, path));
  return std::unique_ptr<SpanStore>(new SpanStore(std::move(conn)));
}

Result<std::unique_ptr<SpanStore>> SpanStore::OpenReadOnly(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFoundError(path + " does not exist");
    return ErrnoToStatus(errno, "stat " + path);
  }
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConn> conn,
                        SqliteConn::Open(path, SqliteConn::Access::kReadOnly, ""));
  MEND_ASSIGN_OR_RETURN(int64_t has_meta, conn->QueryInt(internal::kHasMeta));
  if (has_meta == 0) return FailedPreconditionError(path + " has no observe.db schema");
  MEND_ASSIGN_OR_RETURN(int64_t version, conn->QueryInt(internal::kSchemaVersion));
  MEND_RETURN_IF_ERROR(CheckVersion(version, path));
  return std::unique_ptr<SpanStore>(new SpanStore(std::move(conn)));
}

Status SpanStore::Write(const std::vector<SpanData>& spans, int64_t newly_dropped) {
  if (spans.empty() && newly_dropped <= 0) return OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InWriteTransaction([&] { return WriteBatch(*conn_, spans, newly_dropped); });
}

Result<int64_t> SpanStore::dropped_spans() {
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->QueryInt(internal::kDropped);
}

}  // namespace mend::obs
