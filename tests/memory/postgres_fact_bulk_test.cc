// The PostgreSQL fact store's bulk writes and the search index: a large import turns the index's
// pending list on only for its own duration and leaves it empty; a role that does not own the
// index imports row by row; a batch of vectors is one statement that stores what one upsert after
// another would.
//
// Needs a server: MEND_TEST_POSTGRES_URL (scripts/with_postgres). Without it every test is skipped.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <memory>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/postgres_fact_store.h"
#include "tests/memory/fact_store_conformance.h"
#include "tests/support/postgres_test_server.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::memory::testing::ExpectKeptStatisticsMatchTheActiveFacts;
using ::mend::testing::FreshPostgresSchema;
using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::kNoPostgresServer;
using ::mend::testing::PostgresTestUrl;
using ::mend::testing::RawPostgresExec;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::IsEmpty;
using ::testing::SizeIs;

// The first value `sql` returns, run on a connection of its own; "" when there is none.
std::string RawPostgresValue(const std::string& sql) {
  PGconn* conn = PQconnectdb(PostgresTestUrl().c_str());
  PGresult* res = PQexec(conn, sql.c_str());
  std::string out;
  if (PQresultStatus(res) == PGRES_TUPLES_OK && PQntuples(res) > 0) out = PQgetvalue(res, 0, 0);
  EXPECT_EQ(PQresultStatus(res), PGRES_TUPLES_OK) << PQerrorMessage(conn);
  PQclear(res);
  PQfinish(conn);
  return out;
}

// `n` small facts, all active, with a tag each.
std::vector<Fact> SmallFacts(Time now, int n) {
  std::vector<Fact> facts;
  for (int i = 0; i < n; ++i) {
    Fact f;
    f.id = "small-" + std::to_string(i);
    f.content = "lesson number " + std::to_string(i) + " about deploys and backups";
    f.tags = {"group-" + std::to_string(i % 5)};
    f.created_at = f.last_accessed = now;
    facts.push_back(std::move(f));
  }
  return facts;
}

class PostgresFactBulkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PostgresTestUrl().empty()) GTEST_SKIP() << kNoPostgresServer;
    schema_ = FreshPostgresSchema("mend_bulk");
  }
  void TearDown() override {
    stores_.clear();
    if (!schema_.empty()) RawPostgresExec("DROP SCHEMA IF EXISTS \"" + schema_ + "\" CASCADE");
    if (!role_.empty()) {
      RawPostgresExec("DROP OWNED BY \"" + role_ + "\"");
      RawPostgresExec("DROP ROLE IF EXISTS \"" + role_ + "\"");
    }
  }

  // A store over this test's schema, connected as `user` (empty: the server's test user); null
  // when it cannot be opened.
  FactStore* Open(const std::string& user = "") {
    PostgresFactStoreOptions options;
    options.url = PostgresTestUrl();
    if (!user.empty()) {
      const size_t from = options.url.find("://") + 3;
      options.url.replace(from, options.url.find('@') - from, user);
    }
    options.schema = schema_;
    Result<std::unique_ptr<FactStore>> store = OpenPostgresFactStore(options, clock_);
    EXPECT_THAT(store.status(), IsOk());
    if (!store.ok()) return nullptr;
    stores_.push_back(std::move(store).value());
    return stores_.back().get();
  }

  // The search index's storage parameters, as the catalog lists them.
  std::string SearchIndexOptions() {
    return RawPostgresValue("SELECT reloptions::text FROM pg_class WHERE oid = '\"" + schema_ +
                            "\".fact_search_words'::regclass");
  }
  // Pages of the pending list it flushed (so 0 when the list was empty).
  std::string FlushPendingList() {
    return RawPostgresValue("SELECT gin_clean_pending_list('\"" + schema_ +
                            "\".fact_search_words'::regclass)");
  }

  ManualClock clock_;
  std::string schema_;
  std::string role_;
  std::vector<std::unique_ptr<FactStore>> stores_;
};

TEST_F(PostgresFactBulkTest, ALargeImportLeavesTheSearchIndexWithoutAPendingList) {
  FactStore* store = Open();
  ASSERT_NE(store, nullptr);

  ASSERT_THAT(store->Import(SmallFacts(clock_.Now(), 1500)),
              IsOkAndHolds(Field(&FactStore::ImportCounts::imported, 1500)));

  EXPECT_EQ(SearchIndexOptions(), "{fastupdate=off}");
  EXPECT_EQ(FlushPendingList(), "0");
  auto hits = store->SearchLexical({"1499"}, 10, "");
  ASSERT_THAT(hits.status(), IsOk());
  ASSERT_THAT(*hits, SizeIs(1));
  EXPECT_EQ((*hits)[0].id, "small-1499");
  ExpectKeptStatisticsMatchTheActiveFacts(*store);
}

