#include "mend/db/pg_conn.h"

#include <poll.h>

#include <algorithm>
#include <charconv>
#include <cstdio>
#include <random>
#include <utility>

#include "db/pg_activity.h"

namespace mend::db {

std::string MaskPostgresUrl(const std::string& url) {
  std::string out = url;
  size_t scheme = out.find("://");
  if (scheme != std::string::npos) {
    size_t start = scheme + 3;
    size_t end = out.find_first_of("/?", start);
    if (end == std::string::npos) end = out.size();
    size_t at = out.rfind('@', end);
    if (at != std::string::npos && at >= start) {
      size_t colon = out.find(':', start);
      if (colon != std::string::npos && colon < at) out.replace(colon + 1, at - colon - 1, "***");
    }
  }
  // Keyword/value strings and URI query parameters: password=VALUE.
  for (size_t pos = out.find("password="); pos != std::string::npos;
       pos = out.find("password=", pos + 1)) {
    size_t value = pos + 9;
    size_t end = out.find_first_of("& ", value);
    if (end == std::string::npos) end = out.size();
    out.replace(value, end - value, "***");
  }
  return out;
}

namespace {

// Every spelling of the password of `url`: as libpq decodes it and as written in the URI.
std::vector<std::string> PasswordsOf(const std::string& url) {
  std::vector<std::string> out;
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(url.c_str(), &error);
  if (error != nullptr) PQfreemem(error);
  if (options != nullptr) {
    for (PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
      if (std::string_view(o->keyword) == "password" && o->val != nullptr && *o->val != '\0') {
        out.emplace_back(o->val);
      }
    }
    PQconninfoFree(options);
  }
  // What MaskPostgresUrl replaced is the password as written, even when libpq cannot parse it.
  std::string masked = MaskPostgresUrl(url);
  size_t i = 0;
  while (i < url.size() && i < masked.size() && url[i] == masked[i]) ++i;
  size_t tail = 0;
  while (tail < url.size() - i && tail < masked.size() - i &&
         url[url.size() - 1 - tail] == masked[masked.size() - 1 - tail]) {
    ++tail;
  }
  if (url.size() > i + tail) out.push_back(url.substr(i, url.size() - i - tail));
  return out;
}

constexpr size_t kMinScrubbedLength = 3;

// libpq's messages end in a newline and may span lines ("...refused\n\tIs the server running");
// ours are one line.
std::string TrimNewline(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  for (size_t pos = s.find_first_of("\n\t"); pos != std::string::npos;
       pos = s.find_first_of("\n\t", pos)) {
    size_t end = s.find_first_not_of("\n\t", pos);
    s.replace(pos, (end == std::string::npos ? s.size() : end) - pos, " ");
  }
  return s;
}

// libpq only notices a malformed port when connecting and then reports it like an unreachable
// server; it is a mistake in the URL, so it is found here. A port is a comma-separated list.
bool PortsValid(const PQconninfoOption* options) {
  for (const PQconninfoOption* o = options; o->keyword != nullptr; ++o) {
    if (std::string_view(o->keyword) != "port" || o->val == nullptr) continue;
    for (const char* c = o->val; *c != '\0'; ++c) {
      if ((*c < '0' || *c > '9') && *c != ',') return false;
    }
  }
  return true;
}

// The OID of bytea, the element type a binary bytea[] names (pg_type.dat).
constexpr uint32_t kByteaOid = 17;
constexpr char kPipelineAbortedState[] = "pipeline_aborted";
// Results a statement may leave after its first before the null that ends them; libpq gives one.
constexpr int kMaxExtraResults = 16;

void AppendInt32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

// Whether the connection's socket has something to read now (data or the end of the stream).
bool ReadableNow(int socket) {
  if (socket < 0) return false;
  pollfd p{socket, POLLIN, 0};
  return poll(&p, 1, 0) > 0;
}

// The values, lengths and formats libpq takes for `params`; they point into `params`.
struct ParamArrays {
  explicit ParamArrays(const std::vector<PgParam>& params) {
    for (const PgParam& p : params) {
      values.push_back(p.value ? p.value->data() : nullptr);
      lengths.push_back(p.value ? static_cast<int>(p.value->size()) : 0);
      formats.push_back(p.binary ? 1 : 0);
    }
  }
  int size() const { return static_cast<int>(values.size()); }
  std::vector<const char*> values;
  std::vector<int> lengths;
  std::vector<int> formats;
};

// The server's answer to a prepared statement it does not have.
constexpr char kStatementMissingState[] = "26000";

Status StatusForState(std::string_view state, const std::string& message) {
  Status s;
  if (state.substr(0, 2) == "08" || state.substr(0, 3) == "57P" || state == "40001" ||
      state == "40P01" || state == "55P03") {
    s = UnavailableError(message);
  } else if (state.substr(0, 2) == "53") {
    s = ResourceExhaustedError(message);
  } else if (state == "XX001" || state == "XX002") {
    s = DataLossError(message);
  } else if (state == "23505") {
    s = AlreadyExistsError(message);
  } else {
    s = InternalError(message);
  }
  return state.empty() ? s : s.WithDetailCode(SqlStateDetail(state));
}

}  // namespace

std::string SqlStateDetail(std::string_view state) { return "postgres_" + std::string(state); }

PgParam PgParam::BytesArray(const std::vector<std::string>& items) {
  // The binary form array_recv reads: dimensions, a has-nulls flag, the element type, each
  // dimension's length and lower bound, then every element as its length and bytes.
  std::string out;
  AppendInt32(out, items.empty() ? 0 : 1);
  AppendInt32(out, 0);
  AppendInt32(out, kByteaOid);
  if (!items.empty()) {
    AppendInt32(out, static_cast<uint32_t>(items.size()));
    AppendInt32(out, 1);
  }
  for (const std::string& item : items) {
    AppendInt32(out, static_cast<uint32_t>(item.size()));
    out += item;
  }
  return PgParam{std::move(out), true};
}

bool IsStatementMissing(const Status& s) {
  return s.detail_code() == SqlStateDetail(kStatementMissingState);
}

bool IsRetryableConflict(const Status& s) {
  return s.detail_code() == SqlStateDetail("40001") || s.detail_code() == SqlStateDetail("40P01");
}

std::string ScrubPassword(std::string message, const std::string& url) {
  std::string masked = MaskPostgresUrl(url);
  if (masked != url) {
    for (size_t pos = message.find(url); pos != std::string::npos;
         pos = message.find(url, pos + masked.size())) {
      message.replace(pos, url.size(), masked);
    }
  }
  // Wherever else libpq quotes the password. A very short one would also match ordinary text,
  // which masking would garble while hiding little; it is masked inside the URL only.
  for (const std::string& secret : PasswordsOf(url)) {
    if (secret.size() < kMinScrubbedLength) continue;
    for (size_t pos = message.find(secret); pos != std::string::npos;
         pos = message.find(secret, pos + 3)) {
      message.replace(pos, secret.size(), "***");
    }
  }
  return message;
}

std::string PgResult::Text(int row, int col) const {
  return std::string(PQgetvalue(res_.get(), row, col),
                     static_cast<size_t>(PQgetlength(res_.get(), row, col)));
}

std::optional<int64_t> PgResult::Int(int row, int col) const {
  if (IsNull(row, col)) return std::nullopt;
  const char* text = PQgetvalue(res_.get(), row, col);
  const char* end = text + PQgetlength(res_.get(), row, col);
  int64_t value = 0;
  auto [ptr, ec] = std::from_chars(text, end, value);
  if (ec != std::errc() || ptr != end) return std::nullopt;
  return value;
}

std::optional<std::string> PgResult::Bytes(int row, int col) const {
  if (IsNull(row, col)) return std::nullopt;
  size_t length = 0;
  unsigned char* bytes = PQunescapeBytea(
      reinterpret_cast<const unsigned char*>(PQgetvalue(res_.get(), row, col)), &length);
  if (bytes == nullptr) return std::nullopt;
  std::string out(reinterpret_cast<const char*>(bytes), length);
  PQfreemem(bytes);
  return out;
}

int64_t PgResult::affected() const {
  const char* n = PQcmdTuples(res_.get());
  int64_t value = 0;
  std::from_chars(n, n + std::char_traits<char>::length(n), value);
  return value;
}

Result<std::unique_ptr<PgConn>> PgConn::Connect(const std::string& url, Duration timeout) {
  char* error = nullptr;
  PQconninfoOption* parsed = PQconninfoParse(url.c_str(), &error);
  if (parsed == nullptr) {
    std::string why = error != nullptr ? TrimNewline(error) : "out of memory";
    if (error != nullptr) PQfreemem(error);
    return InvalidArgumentError(
        ScrubPassword("invalid PostgreSQL URL " + MaskPostgresUrl(url) + ": " + why, url));
  }
  bool ports_valid = PortsValid(parsed);
  PQconninfoFree(parsed);
  if (!ports_valid) {
    return InvalidArgumentError(
        ScrubPassword("invalid PostgreSQL URL " + MaskPostgresUrl(url) + ": bad port", url));
  }
  // Keywords before dbname are defaults: the URL, expanded in place of dbname, overrides them.
  std::string seconds = std::to_string(
      std::max<int64_t>(1, std::chrono::ceil<std::chrono::seconds>(timeout).count()));
  const char* keywords[] = {"connect_timeout", "application_name", "dbname", nullptr};
  const char* values[] = {seconds.c_str(), "mend", url.c_str(), nullptr};
  PGconn* conn = PQconnectdbParams(keywords, values, 1);
  if (conn == nullptr) return UnavailableError("cannot allocate a PostgreSQL connection");
  if (PQstatus(conn) != CONNECTION_OK) {
    std::string why = TrimNewline(PQerrorMessage(conn));
    PQfinish(conn);
    return UnavailableError(
        ScrubPassword("cannot connect to PostgreSQL at " + MaskPostgresUrl(url) + ": " + why, url));
  }
  // Server notices are informational (the idempotent schema setup draws "relation ... already
  // exists, skipping" on every open); libpq's default would print them on the program's stderr.
  PQsetNoticeProcessor(
      conn, [](void*, const char*) {}, nullptr);
  return std::unique_ptr<PgConn>(new PgConn(conn, url));
}

PgConn::PgConn(PGconn* conn, std::string url) : conn_(conn), url_(std::move(url)) {
  // A token of the connection's own for its statements' names (the class comment says why).
  std::random_device random;
  const uint64_t token = (uint64_t{random()} << 32) ^ random();
  char name[32];
  std::snprintf(name, sizeof name, "mend_%016llx_", static_cast<unsigned long long>(token));
  statement_prefix_ = name;
  Activity().connections_open.fetch_add(1, std::memory_order_relaxed);
}

PgConn::~PgConn() {
  PQfinish(conn_);
  Activity().connections_open.fetch_sub(1, std::memory_order_relaxed);
}

Status PgConn::ErrorOf(const PGresult* res, std::string_view sql) {
  Activity().errors.fetch_add(1, std::memory_order_relaxed);
  std::string why = TrimNewline(res != nullptr ? PQresultErrorMessage(res) : "");
  if (why.empty()) why = TrimNewline(PQerrorMessage(conn_));
  const char* state = res != nullptr ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : nullptr;
  std::string message = ScrubPassword("PostgreSQL: " + why, url_);
  if (state == nullptr) {
    // No SQLSTATE: libpq itself failed, almost always because the connection is gone.
    if (!healthy()) return UnavailableError(message + " (in: " + std::string(sql) + ")");
    return InternalError(message);
  }
  // The session lost its prepared statements (a pooler gave us another, or reset it): they are
  // all prepared again on next use, under names never used before.
  if (std::string_view(state) == kStatementMissingState) prepared_.clear();
  return StatusForState(state, message);
}

Result<PgResult> PgConn::Finish(PGresult* res, const char* sql) {
  ExecStatusType status = res != nullptr ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK) return PgResult(res);
  Status error = ErrorOf(res, sql);
  if (res != nullptr) PQclear(res);
  return error;
}

