// PgFactStore: opening, the schema and every write but imports (pg_fact_import.cc); the reads are
// in pg_fact_search.cc.

#include "memory/pg_fact_store.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <utility>

#include "memory/fact_rows.h"
#include "memory/fact_writes.h"
#include "memory/pg_fact_store_sql.h"
#include "memory/words.h"
#include "mend/base/utf8.h"
#include "mend/memory/lexical.h"
#include "mend/store/postgres_store.h"

namespace mend::memory {
namespace internal {
namespace {

using db::PgParam;
using db::PgResult;
using db::PgTextArray;
using db::QuoteIdentifier;

constexpr char kLockWrites[] = "SELECT value FROM meta WHERE key = 'memory.generation' FOR UPDATE";
constexpr char kInsert[] =
    "INSERT INTO facts (id, content, category, tags, workspace, source, confidence, created_at, "
    "last_accessed, access_count, helped, hurt, superseded_by, episodes, provenance, as_written) "
    "VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) "
    "ON CONFLICT (id) DO NOTHING RETURNING rowid";
constexpr char kInsertSearch[] =
    "INSERT INTO fact_search (fact_rowid, workspace, search) "
    "VALUES ($1, $2, to_tsvector('english', $3))";
constexpr char kUpdateSearch[] =
    "UPDATE fact_search SET search = to_tsvector('english', $2) WHERE fact_rowid = $1";
constexpr char kDeleteSearch[] = "DELETE FROM fact_search WHERE fact_rowid = $1";
constexpr char kReinforce[] =
    "UPDATE facts SET access_count = access_count + 1, last_accessed = $2, tags = $3, "
    "episodes = $4, provenance = $5, as_written = $6 WHERE rowid = $1";
constexpr char kTouchOnly[] =
    "UPDATE facts SET access_count = access_count + 1, last_accessed = $2, as_written = $3 "
    "WHERE rowid = $1";
constexpr char kDelete[] = "DELETE FROM facts WHERE rowid = $1";
constexpr char kSupersede[] = "UPDATE facts SET superseded_by = $2 WHERE rowid = $1";
constexpr char kBump[] = "UPDATE meta SET value = (value::bigint + 1)::text WHERE key = $1";
constexpr char kAddTotal[] = "UPDATE meta SET value = (value::bigint + $2)::text WHERE key = $1";
constexpr char kAddStems[] =
    "INSERT INTO fact_terms (stem, words, tokens) "
    "SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[]) "
    "ON CONFLICT (stem) DO UPDATE SET words = fact_terms.words + excluded.words, "
    "tokens = fact_terms.tokens + excluded.tokens";
constexpr char kDropStems[] = "DELETE FROM fact_terms WHERE stem = ANY($1::text[]) AND tokens <= 0";
// Tag keys and their counts (fact_tag_counts) change in one statement each.
constexpr char kInsertTagKeys[] =
    "WITH added AS (INSERT INTO fact_tag_keys (key, fact_rowid, workspace, fact_id) "
    "SELECT k, $2, $3, $4 FROM unnest($1::text[]) AS k ON CONFLICT DO NOTHING RETURNING key) "
    "INSERT INTO fact_tag_counts (key, facts) SELECT key, count(*) FROM added GROUP BY key "
    "ON CONFLICT (key) DO UPDATE SET facts = fact_tag_counts.facts + excluded.facts";
constexpr char kDeleteTagKeys[] =
    "WITH gone AS (DELETE FROM fact_tag_keys WHERE fact_rowid = $1 RETURNING key) "
    "UPDATE fact_tag_counts c SET facts = c.facts - g.n "
    "FROM (SELECT key, count(*) AS n FROM gone GROUP BY key) g WHERE c.key = g.key";
// Candidates for a near duplicate: facts of the category holding every one of a few of the new
// fact's longest words (the GIN index of `search`), ordered by pg_trgm's similarity; the same
// TrigramJaccard test as on SQLite decides.
constexpr char kSelectNear[] =
    "SELECT * FROM (SELECT " MEND_PG_FACT_COLUMNS
    " FROM facts WHERE rowid IN (SELECT fact_rowid FROM fact_search "
    "WHERE search @@ to_tsquery('english', $1)) AND category = $2 LIMIT 20) c "
    "ORDER BY similarity(content, $3) DESC, rowid";
constexpr size_t kNearGroup = 4;

Result<int64_t> ParseVersion(const std::string& text) {
  int64_t version = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), version);
  if (ec != std::errc() || end != text.data() + text.size() || version < 1) {
    return DataLossError("unreadable memory schema version '" + text + "'");
  }
  return version;
}

std::string Millis(Time t) { return std::to_string(ToMillis(t)); }

}  // namespace

