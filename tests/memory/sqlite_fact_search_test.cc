// SqliteFactStore::SearchLexical: it reads the words' postings from FTS5 without bm25(), yet
// ranks and scores the facts it returns as bm25() does.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/lexical.h"
#include "tests/memory/sqlite_fact_store_harness.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::memory::testing::SqliteFactStoreHarness;
using ::mend::testing::IsOk;
using ::testing::DoubleNear;
using ::testing::ElementsAre;

class SqliteFactSearchTest : public ::testing::Test {
 protected:
  void SetUp() override { Reopen(); }
  void Reopen() {
    store_.reset();
    auto store = harness_.Open(clock_);
    ASSERT_THAT(store.status(), IsOk());
    store_ = std::move(store).value();
  }
  std::string Add(const NewFact& fact) {
    Result<AddResult> r = store_->Add(fact);
    EXPECT_THAT(r.status(), IsOk());
    return r.ok() ? r->id : "";
  }
  std::vector<LexicalHit> Search(const std::string& text, size_t limit) {
    auto hits = store_->SearchLexical(QueryTerms(text), limit, "");
    EXPECT_THAT(hits.status(), IsOk());
    return hits.ok() ? *hits : std::vector<LexicalHit>{};
  }
  static std::vector<std::string> Ids(const std::vector<LexicalHit>& hits) {
    std::vector<std::string> ids;
    for (const LexicalHit& h : hits) ids.push_back(h.id);
    return ids;
  }
  // -bm25() of every fact matching any of `text`'s words, by id: FTS5's own ranking, on the
  // store's file.
  std::map<std::string, double> Fts5Scores(const std::string& text) {
    std::map<std::string, double> out;
    sqlite3* db = nullptr;
    EXPECT_EQ(sqlite3_open_v2(harness_.path().c_str(), &db, SQLITE_OPEN_READONLY, nullptr),
              SQLITE_OK);
    sqlite3_stmt* stmt = nullptr;
    EXPECT_EQ(
        sqlite3_prepare_v2(db,
                           "SELECT f.id, m.score FROM (SELECT rowid, bm25(facts_fts) AS score "
                           "FROM facts_fts WHERE facts_fts MATCH ?1) m "
                           "JOIN facts f ON f.rowid = m.rowid",
                           -1, &stmt, nullptr),
        SQLITE_OK)
        << sqlite3_errmsg(db);
    const std::string match = BuildFtsQuery(QueryTerms(text));
    sqlite3_bind_text(stmt, 1, match.c_str(), -1, SQLITE_TRANSIENT);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      out[reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0))] =
          -sqlite3_column_double(stmt, 1);
    }
    sqlite3_finalize(stmt);
    sqlite3_close(db);
    return out;
  }

  ManualClock clock_;
  SqliteFactStoreHarness harness_;
  std::unique_ptr<FactStore> store_;
};

// Facts of different lengths, with stop words, repeats, tags and provenance; the last one is long
// enough (over 127 tokens) that FTS5 keeps its length in more than one byte.
TEST_F(SqliteFactSearchTest, RanksAndScoresAsFts5sBm25WhileNoWordIsCommon) {
  NewFact deploy{"Deploy the payments service only after the database migrations have run",
                 "lesson",
                 {"payments", "deploy"}};
  deploy.episode =
      Episode{"deploy payments", "ERROR: migration 42 has not run on the database", clock_.Now()};
  Add(deploy);
  Add({"Rotate the API keys of the payments service every month", "project", {"security"}});
  NewFact staging{"The staging database is reset every night at one", "project", {"staging"}};
  staging.episode =
      Episode{"reset staging", "ERROR: connection refused on port 5432", clock_.Now()};
  Add(staging);
  Add({"Run npm ci in the package folder before npm run build", "lesson", {"npm", "node"}});
  Add({"Set git user.name and user.email before committing in CI", "lesson", {"git"}});
  Add({"Prefers tabs over spaces in Go code", "preference", {"go", "style"}});
  Add({"Kafka brokers are pinned to version 3.6 on the shared cluster", "project", {"kafka"}});
  Add({"Use UTC timestamps everywhere; naive datetimes broke the billing report twice", "lesson"});
  Add({"Grafana dashboards live in the observability repo", "project", {"grafana"}});
  Add({"The nightly job compresses artifacts and mirrors them to the backup bucket", "project"});
  Add({"Pytest fixtures for the ledger service are slow; run them with -n auto", "lesson"});
  Add({"Terraform state for k8s clusters lives in the platform bucket", "project", {"k8s"}});
  std::string long_fact = "The kafka consumer lag report lists";
  for (int i = 0; i < 150; ++i) long_fact += " partition" + std::to_string(i);
  Add({long_fact, "project"});
  Reopen();  // the store searches a file it opened, not one it made

  // Each word of these is in at most a third of the facts, where the store's IDF is FTS5's.
  for (const char* text :
       {"deploy the payments migrations after the database run", "kafka brokers lag on the cluster",
        "npm build fails: could not read package.json", "one nightly report on the cluster",
        "migrate the migrations of the payments service", "terraform bucket"}) {
    const std::map<std::string, double> expected = Fts5Scores(text);
    const std::vector<LexicalHit> hits = Search(text, 100);
    ASSERT_EQ(hits.size(), expected.size()) << text;
    for (size_t i = 0; i < hits.size(); ++i) {
      ASSERT_TRUE(expected.contains(hits[i].id)) << text;
      const double want = expected.at(hits[i].id);
      EXPECT_THAT(hits[i].score, DoubleNear(want, 1e-9 * want)) << text << ": " << hits[i].id;
      if (i > 0) {
        EXPECT_GE(hits[i - 1].score, hits[i].score) << text;
      }
    }
  }
}