Result<const std::string*> PgConn::PreparedName(const char* sql, int params) {
  auto it = prepared_.find(sql);
  if (it != prepared_.end()) return &it->second;
  std::string name = statement_prefix_ + std::to_string(statements_named_++);
  Activity().round_trips.fetch_add(1, std::memory_order_relaxed);
  MEND_RETURN_IF_ERROR(Finish(PQprepare(conn_, name.c_str(), sql, params, nullptr), sql).status());
  return &prepared_.emplace(sql, std::move(name)).first->second;
}

Status PgConn::Prepare(const char* sql, int params) { return PreparedName(sql, params).status(); }

Result<PgResult> PgConn::Exec(const char* sql, const std::vector<PgParam>& params, Plan plan) {
  ParamArrays a(params);
  Activity().round_trips.fetch_add(1, std::memory_order_relaxed);
  if (plan == Plan::kPrepared) {
    for (int attempt = 1;; ++attempt) {
      MEND_ASSIGN_OR_RETURN(const std::string* name, PreparedName(sql, a.size()));
      Result<PgResult> out = Finish(PQexecPrepared(conn_, name->c_str(), a.size(), a.values.data(),
                                                   a.lengths.data(), a.formats.data(),
                                                   /*resultFormat=*/0),
                                    sql);
      // Lost by the server: outside a transaction nothing else was undone, so it is prepared
      // and run again once. Inside one, the transaction failed; PgTransact runs it again.
      if (out.ok() || attempt > 1 || !IsStatementMissing(out.status()) ||
          PQtransactionStatus(conn_) != PQTRANS_IDLE) {
        return out;
      }
      Activity().statements_reprepared.fetch_add(1, std::memory_order_relaxed);
      Activity().round_trips.fetch_add(1, std::memory_order_relaxed);
    }
  }
  return Finish(PQexecParams(conn_, sql, a.size(), nullptr, a.values.data(), a.lengths.data(),
                             a.formats.data(), /*resultFormat=*/0),
                sql);
}

