// observe.db: opening, the schema and its migrations, and writing batches of spans with the run
// and trace summaries.
#include "mend/obs/span_store.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <set>
#include <utility>
#include <variant>

#include "mend/base/file_system.h"
#include "obs/run_summary.h"
#include "obs/span_store_rows.h"
#include "obs/span_store_sql.h"
#include "obs/trace_summary.h"

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

// Brings a file at `from` (>= 1) to kSpanStoreSchemaVersion; docs/observe.md lists the steps.
Status Migrate(SqliteConn& conn, int64_t from) {
  if (from < 2) {
    MEND_RETURN_IF_ERROR(conn.Exec(internal::kCreateTracesV2));
    MEND_RETURN_IF_ERROR(internal::BackfillTraces(conn));
  }
  if (from < 3) MEND_RETURN_IF_ERROR(conn.Exec(internal::kAddOtlpStateV3));
  MEND_ASSIGN_OR_RETURN(SqliteStmt set, conn.Prepare(internal::kSetSchemaVersion));
  return set.Bind(1, kSpanStoreSchemaVersion).Run();
}

// Creates or migrates the schema in one write transaction, so a crash or a second process opening
// the file at the same time never sees half of it.
Status InitSchema(SqliteConn& conn, const std::string& path) {
  MEND_RETURN_IF_ERROR(conn.Exec(internal::kPragmas));
  return conn.InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
    MEND_RETURN_IF_ERROR(conn.Exec(internal::kCreateMeta));
    int64_t version = 0;
    {
      MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn.Prepare(internal::kSchemaVersion));
      MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (row) {
        version = stmt.Int(0);
        if (version < 1) return DataLossError(path + " has an unreadable schema version");
      }
    }
    if (version == 0) {
      MEND_RETURN_IF_ERROR(conn.Exec(internal::kCreateSchemaV1));
      version = 1;
    }
    MEND_RETURN_IF_ERROR(CheckVersion(version, path));
    if (version == kSpanStoreSchemaVersion) return OkStatus();
    return Migrate(conn, version);
  });
}

// The runs and traces a batch replaced spans of: their summaries are rebuilt from their spans.
struct Dirty {
  std::set<std::string> runs;
  std::set<std::string> traces;
};

// The otlp_state a span is written with (kAddOtlpStateV3): an in-progress snapshot is never
// exported, only the span that ends it.
int64_t OtlpStateOf(const SpanData& span, OtlpExport otlp) {
  if (otlp == OtlpExport::kNone) return 0;
  const AttributeValue* in_progress = FindAttribute(span.attributes, kInProgressAttribute);
  const bool snapshot = in_progress != nullptr && std::holds_alternative<bool>(*in_progress) &&
                        std::get<bool>(*in_progress);
  return snapshot ? 0 : 1;
}

// Inserts `span`; a span already stored under its ids is replaced, and the run it belonged to
// before and the one it belongs to now, and its trace, are marked dirty.
Status InsertSpan(SqliteConn& conn, const SpanData& span, OtlpExport otlp,
                  internal::SpanRowText& text, Dirty& dirty) {
  const int64_t otlp_state = OtlpStateOf(span, otlp);
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt insert, conn.Prepare(internal::kInsertSpan));
    internal::BindSpan(insert, span, text);
    insert.Bind(15, otlp_state);
    MEND_RETURN_IF_ERROR(insert.Run());
    if (conn.Changes() == 1) return OkStatus();
  }
  {
    MEND_ASSIGN_OR_RETURN(SqliteStmt old, conn.Prepare(internal::kRunOfSpan));
    old.BindText(1, span.context.trace_id).BindText(2, span.context.span_id);
    MEND_ASSIGN_OR_RETURN(bool row, old.Step());
    if (row) dirty.runs.insert(old.Text(0));
  }
  dirty.runs.insert(span.run_id);
  dirty.traces.insert(span.context.trace_id);
  MEND_ASSIGN_OR_RETURN(SqliteStmt replace, conn.Prepare(internal::kReplaceSpan));
  internal::BindSpan(replace, span, text);
  replace.Bind(15, otlp_state);
  return replace.Run();
}

// The summaries of a batch, per run and per trace. A batch's spans mostly come from one run and
// one trace in a row: the previous span's summaries are reused without a map lookup.
struct BatchSummaries {
  std::map<std::string, internal::RunAccumulator> runs;
  std::map<std::string, internal::TraceAccumulator> traces;
  internal::RunAccumulator* last_run = nullptr;
  internal::TraceAccumulator* last_trace = nullptr;

  void Add(const SpanData& span) {
    if (last_trace == nullptr || last_trace->trace_id != span.context.trace_id) {
      last_trace = &traces[span.context.trace_id];
    }
    last_trace->Add(internal::FactsOf(span));
    if (span.run_id.empty()) return;
    if (last_run == nullptr || last_run->summary.run_id != span.run_id) {
      last_run = &runs[span.run_id];
    }
    last_run->Add(span);
  }
};