// The term frequency counts before the shortlist whose lengths are read: with a limit of one,
// a fact saying the word twice wins over facts added before it that say it once.
TEST_F(SqliteFactSearchTest, AWordSaidTwiceOutranksItSaidOnceAmongMany) {
  for (int i = 0; i < 12; ++i) {
    Add({"The kafka job of team " + std::to_string(i) + " restarts brokers", "project"});
  }
  const std::string twice = Add({"The kafka job restarts kafka brokers", "project"});
  for (int i = 0; i < 20; ++i) Add({"Unrelated note number " + std::to_string(i), "project"});
  EXPECT_THAT(Ids(Search("kafka", 1)), ElementsAre(twice));
}

// Among facts holding the same words as often, the shorter comes first, as in bm25().
TEST_F(SqliteFactSearchTest, AShortFactOutranksALongOne) {
  const std::string wordy =
      Add({"The grafana dashboards of every team are exported each night to the shared bucket and "
           "imported again in the morning",
           "project"});
  const std::string terse = Add({"Grafana dashboards are exported nightly", "project"});
  for (int i = 0; i < 10; ++i) Add({"Unrelated note number " + std::to_string(i), "project"});
  EXPECT_THAT(Ids(Search("grafana", 10)), ElementsAre(terse, wordy));
}

// A word FTS5 folds (a letter with a diacritic) or cuts in two (a dash inside) is searched as FTS5
// reads it.
TEST_F(SqliteFactSearchTest, WordsFts5FoldsOrCutsAreFoundAsFts5ReadsThem) {
  const std::string cafe = Add({"The café on the terrace opens at noon", "project"});
  const std::string pipeline = Add({"The build pipeline runs on the shared runners", "project"});
  for (int i = 0; i < 6; ++i) Add({"Unrelated note number " + std::to_string(i), "project"});
  EXPECT_THAT(Ids(Search("CAFÉ", 10)), ElementsAre(cafe));
  EXPECT_THAT(Ids(Search("cafe", 10)), ElementsAre(cafe));
  EXPECT_THAT(Ids(Search("build—pipeline", 10)), ElementsAre(pipeline));
  const std::vector<LexicalHit> hits = Search("build—pipeline", 10);
  ASSERT_EQ(hits.size(), 1u);
  const double want = Fts5Scores("build—pipeline").at(pipeline);
  EXPECT_THAT(hits[0].score, DoubleNear(want, 1e-9 * want));
}

TEST_F(SqliteFactSearchTest, SupersededFactsAreLeftOutAndTheLimitHolds) {
  const std::string old_id = Add({"Kafka brokers restart on Sunday", "project"});
  const std::string new_id = Add({"Kafka brokers restart on Monday night", "project"});
  for (int i = 0; i < 5; ++i)
    Add({"Kafka topic " + std::to_string(i) + " is compacted", "project"});
  MEND_ASSERT_OK(store_->Supersede(old_id, new_id));
  const std::vector<std::string> all = Ids(Search("kafka brokers", 100));
  EXPECT_EQ(all.size(), 6u);
  EXPECT_EQ(std::count(all.begin(), all.end(), old_id), 0);
  EXPECT_EQ(all.front(), new_id);
  EXPECT_THAT(Ids(Search("kafka brokers", 1)), ElementsAre(new_id));
}

}  // namespace
}  // namespace mend::memory
