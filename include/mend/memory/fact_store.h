#pragma once

// FactStore, where long-term memory lives (docs/memory.md): adding with dedupe and merging,
// full-text and tag search, vectors per embedding model, feedback and counts; on SQLite
// (FactStore::Open) or PostgreSQL (postgres_fact_store.h). Thread-safe; processes may share a
// store.

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/memory/fact.h"
#include "mend/memory/lexical.h"

namespace mend::memory {

/// What a caller hands to FactStore::Add.
struct NewFact {
  std::string content;               ///< the fact itself; not empty, at most kMaxFactBytes
  std::string category = "general";  ///< "lesson", "general", ...
  std::vector<std::string> tags;     ///< normalised with NormalizeTags
  std::string workspace;             ///< "" = applies everywhere
  std::string source = "user";       ///< who wrote it
  double confidence = 1.0;           ///< (0, 1]
  std::optional<Episode> episode;    ///< provenance of this write, if any
};

/// What FactStore::Add did with a new fact.
struct AddResult {
  /// How the write was absorbed.
  enum class Kind {
    kAdded,       ///< a new fact
    kReinforced,  ///< the same content (same id) existed: access count, last accessed, provenance
    kMerged,      ///< a near duplicate in the same category existed and absorbed this write
  };
  std::string id;            ///< the fact that now holds the content
  Kind kind = Kind::kAdded;  ///< how the write was absorbed
};

/// "added", "reinforced" or "merged".
std::string_view AddResultKindName(AddResult::Kind kind);

/// Which facts FactStore::List returns.
struct ListOptions {
  bool include_superseded = false;  ///< also the facts merged into others
  std::string category;             ///< "" = every category
  size_t limit = 0;                 ///< 0 = no limit; newest first
};

/// One full-text match: the fact id, the store's own relevance (larger is better: FTS5's bm25()
/// negated on SQLite, ts_rank on PostgreSQL), and the text searched (content, tags and provenance,
/// joined by newlines) for scoring of one's own.
struct LexicalHit {
  std::string id;            ///< the fact
  double score = 0;          ///< the store's relevance
  std::string text;          ///< the text searched
  size_t content_bytes = 0;  ///< text's first bytes are the content,
  size_t tags_bytes = 0;     ///< then after a newline the tags, then after another the provenance
};

/// One key of the tag hint (FactStore::MatchTags).
struct TagMatch {
  std::string key;    ///< a tag or keyword of the query
  int64_t facts = 0;  ///< active facts with a tag under this key, in every workspace
  /// Those of them in the workspace asked for, in the order they were added (`rowids`: their row
  /// ids, ascending); empty when the key was over the postings budget.
  std::vector<std::string> ids;
  std::vector<int64_t> rowids;  ///< see ids
};

/// One stored vector of a fact.
struct FactVector {
  std::string id;             ///< the fact
  int part = 0;               ///< 0: the content; 1, 2, ...: its episodes
  std::vector<float> vector;  ///< in the embedding model's space
  std::string workspace;      ///< the fact's (filled by Embeddings)
};

/// One text of a fact that lacks a vector (FactStore::MissingEmbeddings).
struct EmbeddingWork {
  std::string id;    ///< the fact
  int part = 0;      ///< as FactVector::part
  std::string text;  ///< the text to embed
  /// The fact's place in the store's order: MissingEmbeddings(model, limit, position) lists on
  /// from this fact.
  int64_t position = 0;
  /// No other part of this fact is missing: once this vector is stored, the fact is covered.
  bool completes_fact = false;
};

/// How well one embedding model covers the active facts. A fact is covered when every part of it
/// (FactStore::PutEmbedding) has a vector for the model.
struct EmbeddingCoverage {
  std::string model_id;   ///< the embedding model (Embedder::model_id)
  int64_t covered = 0;    ///< active facts with a vector for every part
  int64_t uncovered = 0;  ///< active facts missing at least one
  int dimension = 0;      ///< of the model's stored vectors; 0 when it has none
};

/// One fact given to a run, as FactStore::RecordInjection takes it.
struct InjectedFact {
  /// Implicit, so a list of ids reads as facts given without a score.
  InjectedFact(std::string fact_id, std::optional<double> fact_score = std::nullopt)  // NOLINT
      : id(std::move(fact_id)), score(fact_score) {}
  std::string id;               ///< the fact
  std::optional<double> score;  ///< the retrieval's score for it (ScoredFact::score), if any
};

/// One run's receipt of one fact (FactStore::InjectionsOfRun, InjectionsOfFact).
struct Injection {
  std::string run_id;           ///< the run
  std::string fact_id;          ///< the fact it received
  Time at;                      ///< when
  std::optional<double> score;  ///< retrieval score; none when not recorded (older rows, MCP)
  /// How the run ended as RecordOutcome counted it (true: completed, the fact helped; false:
  /// failed, it hurt); none while not known ("pending").
  std::optional<bool> completed;

