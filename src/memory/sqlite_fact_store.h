#pragma once

#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "memory/document_terms.h"
#include "mend/db/sqlite.h"
#include "mend/memory/fact_store.h"

namespace mend::memory::internal {

class SqliteFactStore final : public FactStore {
 public:
  SqliteFactStore(std::string path, FactStoreOptions options, std::unique_ptr<db::SqliteConn> db);
  Status Init();
  // Binds the 16 columns of `fact`'s row in `facts`, in the table's order from `id` to
  // `as_written`, to parameters first .. first + 15. `fact`'s strings must outlive the binding.
  static void BindFactColumns(db::SqliteStmt& stmt, const Fact& fact, int first);

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
  // Counts an active fact into `deltas` (sign +1) or out of them (sign -1).
  static void CountFact(const Fact& fact, int sign, TermDeltas& deltas);
  // Callers hold mu_.
  Status CheckSchema();
  Result<std::optional<Row>> FindLocked(const std::string& id);
  Result<std::optional<Row>> FindNearDuplicateLocked(const std::string& content,
                                                     const std::string& category);
  Status ReinforceLocked(Row& row, const NewFact& fact);
  // Inserts `fact`; an active one is counted into `deltas` and its tag keys are written.
  Status InsertLocked(const Fact& fact, TermDeltas& deltas);
  Status WriteTermDeltasLocked(const TermDeltas& deltas);
  // Takes an active fact's text out of the term statistics and its tag keys away (a fact about
  // to be removed or superseded); nothing for a superseded one.
  Status UnindexLocked(const Row& row);
  // Replaces the tag keys of `fact` (its id and workspace), at `rowid`, with those of `tags` (none:
  // removes them). `fresh`: the fact has none yet (just inserted), so there is nothing to remove.
  Status IndexTagsLocked(int64_t rowid, const Fact& fact, const std::vector<std::string>& tags,
                         bool fresh = false);
  // Creates the version 2 tables of a version 1 file and counts its active facts into them; the
  // caller records the new version.
  Status MigrateToV2Locked();
  Status BumpLocked(const char* sql);
  Result<int64_t> MetaIntLocked(const char* sql);
  Status WriteTx(const std::function<Status()>& body);

  const std::string path_;
  const FactStoreOptions options_;
  std::mutex mu_;
  std::unique_ptr<db::SqliteConn> db_;
};

}  // namespace mend::memory::internal