std::string PgDoubleText(double v) {
  char buf[32];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return ec == std::errc() ? std::string(buf, end) : "1";
}

std::string PgSearchText(std::string_view content, std::string_view tags,
                         std::string_view provenance) {
  std::string out;
  std::string buffer;
  for (std::string_view field : {content, tags, provenance}) {
    ForEachToken(field, buffer, [&](std::string_view token, TokenKind) {
      if (!out.empty()) out += ' ';
      out += token;
    });
  }
  return out;
}

std::string PgWordQuery(const std::vector<std::string>& words, char op) {
  std::string out;
  for (const std::string& word : words) {
    if (word.empty()) continue;
    if (!out.empty()) out += {' ', op, ' '};
    out += '\'';
    for (char c : word) {
      if (c == '\'' || c == '\\') out += c == '\'' ? '\'' : '\\';
      out += c;
    }
    out += '\'';
  }
  return out;
}

Result<Fact> PgFactFromRow(const PgResult& res, int r, int64_t* rowid) {
  StoredFact row;
  *rowid = res.Int(r, 0).value_or(0);
  row.id = res.Text(r, 1);
  row.content = res.Text(r, 2);
  row.category = res.Text(r, 3);
  row.tags = res.Text(r, 4);
  row.workspace = res.Text(r, 5);
  row.source = res.Text(r, 6);
  row.confidence = std::strtod(res.Text(r, 7).c_str(), nullptr);
  row.created_at = res.Int(r, 8).value_or(0);
  row.last_accessed = res.Int(r, 9).value_or(0);
  row.access_count = res.Int(r, 10).value_or(0);
  row.helped = res.Int(r, 11).value_or(0);
  row.hurt = res.Int(r, 12).value_or(0);
  if (!res.IsNull(r, 13)) row.superseded_by = res.Text(r, 13);
  row.episodes = res.Text(r, 14);
  row.as_written = res.Text(r, 15);
  return DecodeStoredFact(std::move(row));
}

PgFactStore::PgFactStore(const PostgresFactStoreOptions& options, Clock& clock)
    : options_(options),
      clock_(clock),
      pool_(
          options.url, options.connect_timeout, std::max(1, options.pool_size),
          [this](PgConn& conn) { return SetUpConnection(conn); }, options.connections) {}

Status PgFactStore::SetUpConnection(PgConn& conn) {
  // The memory tables' schema first, then where pg_trgm's operators live; bound parameters keep
  // both names data.
  std::string path;
  if (!options_.schema.empty()) path = QuoteIdentifier(options_.schema);
  if (!extension_schema_.empty() && extension_schema_ != options_.schema) {
    if (!path.empty()) path += ", ";
    path += QuoteIdentifier(extension_schema_);
  }
  if (path.empty()) return OkStatus();
  if (options_.schema.empty()) {
    return conn
        .Exec(
            "SELECT set_config('search_path', current_setting('search_path') || ', ' || $1, "
            "false)",
            {PgParam::Text(path)})
        .status();
  }
  return conn.Exec("SELECT set_config('search_path', $1, false)", {PgParam::Text(path)}).status();
}