  /// Field by field.
  bool operator==(const Injection&) const = default;
};

/// What `mend memory stats` counts.
struct FactCounts {
  int64_t active = 0;      ///< facts search returns
  int64_t superseded = 0;  ///< facts merged into others
  /// Active facts per category, most first (ties by name).
  std::vector<std::pair<std::string, int64_t>> categories;
};

/// How FactStore::Open opens the SQLite memory.
struct FactStoreOptions {
  Clock* clock = nullptr;               ///< required
  double near_duplicate_jaccard = 0.9;  ///< character-trigram Jaccard at or above which facts merge
  std::chrono::milliseconds busy_timeout{5000};  ///< waiting for another process's lock
};

/// Long-term memory (docs/memory.md): on SQLite (the `facts*` tables of mend.db,
/// FactStore::Open) or on PostgreSQL (OpenPostgresFactStore, postgres_fact_store.h), both passing
/// one conformance suite. Superseded facts stay stored and are hidden from search. Thread-safe;
/// several processes (and, on PostgreSQL, hosts) may share one store.
class FactStore {
 public:
  /// The SQLite store: opens or creates the memory tables in the database at `path`, indexed by
  /// FTS5 (porter tokenizer) over content, tags and provenance, kept in sync by triggers.
  /// kFailedPrecondition when the file was written by a newer memory schema; kDataLoss when it is
  /// not a database.
  static Result<std::unique_ptr<FactStore>> Open(const std::string& path, FactStoreOptions options);
  virtual ~FactStore() = default;

  /// Stores a fact (see AddResult for duplicates). kInvalidArgument for empty (after trimming),
  /// over kMaxFactBytes or invalid UTF-8 content, or a confidence outside (0, 1].
  virtual Result<AddResult> Add(const NewFact& fact) = 0;
  /// kNotFound "no fact <id>".
  virtual Result<Fact> Get(const std::string& id) = 0;
  /// The facts of `ids` that exist, in the order given (an absent id is left out). The default
  /// calls Get for each; a store with round trips to a server reads them at once.
  virtual Result<std::vector<Fact>> GetMany(const std::vector<std::string>& ids);
  /// Active facts (and superseded ones if asked), newest first.
  virtual Result<std::vector<Fact>> List(const ListOptions& options) = 0;
  /// Deletes a fact on a person's request (`mend memory rm`). kNotFound when absent.
  virtual Status Remove(const std::string& id) = 0;
  /// Marks `old_id` as replaced by `new_id` (both must exist); it stays but is not retrieved.
  virtual Status Supersede(const std::string& old_id, const std::string& new_id) = 0;
  /// Facts as given (ids kept, times, tags and `as_written` kept for exports; tags normalised for
  /// matching), in one transaction: an id already present is skipped and counted. A fact that is
  /// unusable (empty id; content empty, over kMaxImportedFactBytes or not valid UTF-8; confidence
  /// outside (0, 1]) is left out and listed in `unusable` with its index and the reason; the others
  /// are imported. Errors are the store's own (kUnavailable, kDataLoss, ...): nothing is written.
  /// What Import did.
  struct ImportCounts {
    int64_t imported = 0;                ///< facts added
    int64_t skipped = 0;                 ///< already present
    std::vector<UnusableFact> unusable;  ///< in the order given
  };
  /// Imports `facts` as described above.
  virtual Result<ImportCounts> Import(const std::vector<Fact>& facts) = 0;