Status PgConn::Run(const char* sql) {
  Activity().round_trips.fetch_add(1, std::memory_order_relaxed);
  PGresult* res = PQexec(conn_, sql);
  ExecStatusType status = res != nullptr ? PQresultStatus(res) : PGRES_FATAL_ERROR;
  Status out =
      status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK ? OkStatus() : ErrorOf(res, sql);
  if (res != nullptr) PQclear(res);
  return out;
}

Status PgConn::ResetSession() {
  MEND_RETURN_IF_ERROR(Run("DISCARD ALL"));
  prepared_.clear();
  return OkStatus();
}

Status PgConn::EnterPipeline() {
  // Whatever is there (the server's last error, the end of the stream) is read without waiting,
  // so that a caller can tell this failure, before anything was sent, from one after sending,
  // when a COMMIT may have been applied.
  if (healthy() && ReadableNow(PQsocket(conn_))) {
    PQconsumeInput(conn_);
    ended_ = true;
    return UnavailableError(
        "PostgreSQL: the server ended the connection while it was idle (in: pipeline)");
  }
  if (!healthy()) return ErrorOf(nullptr, "(pipeline)");
  if (PQenterPipelineMode(conn_) != 1) return ErrorOf(nullptr, "(pipeline)");
  return OkStatus();
}

