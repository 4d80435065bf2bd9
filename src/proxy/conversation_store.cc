// The proxy's conversations in mend.db (ConversationStore in conversation.h; the table is
// described in docs/proxy.md). One row per conversation with its state as JSON; the columns
// beside it are what the sweeps select on.
#include <charconv>
#include <mutex>
#include <nlohmann/json.hpp>
#include <utility>

#include "mend/base/json.h"
#include "mend/db/sqlite.h"
#include "mend/proxy/schema_version.h"
#include "proxy/conversation.h"

namespace mend::proxy {
namespace {

using Json = nlohmann::json;
using db::SqliteConn;
using db::SqliteStmt;

constexpr int64_t kSchemaVersion = kProxySchemaVersion;

constexpr char kCreateMeta[] =
    "CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)";
constexpr char kSelectVersion[] = "SELECT value FROM meta WHERE key = 'proxy.schema_version'";
constexpr char kInsertVersion[] =
    "INSERT INTO meta (key, value) VALUES ('proxy.schema_version', ?1)";
// open_since: the earliest first_seen (ms) of a failure not enqueued yet, NULL when none.
constexpr char kSchemaV1[] = R"sql(
CREATE TABLE proxy_conversations (
  id TEXT PRIMARY KEY,
  workspace TEXT NOT NULL,
  state TEXT NOT NULL,
  open_since INTEGER,
  updated_at INTEGER NOT NULL,
  expires_at INTEGER NOT NULL
);
CREATE INDEX proxy_conversations_open ON proxy_conversations (open_since)
  WHERE open_since IS NOT NULL;
CREATE INDEX proxy_conversations_expiry ON proxy_conversations (expires_at);
)sql";
constexpr char kLoad[] = "SELECT state FROM proxy_conversations WHERE id = ?1 AND expires_at > ?2";
constexpr char kSave[] =
    "INSERT INTO proxy_conversations (id, workspace, state, open_since, updated_at, expires_at) "
    "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (id) DO UPDATE SET workspace = "
    "excluded.workspace, "
    "state = excluded.state, open_since = excluded.open_since, updated_at = excluded.updated_at, "
    "expires_at = excluded.expires_at";
constexpr char kOpen[] =
    "SELECT state FROM proxy_conversations WHERE open_since IS NOT NULL AND open_since <= ?1 "
    "ORDER BY open_since LIMIT ?2";
constexpr char kDeleteExpired[] = "DELETE FROM proxy_conversations WHERE expires_at <= ?1";

int64_t Millis(Time t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(t.time_since_epoch()).count();
}
Time FromMillis(int64_t ms) { return Time(std::chrono::milliseconds(ms)); }

Json Encode(const Conversation& c) {
  Json failures = Json::array();
  for (const FailureRecord& f : c.failures) {
    failures.push_back({{"key", f.key},
                        {"tool", f.tool},
                        {"arguments", f.arguments},
                        {"error", f.error},
                        {"count", f.count},
                        {"first_seen_ms", Millis(f.first_seen)},
                        {"what_worked", f.what_worked},
                        {"enqueued", f.enqueued}});
  }
  Json state = {{"id", c.id},
                {"workspace", c.workspace},
                {"task", c.task},
                {"created_ms", Millis(c.created_at)},
                {"updated_ms", Millis(c.updated_at)},
                {"failures", std::move(failures)}};
  if (c.has_section) state["section"] = c.section;
  return state;
}

Result<Conversation> Decode(const std::string& text) {
  Result<Json> parsed = ParseJson(text);
  if (!parsed.ok())
    return DataLossError("proxy conversation state: " + std::string(parsed.status().message()));
  const Json& j = *parsed;
  Conversation c;
  if (!j.is_object()) return DataLossError("proxy conversation state is not a JSON object");
  c.id = j.value("id", "");
  c.workspace = j.value("workspace", "");
  c.task = j.value("task", "");
  c.created_at = FromMillis(j.value("created_ms", int64_t{0}));
  c.updated_at = FromMillis(j.value("updated_ms", int64_t{0}));
  if (auto it = j.find("section"); it != j.end() && it->is_string()) {
    c.has_section = true;
    c.section = it->get<std::string>();
  }
  if (auto it = j.find("failures"); it != j.end() && it->is_array()) {
    for (const Json& f : *it) {
      if (!f.is_object()) continue;
      FailureRecord r;
      r.key = f.value("key", "");
      r.tool = f.value("tool", "");
      r.arguments = f.value("arguments", "");
      r.error = f.value("error", "");
      r.count = f.value("count", int64_t{0});
      r.first_seen = FromMillis(f.value("first_seen_ms", int64_t{0}));
      r.what_worked = f.value("what_worked", "");
      r.enqueued = f.value("enqueued", false);
      c.failures.push_back(std::move(r));
    }
  }
  if (c.id.empty()) return DataLossError("proxy conversation state has no id");
  return c;
}

// Nlohmann's typed getters throw on a wrong type; a row we wrote ourselves has the right ones,
// but a damaged one must be an error, not a crash.
Result<Conversation> DecodeSafely(const std::string& text) {
  try {
    return Decode(text);
  } catch (const std::exception& e) {
    return DataLossError(std::string("proxy conversation state: ") + e.what());
  }
}

std::optional<int64_t> OpenSince(const Conversation& c) {
  std::optional<int64_t> earliest;
  for (const FailureRecord& f : c.failures) {
    if (f.enqueued) continue;
    const int64_t ms = Millis(f.first_seen);
    if (!earliest.has_value() || ms < *earliest) earliest = ms;
  }
  return earliest;
}

class SqliteConversationStore final : public ConversationStore {
 public:
  SqliteConversationStore(std::string path, std::unique_ptr<SqliteConn> db)
      : path_(std::move(path)), db_(std::move(db)) {}