  /// Full-text search for active facts holding any of `words` (QueryTerms: the store matches them
  /// by their stems and quotes them for its own query language, so no word is syntax), best first
  /// by the store's ranking (FTS5's bm25() on SQLite). `workspace` non-empty: facts of that
  /// workspace and global ones; empty: all. No words: no hits.
  virtual Result<std::vector<LexicalHit>> SearchLexical(const std::vector<std::string>& words,
                                                        size_t limit,
                                                        const std::string& workspace) = 0;
  /// The term statistics of the active facts (TermStatistics::FromCounts), which the store keeps
  /// with every write: their number, their words and tokens in all, and the frequencies of `stems`
  /// (Porter stems; a stem no active fact holds is left out).
  virtual Result<TermStatistics::Counts> CountTerms(const std::vector<std::string>& stems) = 0;
  /// The tag hint's postings: for each of `keys` (lower-case; see TagMatch), in order, how many
  /// active facts have a tag under it and which of them are in `workspace`'s scope (as
  /// SearchLexical scopes). Keys are read rarest first while the facts read stay within
  /// `max_postings` in all; a key past that comes back with its count and no ids.
  virtual Result<std::vector<TagMatch>> MatchTags(const std::vector<std::string>& keys,
                                                  const std::string& workspace,
                                                  size_t max_postings) = 0;
  /// Changes whenever the searchable text of facts changes (in this or another process); cheap.
  virtual Result<int64_t> Generation() = 0;
  /// Changes whenever a vector is stored or a fact with vectors goes away; cheap.
  virtual Result<int64_t> VectorGeneration() = 0;
  /// Active facts.
  virtual Result<int64_t> Count() = 0;

  /// Records that run `run_id` received `facts` in its prompt, with their scores when given
  /// (access count and last accessed move). A fact recorded for the run before keeps its first
  /// record and score.
  virtual Status RecordInjection(const std::string& run_id,
                                 const std::vector<InjectedFact>& facts) = 0;
  /// The facts run `run_id` received (empty when none).
  virtual Result<std::vector<std::string>> InjectedInto(const std::string& run_id) = 0;
  /// What run `run_id` received, in the order recorded, with scores and the run's outcome.
  virtual Result<std::vector<Injection>> InjectionsOfRun(const std::string& run_id) = 0;
  /// The runs fact `fact_id` was given to, newest first (ties: the later recorded first), at most
  /// `limit` (0: no limit, as ListOptions). Empty for a fact never given or absent.
  virtual Result<std::vector<Injection>> InjectionsOfFact(const std::string& fact_id,
                                                          size_t limit) = 0;
  /// Moves helped (completed) or hurt (failed) of every fact run `run_id` received. Once per run:
  /// later calls for the same run change nothing.
  virtual Status RecordOutcome(const std::string& run_id, bool completed) = 0;

  /// Embeddings, per embedding model id (switching models leaves the old vectors unused). A fact
  /// has one vector per part: part 0 is its content (with tags), part i ≥ 1 its i-th episode's task
  /// and outcome, so a new task can match an old failed task (docs/memory.md).
  /// One vector; kNotFound "no fact <id>" when the fact does not exist. The default stores it with
  /// PutEmbeddings.
  virtual Status PutEmbedding(const FactVector& vector, const std::string& model_id);
  /// Stores `vectors` in one transaction and returns how many were stored: a vector of a fact that
  /// no longer exists is skipped. kInvalidArgument for an empty vector (nothing is stored).
  virtual Result<int64_t> PutEmbeddings(const std::vector<FactVector>& vectors,
                                        const std::string& model_id) = 0;
  /// Every vector of active facts for `model_id`, with the fact's workspace.
  virtual Result<std::vector<FactVector>> Embeddings(const std::string& model_id) = 0;
  /// Up to `limit` parts of active facts without a vector for `model_id`, in the store's order of
  /// facts, starting at the fact at `from` (an EmbeddingWork::position; 0: the first fact). A fact
  /// whose parts did not all fit is listed again from its position once the others are stored.
  virtual Result<std::vector<EmbeddingWork>> MissingEmbeddings(const std::string& model_id,
                                                               size_t limit, int64_t from) = 0;
  /// Every part without a vector for `model_id` of the active facts among `ids` (absent and
  /// superseded ones are left out, a repeated one is listed once), in the order of `ids`.
  virtual Result<std::vector<EmbeddingWork>> MissingEmbeddingsOf(
      const std::string& model_id, const std::vector<std::string>& ids) = 0;
  /// The coverage of the active facts by every model with vectors of active facts, and by
  /// `model_id` also when it has none (unless empty); ordered by model id.
  virtual Result<std::vector<EmbeddingCoverage>> Coverage(const std::string& model_id) = 0;
  /// Active and superseded facts, and active facts per category.
  virtual Result<FactCounts> CountFacts() = 0;
};

/// Character-trigram Jaccard similarity of two texts after lower-casing and collapsing whitespace.
double TrigramJaccard(std::string_view a, std::string_view b);

}  // namespace mend::memory
