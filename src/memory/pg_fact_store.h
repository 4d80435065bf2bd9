#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "memory/document_terms.h"
#include "mend/db/pg_conn.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/postgres_fact_store.h"

namespace mend::memory::internal {

using db::PgConn;

// The words of a fact's searchable text as mend cuts them (ForEachToken: runs of letters and
// digits, ASCII lower-cased), joined by spaces: what the `search` tsvector is made of, so a path
// or an identifier matches by its words on PostgreSQL as on SQLite.
std::string PgSearchText(std::string_view content, std::string_view tags,
                         std::string_view provenance);
// A tsquery (English configuration) that joins `words` with `op` ("|" or "&"), each quoted as a
// lexeme; "" for none.
std::string PgWordQuery(const std::vector<std::string>& words, char op);
inline std::string PgOrQuery(const std::vector<std::string>& words) {
  return PgWordQuery(words, '|');
}

// `v` as the shortest text that reads back as the same double.
std::string PgDoubleText(double v);

// The columns every fact query selects, in the order PgFactFromRow reads them.
#define MEND_PG_FACT_COLUMNS                                                        \
  "rowid, id, content, category, tags, workspace, source, confidence, created_at, " \
  "last_accessed, access_count, helped, hurt, superseded_by, episodes, as_written"
inline constexpr char kPgFactColumns[] = MEND_PG_FACT_COLUMNS;
// Row `r` of a query selecting kPgFactColumns; its rowid in `*rowid`.
Result<Fact> PgFactFromRow(const db::PgResult& res, int r, int64_t* rowid);

// The PostgreSQL FactStore (postgres_fact_store.h). Every operation is one transaction on a pooled
// connection; writes first lock the memory generation row, so they run one at a time across hosts.
class PgFactStore final : public FactStore {
 public:
  PgFactStore(const PostgresFactStoreOptions& options, Clock& clock);
  // Creates pg_trgm when missing, then creates or checks the tables.
  Status Init();

  Result<AddResult> Add(const NewFact& fact) override;
  Result<Fact> Get(const std::string& id) override;
  Result<std::vector<Fact>> GetMany(const std::vector<std::string>& ids) override;
  Result<std::vector<Fact>> List(const ListOptions& options) override;
  Status Remove(const std::string& id) override;
  Status Supersede(const std::string& old_id, const std::string& new_id) override;
  Result<ImportCounts> Import(const std::vector<Fact>& facts) override;
  Result<std::vector<LexicalHit>> SearchLexical(const std::vector<std::string>& words, size_t limit,
                                                const std::string& workspace) override;
  Result<TermStatistics::Counts> CountTerms(const std::vector<std::string>& stems) override;
  Result<std::vector<TagMatch>> MatchTags(const std::vector<std::string>& keys,
                                          const std::string& workspace,
                                          size_t max_postings) override;
  Result<int64_t> Generation() override;
  Result<int64_t> VectorGeneration() override;
  Result<int64_t> Count() override;
  Status RecordInjection(const std::string& run_id,
                         const std::vector<InjectedFact>& facts) override;
  Result<std::vector<std::string>> InjectedInto(const std::string& run_id) override;
  Result<std::vector<Injection>> InjectionsOfRun(const std::string& run_id) override;
  Result<std::vector<Injection>> InjectionsOfFact(const std::string& fact_id,
                                                  size_t limit) override;
  Status RecordOutcome(const std::string& run_id, bool completed) override;
  Result<std::vector<FactVector>> Embeddings(const std::string& model_id) override;
  Result<int64_t> PutEmbeddings(const std::vector<FactVector>& vectors,
                                const std::string& model_id) override;
  Result<std::vector<EmbeddingWork>> MissingEmbeddings(const std::string& model_id, size_t limit,
                                                       int64_t from) override;
  Result<std::vector<EmbeddingWork>> MissingEmbeddingsOf(
      const std::string& model_id, const std::vector<std::string>& ids) override;
  Result<std::vector<EmbeddingCoverage>> Coverage(const std::string& model_id) override;
  Result<FactCounts> CountFacts() override;

 private:
  struct Row {
    int64_t rowid = 0;
    Fact fact;
  };

  Status SetUpConnection(PgConn& conn);
  // Installs pg_trgm when missing and learns its schema (for the search path).
  Status PrepareExtension(PgConn& conn);
  Status CreateOrCheckSchema(PgConn& conn);
  // A write transaction that first locks the memory generation row.
  Status WriteTx(const std::function<Status(PgConn&)>& body);
  // Runs `body`, which reads with one statement, outside any explicit transaction: a statement is
  // its own snapshot, and it costs one round trip instead of three.
  // Runs `sql` (kRunInjections or kFactInjections of pg_fact_search.cc) and reads its rows.
  Result<std::vector<Injection>> ReadInjections(const char* sql,
                                                const std::vector<db::PgParam>& params);
  Status ReadOne(const std::function<Status(PgConn&)>& body);

  // The helpers below run inside a transaction.
  Result<std::optional<Row>> Find(PgConn& conn, const std::string& id);
  Result<std::optional<Row>> FindNearDuplicate(PgConn& conn, const std::string& content,
                                               const std::string& category);
  Status Reinforce(PgConn& conn, const Row& row, const NewFact& fact);
  // Inserts `fact` unless its id is taken (false then); an active one is counted into `deltas`
  // and its tag keys are written.
  Result<bool> Insert(PgConn& conn, const Fact& fact, TermDeltas& deltas);
  Status WriteTermDeltas(PgConn& conn, const TermDeltas& deltas);
  // Takes an active fact out of the term statistics and its tag keys away.
  Status Unindex(PgConn& conn, const Row& row);
  Status IndexTags(PgConn& conn, int64_t rowid, const Fact& fact,
                   const std::vector<std::string>& tags, bool fresh);
  // Import's parts (pg_fact_import.cc). OpenPendingList turns the search index's pending list on
  // in a transaction of its own and says whether it did; ClosePendingList turns it off and
  // flushes it, in `conn`'s transaction. MergeStaged stores the staged `rows` whose ids are not
  // taken, with their index rows and term statistics, and returns how many it stored; `pending`:
  // it flushes the list before returning.
  bool OpenPendingList();
  Status ClosePendingList(PgConn& conn);
  Result<int64_t> MergeStaged(PgConn& conn, const std::vector<Fact>& rows, bool pending);
  // Turns the pending list off when an import left it on (its process ended first).
  Status RestoreSearchIndex(PgConn& conn);
  Status Bump(PgConn& conn, const char* key);
  Result<int64_t> MetaInt(const char* key);

  const PostgresFactStoreOptions options_;
  Clock& clock_;
  std::string extension_schema_;  // where pg_trgm lives; set by Init before the pool is used
  db::PgPool pool_;
};

}  // namespace mend::memory::internal