  Status Init() {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA journal_mode = WAL"));
    // A conversation's state is soft: after a power cut the proxy recalls again and a failure
    // may be seen anew. Without an fsync per request the state costs the proxy microseconds.
    MEND_RETURN_IF_ERROR(db_->Exec("PRAGMA synchronous = NORMAL"));
    return db_->InTransaction(SqliteConn::TxKind::kWrite, [&]() -> Status {
      MEND_RETURN_IF_ERROR(db_->Exec(kCreateMeta));
      MEND_ASSIGN_OR_RETURN(SqliteStmt select, db_->Prepare(kSelectVersion));
      MEND_ASSIGN_OR_RETURN(bool found, select.Step());
      if (found) {
        const std::string text = select.Text(0);
        int64_t version = 0;
        auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
        if (ec != std::errc() || end != text.data() + text.size()) {
          return DataLossError(path_ + ": proxy.schema_version is not a number");
        }
        if (version > kSchemaVersion) {
          return FailedPreconditionError(path_ +
                                         " holds proxy conversations written by a newer "
                                         "mend (proxy schema " +
                                         text + " > " + std::to_string(kSchemaVersion) +
                                         "); upgrade mend");
        }
        return OkStatus();
      }
      MEND_RETURN_IF_ERROR(db_->Exec(kSchemaV1));
      MEND_ASSIGN_OR_RETURN(SqliteStmt insert, db_->Prepare(kInsertVersion));
      return insert.BindText(1, std::to_string(kSchemaVersion)).Run();
    });
  }

  Result<std::optional<Conversation>> Load(const std::string& id, Time now) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kLoad));
    stmt.BindText(1, id).Bind(2, Millis(now));
    MEND_ASSIGN_OR_RETURN(bool found, stmt.Step());
    if (!found) return std::optional<Conversation>();
    MEND_ASSIGN_OR_RETURN(Conversation c, DecodeSafely(stmt.Text(0)));
    return std::optional<Conversation>(std::move(c));
  }

  Status Save(const Conversation& c, Duration ttl) override {
    const std::string state = DumpJson(Encode(c));
    const std::optional<int64_t> open = OpenSince(c);
    const int64_t updated = Millis(c.updated_at);
    const int64_t expires =
        updated + std::chrono::duration_cast<std::chrono::milliseconds>(ttl).count();
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kSave));
    stmt.BindText(1, c.id).BindText(2, c.workspace).BindText(3, state);
    if (open.has_value()) {
      stmt.Bind(4, *open);
    } else {
      stmt.BindNull(4);
    }
    return stmt.Bind(5, updated).Bind(6, expires).Run();
  }

  Result<std::vector<Conversation>> WithOpenFailures(Time first_seen_before,
                                                     size_t limit) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kOpen));
    stmt.Bind(1, Millis(first_seen_before)).Bind(2, static_cast<int64_t>(limit));
    std::vector<Conversation> out;
    while (true) {
      MEND_ASSIGN_OR_RETURN(bool row, stmt.Step());
      if (!row) break;
      // A damaged row is skipped here; Load reports it when its conversation comes back.
      Result<Conversation> c = DecodeSafely(stmt.Text(0));
      if (c.ok()) out.push_back(*std::move(c));
    }
    return out;
  }

  Result<int64_t> DeleteExpired(Time now) override {
    std::lock_guard<std::mutex> lock(mu_);
    MEND_ASSIGN_OR_RETURN(SqliteStmt stmt, db_->Prepare(kDeleteExpired));
    MEND_RETURN_IF_ERROR(stmt.Bind(1, Millis(now)).Run());
    return db_->Changes();
  }

 private:
  const std::string path_;
  std::mutex mu_;
  std::unique_ptr<SqliteConn> db_;  // guarded by mu_
};

}  // namespace

Result<std::unique_ptr<ConversationStore>> ConversationStore::Open(const std::string& path) {
  db::SqliteOptions options;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<SqliteConn> conn, SqliteConn::Open(path, options));
  auto store = std::make_unique<SqliteConversationStore>(path, std::move(conn));
  MEND_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<ConversationStore>(std::move(store));
}

}  // namespace mend::proxy