Status PgFactStore::PrepareExtension(PgConn& conn) {
  const char* find =
      "SELECT n.nspname FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace "
      "WHERE e.extname = 'pg_trgm'";
  MEND_ASSIGN_OR_RETURN(PgResult found, conn.Exec(find));
  if (found.rows() == 0) {
    // In `public` when there is one, so dropping mend's own schema never drops the extension
    // another schema's tables use.
    MEND_ASSIGN_OR_RETURN(PgResult has_public,
                          conn.Exec("SELECT 1 FROM pg_namespace WHERE nspname = 'public'"));
    std::string target = has_public.rows() > 0 ? "public" : options_.schema;
    std::string create = "CREATE EXTENSION IF NOT EXISTS pg_trgm";
    if (!target.empty()) create += " SCHEMA " + QuoteIdentifier(target);
    Status made = conn.Run(create.c_str());
    if (!made.ok()) {
      return FailedPreconditionError(
          "long-term memory on PostgreSQL needs the pg_trgm extension and it could not be "
          "created (" +
          std::string(made.message()) + "); a database owner can run: CREATE EXTENSION pg_trgm");
    }
    MEND_ASSIGN_OR_RETURN(found, conn.Exec(find));
    if (found.rows() == 0) return InternalError("pg_trgm was created but cannot be found");
  }
  extension_schema_ = found.Text(0, 0);
  return OkStatus();
}

Status PgFactStore::Init() {
  if (options_.url.empty()) return InvalidArgumentError("the PostgreSQL fact store needs a URL");
  if (options_.near_duplicate_jaccard <= 0 || options_.near_duplicate_jaccard > 1) {
    return InvalidArgumentError("near_duplicate_jaccard must be in (0, 1]");
  }
  // Its own connection: the pool's connections are set up only once the extension's schema is
  // known.
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<PgConn> conn,
                        PgConn::Connect(options_.url, options_.connect_timeout));
  MEND_RETURN_IF_ERROR(db::PgTransactOn(*conn, [&](PgConn& c) -> Status {
    MEND_RETURN_IF_ERROR(c.Run(kPgLockSchema));
    MEND_RETURN_IF_ERROR(PrepareExtension(c));
    if (!options_.schema.empty()) {
      std::string create = "CREATE SCHEMA IF NOT EXISTS " + QuoteIdentifier(options_.schema);
      MEND_RETURN_IF_ERROR(c.Run(create.c_str()));
    }
    MEND_RETURN_IF_ERROR(SetUpConnection(c));
    return CreateOrCheckSchema(c);
  }));
  // Searches are only slower while it is left on, so the store opens whether or not this works.
  db::PgTransactOn(*conn, [&](PgConn& c) { return RestoreSearchIndex(c); }).IgnoreError();
  return OkStatus();
}

Status PgFactStore::CreateOrCheckSchema(PgConn& conn) {
  MEND_RETURN_IF_ERROR(conn.Run(kPgCreateMeta));
  MEND_ASSIGN_OR_RETURN(PgResult version, conn.Exec(kPgSelectVersion));
  const std::string where = store::MaskPostgresUrl(options_.url) +
                            (options_.schema.empty() ? "" : " (schema " + options_.schema + ")");
  if (version.rows() > 0) {
    Result<int64_t> v = ParseVersion(version.Text(0, 0));
    if (!v.ok()) return DataLossError(where + ": " + std::string(v.status().message()));
    if (*v > kPgMemorySchemaVersion) {
      return FailedPreconditionError(
          where + " holds memory written by a newer mend (memory schema " + std::to_string(*v) +
          " > " + std::to_string(kPgMemorySchemaVersion) + "); upgrade mend to use it");
    }
    if (*v == kPgMemorySchemaVersion) return OkStatus();
    MEND_RETURN_IF_ERROR(conn.Run(kPgSchemaV2));
    return conn.Exec(kPgUpdateVersion, {PgParam::Int(kPgMemorySchemaVersion)}).status();
  }
  MEND_RETURN_IF_ERROR(conn.Run(kPgSchemaV1));
  MEND_RETURN_IF_ERROR(conn.Run(kPgSchemaV2));
  return conn.Exec(kPgInsertVersion, {PgParam::Int(kPgMemorySchemaVersion)}).status();
}