Status StoreSummaries(SqliteConn& conn, const BatchSummaries& batch, const Dirty& dirty) {
  for (const auto& [run_id, acc] : batch.runs) {
    // A run with a replaced span is rebuilt from its spans below instead.
    if (dirty.runs.contains(run_id)) continue;
    MEND_ASSIGN_OR_RETURN(SqliteStmt upsert, conn.Prepare(internal::kUpsertRun));
    internal::BindRun(upsert, acc);
    MEND_RETURN_IF_ERROR(upsert.Run());
  }
  for (const std::string& run_id : dirty.runs) {
    if (!run_id.empty()) MEND_RETURN_IF_ERROR(internal::RecomputeRun(conn, run_id));
  }
  for (const auto& [trace_id, acc] : batch.traces) {
    if (dirty.traces.contains(trace_id)) continue;
    MEND_ASSIGN_OR_RETURN(SqliteStmt upsert, conn.Prepare(internal::kUpsertTrace));
    internal::BindTrace(upsert, acc);
    MEND_RETURN_IF_ERROR(upsert.Run());
  }
  for (const std::string& trace_id : dirty.traces) {
    MEND_RETURN_IF_ERROR(internal::RecomputeTrace(conn, trace_id));
  }
  return OkStatus();
}

Status WriteBatch(SqliteConn& conn, const std::vector<SpanData>& spans, int64_t newly_dropped,
                  OtlpExport otlp) {
  BatchSummaries batch;
  Dirty dirty;
  internal::SpanRowText text;
  for (const SpanData& span : spans) {
    MEND_RETURN_IF_ERROR(InsertSpan(conn, span, otlp, text, dirty));
    batch.Add(span);
  }
  MEND_RETURN_IF_ERROR(StoreSummaries(conn, batch, dirty));
  if (newly_dropped > 0) {
    MEND_ASSIGN_OR_RETURN(SqliteStmt add, conn.Prepare(internal::kAddDropped));
    MEND_RETURN_IF_ERROR(add.Bind(1, newly_dropped).Run());
  }
  return OkStatus();
}

}  // namespace

SpanStore::SpanStore(std::unique_ptr<db::SqliteConn> conn, int64_t schema_version)
    : conn_(std::move(conn)), schema_version_(schema_version) {}
SpanStore::~SpanStore() = default;

Result<std::unique_ptr<SpanStore>> SpanStore::Open(const std::string& path,
                                                   const std::string& vfs) {
  // Missing directories are created 0700: observe.db holds prompts and tool output.
  const size_t slash = path.find_last_of('/');
  if (slash != std::string::npos && slash > 0)
    MEND_RETURN_IF_ERROR(PosixFileSystem::Default()->CreateDirs(path.substr(0, slash)));
  // The test VFS that may be named here wraps SQLite's default one: its files are on this disk.
  db::SqliteOptions options;
  options.vfs = vfs;
  options.vfs_files = db::SqliteOptions::VfsFiles::kLocalDisk;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConn> conn, SqliteConn::Open(path, options));
  MEND_RETURN_IF_ERROR(InitSchema(*conn, path));
  return std::unique_ptr<SpanStore>(new SpanStore(std::move(conn), kSpanStoreSchemaVersion));
}

Result<std::unique_ptr<SpanStore>> SpanStore::OpenReadOnly(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return NotFoundError(path + " does not exist");
    return ErrnoToStatus(errno, "stat " + path);
  }
  db::SqliteOptions options;
  options.access = db::SqliteOptions::Access::kReadOnly;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConn> conn, SqliteConn::Open(path, options));
  MEND_ASSIGN_OR_RETURN(int64_t has_meta, conn->QueryInt(internal::kHasMeta));
  if (has_meta == 0) return FailedPreconditionError(path + " has no observe.db schema");
  MEND_ASSIGN_OR_RETURN(int64_t version, conn->QueryInt(internal::kSchemaVersion));
  MEND_RETURN_IF_ERROR(CheckVersion(version, path));
  if (version < 2) {
    // No trace list in the file (a read-write open would build it): built from its spans in
    // this connection's temporary schema, as the migration would.
    MEND_RETURN_IF_ERROR(conn->Exec(internal::kCreateTempTraces));
    MEND_RETURN_IF_ERROR(conn->InTransaction(SqliteConn::TxKind::kRead,
                                             [&] { return internal::BackfillTraces(*conn); })
                             .Annotate("listing the traces of " + path + " (schema version 1)"));
  }
  return std::unique_ptr<SpanStore>(new SpanStore(std::move(conn), version));
}

Result<int64_t> SpanStore::ReadSchemaVersion(const std::string& path) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return 0;
    return ErrnoToStatus(errno, "stat " + path);
  }
  db::SqliteOptions options;
  options.access = db::SqliteOptions::Access::kExisting;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConn> conn, SqliteConn::Open(path, options));
  MEND_ASSIGN_OR_RETURN(int64_t has_meta, conn->QueryInt(internal::kHasMeta));
  if (has_meta == 0) return 0;
  MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, conn->Prepare(internal::kSchemaVersion));
  MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
  if (!row) return 0;
  const int64_t version = stmt.Int(0);
  if (version < 1) return DataLossError(path + " has an unreadable schema version");
  return version;
}

Status SpanStore::Write(const std::vector<SpanData>& spans, int64_t newly_dropped,
                        OtlpExport otlp) {
  if (spans.empty() && newly_dropped <= 0) return OkStatus();
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->InTransaction(SqliteConn::TxKind::kWrite,
                              [&] { return WriteBatch(*conn_, spans, newly_dropped, otlp); });
}

Result<int64_t> SpanStore::dropped_spans() {
  std::lock_guard<std::mutex> lock(mu_);
  return conn_->QueryInt(internal::kDropped);
}

}  // namespace mend::obs