TEST_F(PostgresFactBulkTest, OpeningTheStoreSwitchesOffAPendingListLeftOn) {
  ASSERT_NE(Open(), nullptr);
  // What an import whose process ended before it switched the list off leaves.
  RawPostgresExec("ALTER INDEX \"" + schema_ + "\".fact_search_words SET (fastupdate = on)");

  ASSERT_NE(Open(), nullptr);

  EXPECT_EQ(SearchIndexOptions(), "{fastupdate=off}");
}

TEST_F(PostgresFactBulkTest, ARoleThatDoesNotOwnTheIndexImportsRowByRow) {
  ASSERT_NE(Open(), nullptr);  // the tables belong to the server's test user
  role_ = schema_ + "_writer";
  RawPostgresExec("CREATE ROLE \"" + role_ + "\" LOGIN");
  RawPostgresExec(
      "DO $$ BEGIN EXECUTE format('GRANT CREATE ON DATABASE %I TO %I', "
      "current_database(), '" +
      role_ + "'); END $$");
  for (const char* grant : {"GRANT USAGE, CREATE ON SCHEMA \"%s\" TO \"%r\"",
                            "GRANT ALL ON ALL TABLES IN SCHEMA \"%s\" TO \"%r\"",
                            "GRANT ALL ON ALL SEQUENCES IN SCHEMA \"%s\" TO \"%r\""}) {
    std::string sql = grant;
    sql.replace(sql.find("%s"), 2, schema_);
    sql.replace(sql.find("%r"), 2, role_);
    RawPostgresExec(sql);
  }
  FactStore* store = Open(role_);
  ASSERT_NE(store, nullptr);

  ASSERT_THAT(store->Import(SmallFacts(clock_.Now(), 1200)),
              IsOkAndHolds(Field(&FactStore::ImportCounts::imported, 1200)));

  EXPECT_EQ(SearchIndexOptions(), "{fastupdate=off}");
  EXPECT_THAT(store->Count(), IsOkAndHolds(1200));
  ExpectKeptStatisticsMatchTheActiveFacts(*store);
}

TEST_F(PostgresFactBulkTest, ABatchOfVectorsStoresTheLastOfARepeatedPart) {
  FactStore* opened = Open();
  ASSERT_NE(opened, nullptr);
  FactStore& store = *opened;
  Fact f;
  f.id = "a";
  f.content = "Quote variables in shell scripts";
  f.provenance = {Episode{"rename photos", "not a directory", clock_.Now()}};
  Fact old = f;
  old.id = "old";
  old.content = "An older lesson";
  old.superseded_by = "a";
  ASSERT_THAT(store.Import({f, old}).status(), IsOk());

  // Every vector of a fact that exists counts as stored, as one upsert after another counts it.
  auto stored = store.PutEmbeddings({{"a", 0, {1.0f}, ""},
                                     {"a", 1, {0.5f, 0.25f}, ""},
                                     {"gone", 0, {1.0f}, ""},
                                     {"a", 0, {2.0f, 3.0f}, ""},
                                     {"old", 0, {4.0f}, ""}},
                                    "m1");

  EXPECT_THAT(stored, IsOkAndHolds(4));
  auto vectors = store.Embeddings("m1");
  ASSERT_THAT(vectors.status(), IsOk());
  ASSERT_THAT(*vectors, SizeIs(2));  // a superseded fact's vector is kept but not listed
  EXPECT_EQ((*vectors)[0].part, 0);
  EXPECT_THAT((*vectors)[0].vector, ElementsAre(2.0f, 3.0f));
  EXPECT_EQ((*vectors)[1].part, 1);
  EXPECT_THAT((*vectors)[1].vector, ElementsAre(0.5f, 0.25f));
  EXPECT_THAT(store.MissingEmbeddings("m1", 10, 0), IsOkAndHolds(IsEmpty()));
  auto coverage = store.Coverage("m1");
  ASSERT_THAT(coverage.status(), IsOk());
  ASSERT_THAT(*coverage, SizeIs(1));
  EXPECT_EQ((*coverage)[0].covered, 1);
  EXPECT_EQ((*coverage)[0].dimension, 2);
  EXPECT_THAT(store.PutEmbeddings({{"gone", 0, {1.0f}, ""}}, "m1"), IsOkAndHolds(0));
}

}  // namespace
}  // namespace mend::memory