Status PgFactStore::WriteTx(const std::function<Status(PgConn&)>& body) {
  return db::PgTransact(pool_, "BEGIN", [&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(PgResult locked, conn.Exec(kLockWrites, {}, PgConn::Plan::kPrepared));
    if (locked.rows() == 0) return DataLossError("the memory generation counter is missing");
    return body(conn);
  });
}

Status PgFactStore::ReadOne(const std::function<Status(PgConn&)>& body) {
  Status s;
  for (int attempt = 1; attempt <= 2; ++attempt) {
    MEND_ASSIGN_OR_RETURN(db::PgPool::Handle conn, pool_.Acquire());
    s = body(*conn);
    // A pooled connection the server closed meanwhile: read again on a fresh one.
    if (s.ok() || conn->healthy()) return s;
  }
  return s;
}

Status PgFactStore::Bump(PgConn& conn, const char* key) {
  return conn.Exec(kBump, {PgParam::Text(key)}, PgConn::Plan::kPrepared).status();
}

Result<std::optional<PgFactStore::Row>> PgFactStore::Find(PgConn& conn, const std::string& id) {
  static const std::string sql =
      std::string("SELECT ") + kPgFactColumns + " FROM facts WHERE id = $1";
  MEND_ASSIGN_OR_RETURN(PgResult res,
                        conn.Exec(sql.c_str(), {PgParam::Text(id)}, PgConn::Plan::kPrepared));
  if (res.rows() == 0) return std::optional<Row>();
  Row row;
  MEND_ASSIGN_OR_RETURN(row.fact, PgFactFromRow(res, 0, &row.rowid));
  return std::optional<Row>(std::move(row));
}

Result<std::optional<PgFactStore::Row>> PgFactStore::FindNearDuplicate(
    PgConn& conn, const std::string& content, const std::string& category) {
  // A near duplicate shares almost every word. Two AND queries over disjoint groups of the longest
  // (usually rarest) words find it unless both groups hold a changed word, and each intersects a
  // few short posting lists instead of scanning the common ones.
  std::vector<std::string> words = QueryTerms(content);
  std::stable_sort(words.begin(), words.end(),
                   [](const std::string& a, const std::string& b) { return a.size() > b.size(); });
  std::optional<Row> best;
  double best_similarity = 0;
  for (size_t start = 0; start < words.size() && start < 2 * kNearGroup; start += kNearGroup) {
    const std::vector<std::string> group(
        words.begin() + static_cast<std::ptrdiff_t>(start),
        words.begin() + static_cast<std::ptrdiff_t>(std::min(words.size(), start + kNearGroup)));
    const std::string query = PgWordQuery(group, '&');
    MEND_ASSIGN_OR_RETURN(PgResult res,
                          conn.Exec(kSelectNear,
                                    {PgParam::Text(query), PgParam::Text(category),
                                     PgParam::Text(TruncateUtf8Bytes(content, kMaxFactBytes))},
                                    PgConn::Plan::kPrepared));
    for (int r = 0; r < res.rows(); ++r) {
      Row row;
      MEND_ASSIGN_OR_RETURN(row.fact, PgFactFromRow(res, r, &row.rowid));
      const double similarity = TrigramJaccard(content, row.fact.content);
      if (similarity >= options_.near_duplicate_jaccard && similarity > best_similarity) {
        best_similarity = similarity;
        best = std::move(row);
      }
    }
  }
  return best;
}