Status PgConn::Send(const char* sql, const std::vector<PgParam>& params, Plan plan) {
  ParamArrays a(params);
  int sent = 0;
  if (plan == Plan::kPrepared) {
    auto it = prepared_.find(sql);
    if (it == prepared_.end()) {
      return FailedPreconditionError("PostgreSQL: statement not prepared before the pipeline: " +
                                     std::string(sql));
    }
    sent = PQsendQueryPrepared(conn_, it->second.c_str(), a.size(), a.values.data(),
                               a.lengths.data(), a.formats.data(), /*resultFormat=*/0);
  } else {
    sent = PQsendQueryParams(conn_, sql, a.size(), nullptr, a.values.data(), a.lengths.data(),
                             a.formats.data(), /*resultFormat=*/0);
  }
  return sent == 1 ? OkStatus() : ErrorOf(nullptr, sql);
}

Status PgConn::Sync() {
  Activity().round_trips.fetch_add(1, std::memory_order_relaxed);
  return PQpipelineSync(conn_) == 1 ? OkStatus() : ErrorOf(nullptr, "(pipeline sync)");
}

Result<PgResult> PgConn::Receive(const char* sql) {
  PGresult* res = healthy() ? PQgetResult(conn_) : nullptr;
  if (res == nullptr) return ErrorOf(nullptr, sql);
  // A statement's results end with a null; the next call then moves on to the next statement.
  for (int extra = 0; extra < kMaxExtraResults; ++extra) {
    PGresult* more = PQgetResult(conn_);
    if (more == nullptr) break;
    PQclear(more);
  }
  if (PQresultStatus(res) == PGRES_PIPELINE_ABORTED) {
    PQclear(res);
    return AbortedError("PostgreSQL: not run: an earlier statement of the pipeline failed (in: " +
                        std::string(sql) + ")")
        .WithDetailCode(SqlStateDetail(kPipelineAbortedState));
  }
  if (PQresultStatus(res) == PGRES_PIPELINE_SYNC) {
    PQclear(res);
    return InternalError("PostgreSQL: the pipeline ended before the result of: " +
                         std::string(sql));
  }
  return Finish(res, sql);
}

