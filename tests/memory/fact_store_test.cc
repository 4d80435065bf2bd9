// The SQLite FactStore: the conformance suite, and what only the SQLite file does (its schema
// versions, a file that is not its own); also the fact id and the similarity that merges facts.

#include "mend/memory/fact_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdint>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/memory/chatcli_format.h"
#include "tests/memory/fact_store_conformance.h"
#include "tests/memory/import_comparison.h"
#include "tests/memory/sqlite_fact_store_harness.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::memory::testing::FactStoreBulkImportTest;
using ::mend::memory::testing::FactStoreConformanceTest;
using ::mend::memory::testing::FactStoreParam;
using ::mend::memory::testing::kChatcliFile;
using ::mend::memory::testing::SqliteFactStoreHarness;
using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;

std::unique_ptr<testing::FactStoreHarness> MakeSqliteHarness() {
  return std::make_unique<SqliteFactStoreHarness>();
}

INSTANTIATE_TEST_SUITE_P(Sqlite, FactStoreConformanceTest,
                         ::testing::Values(FactStoreParam{"Sqlite", MakeSqliteHarness}),
                         testing::FactStoreParamName);
INSTANTIATE_TEST_SUITE_P(Sqlite, FactStoreBulkImportTest,
                         ::testing::Values(FactStoreParam{"Sqlite", MakeSqliteHarness}),
                         testing::FactStoreParamName);

// A store on a file of its own, which the tests also open with sqlite3 as another program would.
class FactStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = harness_.path();
    dir_ = harness_.dir();
    Reopen();
  }
  void TearDown() override { store_.reset(); }
  void Reopen() {
    store_.reset();
    auto store = harness_.Open(clock_);
    ASSERT_THAT(store.status(), IsOk());
    store_ = std::move(store).value();
  }
  AddResult MustAdd(NewFact fact) {
    Result<AddResult> r = store_->Add(fact);
    EXPECT_THAT(r.status(), IsOk());
    return r.ok() ? *r : AddResult{};
  }

  ManualClock clock_;
  SqliteFactStoreHarness harness_;
  std::string dir_;
  std::string path_;
  std::unique_ptr<FactStore> store_;
};

TEST(FactIdTest, IsFirstTwelveBytesOfSha256OfLowerCasedTrimmedContent) {
  EXPECT_EQ(FactIdFor("Use tabs in Go files"), "33175f622f51ec0abd82757e");
  EXPECT_EQ(FactIdFor("  USE TABS in Go files  \n"), "33175f622f51ec0abd82757e");
  // Non-ASCII letters are lower-cased as Go's strings.ToLower does: sha256("ação ñ σ привет").
  EXPECT_EQ(FactIdFor("AÇÃO Ñ Σ ПРИВЕТ"), "e6ff0588cdc98c9639769a0d");
  EXPECT_EQ(FactIdFor("ação ñ σ привет"), "e6ff0588cdc98c9639769a0d");
}

TEST(TrigramJaccardTest, IdenticalDifferentAndCaseInsensitive) {
  EXPECT_DOUBLE_EQ(TrigramJaccard("abc def", "ABC  def"), 1.0);
  EXPECT_LT(TrigramJaccard("kubernetes pods", "sqlite locking"), 0.1);
  double near = TrigramJaccard("Run npm install before npm run build in the frontend folder",
                               "Run npm install before npm run build in the frontend folder.");
  EXPECT_GE(near, 0.9);
  EXPECT_LT(near, 1.0);
}

TEST_F(FactStoreTest, AVersionTwoFileGainsTheWrittenColumn) {
  AddResult a = MustAdd({"alpha fact", "general", {"one"}});
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db,
                         "ALTER TABLE facts DROP COLUMN as_written; "
                         "DROP INDEX fact_injections_fact; "
                         "ALTER TABLE fact_injections DROP COLUMN score; "
                         "UPDATE meta SET value = '2' WHERE key = 'memory.schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  Reopen();

  auto got = store_->Get(a.id);
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_THAT(got->tags, ElementsAre("one"));
  EXPECT_TRUE(got->as_written.empty());
  Result<ChatcliImport> parsed = ParseChatcliJson(kChatcliFile, clock_.Now());
  ASSERT_THAT(parsed.status(), IsOk());
  ASSERT_THAT(store_->Import(parsed->facts).status(), IsOk());
  Reopen();
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  ASSERT_EQ(sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'memory.schema_version'", -1,
                               &stmt, nullptr),
            SQLITE_OK);
  ASSERT_EQ(sqlite3_step(stmt), SQLITE_ROW);
  EXPECT_STREQ(reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0)), "4");
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  auto deploy = store_->Get("aaaaaaaaaaaaaaaaaaaaaaaa");
  ASSERT_THAT(deploy.status(), IsOk());
  EXPECT_EQ(deploy->as_written.provenance, "correction");
}