Status PgFactStore::Reinforce(PgConn& conn, const Row& row, const NewFact& fact) {
  const Reinforcement r = PlanReinforcement(row.fact, fact);
  const std::string now = Millis(clock_.Now());
  if (!r.text_changed) {
    return conn
        .Exec(kTouchOnly,
              {PgParam::Int(row.rowid), PgParam::Text(now),
               PgParam::Text(EncodeAsWritten(r.as_written))},
              PgConn::Plan::kPrepared)
        .status();
  }
  const std::string tags = JoinTags(r.tags);
  const std::string provenance = ProvenanceText(r.episodes);
  MEND_RETURN_IF_ERROR(
      conn.Exec(kReinforce,
                {PgParam::Int(row.rowid), PgParam::Text(now), PgParam::Text(tags),
                 PgParam::Text(EncodeEpisodes(r.episodes)), PgParam::Text(provenance),
                 PgParam::Text(EncodeAsWritten(r.as_written))},
                PgConn::Plan::kPrepared)
          .status());
  if (row.fact.superseded_by.empty()) {
    MEND_RETURN_IF_ERROR(
        conn.Exec(kUpdateSearch,
                  {PgParam::Int(row.rowid),
                   PgParam::Text(PgSearchText(row.fact.content, tags, provenance))},
                  PgConn::Plan::kPrepared)
            .status());
    TermDeltas deltas;
    deltas.Count(row.fact.content, JoinTags(row.fact.tags), ProvenanceText(row.fact.provenance),
                 -1);
    deltas.Count(row.fact.content, tags, provenance, +1);
    MEND_RETURN_IF_ERROR(WriteTermDeltas(conn, deltas));
    if (r.tags_changed) MEND_RETURN_IF_ERROR(IndexTags(conn, row.rowid, row.fact, r.tags, false));
  }
  return Bump(conn, "memory.generation");
}

Result<bool> PgFactStore::Insert(PgConn& conn, const Fact& f, TermDeltas& deltas) {
  const std::string tags = JoinTags(f.tags);
  const std::string provenance = ProvenanceText(f.provenance);
  MEND_ASSIGN_OR_RETURN(
      PgResult res,
      conn.Exec(kInsert,
                {PgParam::Text(f.id), PgParam::Text(f.content), PgParam::Text(f.category),
                 PgParam::Text(tags), PgParam::Text(f.workspace), PgParam::Text(f.source),
                 PgParam::Text(PgDoubleText(f.confidence)), PgParam::Text(Millis(f.created_at)),
                 PgParam::Text(Millis(f.last_accessed)), PgParam::Int(f.access_count),
                 PgParam::Int(f.helped), PgParam::Int(f.hurt),
                 f.superseded_by.empty() ? PgParam::Null() : PgParam::Text(f.superseded_by),
                 PgParam::Text(EncodeEpisodes(f.provenance)), PgParam::Text(provenance),
                 PgParam::Text(EncodeAsWritten(f.as_written))},
                PgConn::Plan::kPrepared));
  if (res.rows() == 0) return false;
  if (f.superseded_by.empty()) {
    const int64_t rowid = res.Int(0, 0).value_or(0);
    MEND_RETURN_IF_ERROR(conn.Exec(kInsertSearch,
                                   {PgParam::Int(rowid), PgParam::Text(f.workspace),
                                    PgParam::Text(PgSearchText(f.content, tags, provenance))},
                                   PgConn::Plan::kPrepared)
                             .status());
    deltas.Count(f.content, tags, provenance, +1);
    MEND_RETURN_IF_ERROR(IndexTags(conn, rowid, f, f.tags, true));
  }
  return true;
}

Status PgFactStore::WriteTermDeltas(PgConn& conn, const TermDeltas& deltas) {
  // Sorted, so two writers (were they ever to run at once) lock the stems in one order.
  std::vector<std::string> stems;
  for (const auto& [stem, d] : deltas.stems) {
    if (d.tokens != 0 || d.words != 0) stems.push_back(stem);
  }
  std::sort(stems.begin(), stems.end());
  if (!stems.empty()) {
    std::vector<std::string> words;
    std::vector<std::string> tokens;
    bool any_fall = false;
    for (const std::string& stem : stems) {
      const TermDeltas::Delta& d = deltas.stems.at(stem);
      words.push_back(std::to_string(d.words));
      tokens.push_back(std::to_string(d.tokens));
      any_fall = any_fall || d.tokens < 0;
    }
    const std::string stem_array = PgTextArray(stems);
    MEND_RETURN_IF_ERROR(conn.Exec(kAddStems,
                                   {PgParam::Text(stem_array), PgParam::Text(PgTextArray(words)),
                                    PgParam::Text(PgTextArray(tokens))},
                                   PgConn::Plan::kPrepared)
                             .status());
    if (any_fall) {
      MEND_RETURN_IF_ERROR(
          conn.Exec(kDropStems, {PgParam::Text(stem_array)}, PgConn::Plan::kPrepared).status());
    }
  }
  const std::pair<const char*, int64_t> totals[] = {{"memory.documents", deltas.documents},
                                                    {"memory.words", deltas.words},
                                                    {"memory.tokens", deltas.tokens}};
  for (const auto& [key, delta] : totals) {
    if (delta == 0) continue;
    MEND_RETURN_IF_ERROR(
        conn.Exec(kAddTotal, {PgParam::Text(key), PgParam::Int(delta)}, PgConn::Plan::kPrepared)
            .status());
  }
  return OkStatus();
}