Status PgConn::AwaitSync() {
  PGresult* res = healthy() ? PQgetResult(conn_) : nullptr;
  if (res == nullptr) return ErrorOf(nullptr, "(pipeline sync)");
  ExecStatusType status = PQresultStatus(res);
  PQclear(res);
  if (status != PGRES_PIPELINE_SYNC) {
    return InternalError(std::string("PostgreSQL: expected the end of the pipeline, got ") +
                         PQresStatus(status));
  }
  return OkStatus();
}

Status PgConn::ExitPipeline() {
  return PQexitPipelineMode(conn_) == 1 ? OkStatus() : ErrorOf(nullptr, "(exit pipeline mode)");
}

std::string QuoteIdentifier(const std::string& name) {
  std::string out = "\"";
  for (char c : name) {
    out += c;
    if (c == '"') out += '"';
  }
  return out + "\"";
}

std::string PgTextArray(const std::vector<std::string>& items) {
  std::string out = "{";
  for (const std::string& item : items) {
    if (out.size() > 1) out += ',';
    out += '"';
    for (char c : item) {
      if (c == '"' || c == '\\') out += '\\';
      out += c;
    }
    out += '"';
  }
  return out + "}";
}

Status PgTransact(PgPool& pool, const char* begin, const std::function<Status(PgConn&)>& body,
                  int max_attempts) {
  bool reconnected = false;
  bool reprepared = false;
  for (int attempt = 1;; ++attempt) {
    MEND_ASSIGN_OR_RETURN(PgPool::Handle conn, pool.Acquire());
    bool committing = false;
    Status s = conn->Run(begin);
    if (s.ok()) {
      s = body(*conn);
      if (s.ok()) {
        committing = true;
        s = conn->Run("COMMIT");
      } else {
        conn->Run("ROLLBACK").IgnoreError();
      }
    }
    // A pooled connection the server closed meanwhile (a restart, an idle timeout) fails its
    // first statement. Before COMMIT nothing was applied, so the transaction runs once more on a
    // fresh connection (the pool drops the broken one). A COMMIT that broke is not repeated: it
    // may have been applied.
    if (!s.ok() && !conn->healthy() && !committing && !reconnected) {
      reconnected = true;
      continue;
    }
    // The transaction failed on a statement the session lost; the connection prepares its
    // statements again from now on.
    if (IsStatementMissing(s) && !reprepared) {
      reprepared = true;
      continue;
    }
    if (!IsRetryableConflict(s) || attempt >= max_attempts) return s;
  }
}

Status PgTransactOn(PgConn& conn, const std::function<Status(PgConn&)>& body, int max_attempts) {
  bool reprepared = false;
  for (int attempt = 1;; ++attempt) {
    Status s = conn.Run("BEGIN");
    if (s.ok()) {
      s = body(conn);
      if (s.ok()) {
        s = conn.Run("COMMIT");
      } else {
        conn.Run("ROLLBACK").IgnoreError();
      }
    }
    if (IsStatementMissing(s) && !reprepared) {
      reprepared = true;
      continue;
    }
    if (!IsRetryableConflict(s) || attempt >= max_attempts) return s;
  }
}

}  // namespace mend::db