TEST_F(FactStoreTest, AVersionThreeFileGainsInjectionScoresAndKeepsItsInjections) {
  AddResult a = MustAdd({"alpha fact"});
  MEND_ASSERT_OK(store_->RecordInjection("run-1", {{a.id, 0.5}}));
  MEND_ASSERT_OK(store_->RecordOutcome("run-1", true));
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  // What version 3 had: injections without a score and no index by fact.
  ASSERT_EQ(sqlite3_exec(db,
                         "DROP INDEX fact_injections_fact; "
                         "ALTER TABLE fact_injections DROP COLUMN score; "
                         "UPDATE meta SET value = '3' WHERE key = 'memory.schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);

  Reopen();

  auto old = store_->InjectionsOfRun("run-1");
  ASSERT_THAT(old.status(), IsOk());
  ASSERT_EQ(old->size(), 1u);
  EXPECT_EQ((*old)[0].fact_id, a.id);
  EXPECT_EQ((*old)[0].score, std::nullopt);
  EXPECT_EQ((*old)[0].completed, true);
  MEND_ASSERT_OK(store_->RecordInjection("run-2", {{a.id, 0.25}}));
  auto given = store_->InjectionsOfFact(a.id, 10);
  ASSERT_THAT(given.status(), IsOk());
  ASSERT_EQ(given->size(), 2u);
  EXPECT_EQ((*given)[0].run_id, "run-2");
  EXPECT_EQ((*given)[0].score, 0.25);
  EXPECT_EQ((*given)[1].run_id, "run-1");
}

TEST_F(FactStoreTest, NewerSchemaIsRefusedWithAClearMessage) {
  store_.reset();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE meta SET value = '99' WHERE key = 'memory.schema_version'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_THAT(FactStore::Open(path_, FactStoreOptions{&clock_}).status(),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("newer mend")));
}

TEST_F(FactStoreTest, ForeignFileIsDataLoss) {
  store_.reset();
  std::string foreign = dir_ + "/not_a_db";
  std::ofstream(foreign) << std::string(4096, 'z');
  EXPECT_THAT(FactStore::Open(foreign, FactStoreOptions{&clock_}).status(),
              StatusIs(StatusCode::kDataLoss));
}

// Runs `sql` on the store's file through a connection of its own; the first column of the first
// row as an integer (0 when there is none).
int64_t QueryFile(const std::string& path, const char* sql) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* stmt = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql, -1, &stmt, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  const int rc = sqlite3_step(stmt);
  EXPECT_TRUE(rc == SQLITE_ROW || rc == SQLITE_DONE) << sql << ": " << sqlite3_errmsg(db);
  const int64_t value = rc == SQLITE_ROW ? sqlite3_column_int64(stmt, 0) : 0;
  sqlite3_finalize(stmt);
  sqlite3_close(db);
  return value;
}

TEST_F(FactStoreTest, ALargeImportWritesTheSearchIndexInOnePiece) {
  const std::vector<Fact> facts = testing::ManyFacts(clock_.Now(), 2000);

  ASSERT_THAT(store_->Import(facts), IsOkAndHolds(Field(&FactStore::ImportCounts::imported, 2000)));

  // FTS5 writes what it gathered at the start and end of every statement that may write it inside
  // a transaction: imported a statement per fact, the index came in hundreds of small segments,
  // merged again and again meanwhile.
  EXPECT_EQ(QueryFile(path_, "SELECT count(DISTINCT segid) FROM facts_fts_idx"), 1);
  EXPECT_EQ(QueryFile(path_, "INSERT INTO facts_fts (facts_fts) VALUES ('integrity-check')"), 0);
  testing::ExpectKeptStatisticsMatchTheActiveFacts(*store_);
}

TEST_F(FactStoreTest, AFailedImportWritesNothingAndTheNextOneWorks) {
  // Another program's trigger refuses one fact, in the middle of the import.
  store_.reset();
  ASSERT_EQ(QueryFile(path_,
                      "CREATE TRIGGER refuse BEFORE INSERT ON facts WHEN new.content LIKE "
                      "'%refused%' BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END"),
            0);
  Reopen();
  std::vector<Fact> facts = testing::ManyFacts(clock_.Now(), 30);
  facts[12].content = "this fact is refused";

  EXPECT_THAT(store_->Import(facts),
              StatusIs(StatusCode::kInternal, HasSubstr("refused by a trigger")));

  EXPECT_THAT(store_->Count(), IsOkAndHolds(0));
  EXPECT_THAT(store_->MatchTags({"group-1"}, "", 10),
              IsOkAndHolds(ElementsAre(Field(&TagMatch::facts, 0))));
  EXPECT_EQ(QueryFile(path_, "SELECT count(*) FROM facts_fts_idx"), 0);
  // The staging table is the connection's own and went with the transaction.
  facts.erase(facts.begin() + 12);
  auto again = store_->Import(facts);
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(again->imported, 29);
  auto twice = store_->Import(facts);
  ASSERT_THAT(twice.status(), IsOk());
  EXPECT_EQ(twice->skipped, 29);
  EXPECT_EQ(QueryFile(path_, "INSERT INTO facts_fts (facts_fts) VALUES ('integrity-check')"), 0);
  testing::ExpectKeptStatisticsMatchTheActiveFacts(*store_);
}

}  // namespace
}  // namespace mend::memory