Status PgFactStore::IndexTags(PgConn& conn, int64_t rowid, const Fact& fact,
                              const std::vector<std::string>& tags, bool fresh) {
  if (!fresh) {
    MEND_RETURN_IF_ERROR(
        conn.Exec(kDeleteTagKeys, {PgParam::Int(rowid)}, PgConn::Plan::kPrepared).status());
  }
  std::vector<std::string> keys;
  for (const std::string& tag : tags) {
    for (std::string& key : TagKeys(tag)) keys.push_back(std::move(key));
  }
  if (keys.empty()) return OkStatus();
  return conn
      .Exec(kInsertTagKeys,
            {PgParam::Text(PgTextArray(keys)), PgParam::Int(rowid), PgParam::Text(fact.workspace),
             PgParam::Text(fact.id)},
            PgConn::Plan::kPrepared)
      .status();
}

Status PgFactStore::Unindex(PgConn& conn, const Row& row) {
  if (!row.fact.superseded_by.empty()) return OkStatus();
  MEND_RETURN_IF_ERROR(
      conn.Exec(kDeleteSearch, {PgParam::Int(row.rowid)}, PgConn::Plan::kPrepared).status());
  TermDeltas deltas;
  deltas.Count(row.fact.content, JoinTags(row.fact.tags), ProvenanceText(row.fact.provenance), -1);
  MEND_RETURN_IF_ERROR(WriteTermDeltas(conn, deltas));
  return IndexTags(conn, row.rowid, row.fact, {}, false);
}

Result<AddResult> PgFactStore::Add(const NewFact& fact) {
  MEND_ASSIGN_OR_RETURN(const PreparedAdd prepared, PrepareAdd(fact));
  AddResult result;
  MEND_RETURN_IF_ERROR(WriteTx([&](PgConn& conn) -> Status {
    result.id = prepared.id;
    MEND_ASSIGN_OR_RETURN(std::optional<Row> existing, Find(conn, result.id));
    if (existing) {
      result.kind = AddResult::Kind::kReinforced;
      return Reinforce(conn, *existing, fact);
    }
    MEND_ASSIGN_OR_RETURN(std::optional<Row> near,
                          FindNearDuplicate(conn, prepared.content, prepared.category));
    if (near) {
      result.id = near->fact.id;
      result.kind = AddResult::Kind::kMerged;
      return Reinforce(conn, *near, fact);
    }
    result.kind = AddResult::Kind::kAdded;
    TermDeltas deltas;
    MEND_ASSIGN_OR_RETURN(bool inserted,
                          Insert(conn, NewFactRow(prepared, fact, clock_.Now()), deltas));
    if (!inserted) return InternalError("fact " + result.id + " appeared during its own write");
    MEND_RETURN_IF_ERROR(WriteTermDeltas(conn, deltas));
    return Bump(conn, "memory.generation");
  }));
  return result;
}

Status PgFactStore::Remove(const std::string& id) {
  return WriteTx([&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(std::optional<Row> row, Find(conn, id));
    if (!row) return NotFoundError("no fact " + id);
    MEND_RETURN_IF_ERROR(Unindex(conn, *row));
    // Its vectors go with it (ON DELETE CASCADE).
    MEND_RETURN_IF_ERROR(conn.Exec(kDelete, {PgParam::Int(row->rowid)}).status());
    MEND_RETURN_IF_ERROR(Bump(conn, "memory.vector_generation"));
    return Bump(conn, "memory.generation");
  });
}

Status PgFactStore::Supersede(const std::string& old_id, const std::string& new_id) {
  if (old_id == new_id) return InvalidArgumentError("a fact cannot supersede itself");
  return WriteTx([&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(std::optional<Row> old_row, Find(conn, old_id));
    if (!old_row) return NotFoundError("no fact " + old_id);
    MEND_ASSIGN_OR_RETURN(std::optional<Row> new_row, Find(conn, new_id));
    if (!new_row) return NotFoundError("no fact " + new_id);
    MEND_RETURN_IF_ERROR(Unindex(conn, *old_row));
    MEND_RETURN_IF_ERROR(
        conn.Exec(kSupersede, {PgParam::Int(old_row->rowid), PgParam::Text(new_id)}).status());
    MEND_RETURN_IF_ERROR(Bump(conn, "memory.vector_generation"));
    return Bump(conn, "memory.generation");
  });
}

Status PgFactStore::RecordInjection(const std::string& run_id,
                                    const std::vector<InjectedFact>& facts) {
  if (facts.empty()) return OkStatus();
  const std::string now = Millis(clock_.Now());
  return db::PgTransact(pool_, "BEGIN", [&](PgConn& conn) -> Status {
    for (const InjectedFact& fact : facts) {
      const std::string& id = fact.id;
      MEND_RETURN_IF_ERROR(
          conn.Exec("INSERT INTO fact_injections (run_id, fact_id, at, score) "
                    "VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
                    {PgParam::Text(run_id), PgParam::Text(id), PgParam::Text(now),
                     fact.score ? PgParam::Text(PgDoubleText(*fact.score)) : PgParam::Null()},
                    PgConn::Plan::kPrepared)
              .status());
      MEND_RETURN_IF_ERROR(
          conn.Exec("UPDATE facts SET access_count = access_count + 1, last_accessed = $2 "
                    "WHERE id = $1",
                    {PgParam::Text(id), PgParam::Text(now)}, PgConn::Plan::kPrepared)
              .status());
    }
    return OkStatus();
  });
}

Status PgFactStore::RecordOutcome(const std::string& run_id, bool completed) {
  const std::string now = Millis(clock_.Now());
  return db::PgTransact(pool_, "BEGIN", [&](PgConn& conn) -> Status {
    MEND_ASSIGN_OR_RETURN(PgResult any,
                          conn.Exec("SELECT 1 FROM fact_injections WHERE run_id = $1 LIMIT 1",
                                    {PgParam::Text(run_id)}, PgConn::Plan::kPrepared));
    if (any.rows() == 0) return OkStatus();
    MEND_ASSIGN_OR_RETURN(
        PgResult recorded,
        conn.Exec("INSERT INTO fact_run_outcomes (run_id, completed, at) VALUES ($1, $2, $3) "
                  "ON CONFLICT DO NOTHING",
                  {PgParam::Text(run_id), PgParam::Text(completed ? "true" : "false"),
                   PgParam::Text(now)},
                  PgConn::Plan::kPrepared));
    if (recorded.affected() == 0) return OkStatus();  // this run's outcome was counted already
    const char* sql = completed ? "UPDATE facts SET helped = helped + 1 WHERE id IN "
                                  "(SELECT fact_id FROM fact_injections WHERE run_id = $1)"
                                : "UPDATE facts SET hurt = hurt + 1 WHERE id IN "
                                  "(SELECT fact_id FROM fact_injections WHERE run_id = $1)";
    return conn.Exec(sql, {PgParam::Text(run_id)}, PgConn::Plan::kPrepared).status();
  });
}

}  // namespace internal

Result<std::unique_ptr<FactStore>> OpenPostgresFactStore(const PostgresFactStoreOptions& options,
                                                         Clock& clock) {
  if (options.pool_size < 1) return InvalidArgumentError("pool_size must be at least 1");
  auto store = std::make_unique<internal::PgFactStore>(options, clock);
  MEND_RETURN_IF_ERROR(store->Init());
  return std::unique_ptr<FactStore>(std::move(store));
}

}  // namespace mend::memory
