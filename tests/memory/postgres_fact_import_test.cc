// The PostgreSQL fact store's import against SQLite's, and a failed one (what every store's import
// must do is in fact_store_conformance_bulk_test.cc).
//
// Needs a server: MEND_TEST_POSTGRES_URL (scripts/with_postgres). Without it every test is skipped.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/memory/fact_store.h"
#include "mend/memory/lexical.h"
#include "mend/memory/postgres_fact_store.h"
#include "tests/memory/fact_store_conformance.h"
#include "tests/memory/import_comparison.h"
#include "tests/memory/sqlite_fact_store_harness.h"
#include "tests/support/postgres_test_server.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::memory::testing::DescribeAll;
using ::mend::memory::testing::ExpectKeptStatisticsMatchTheActiveFacts;
using ::mend::memory::testing::ExpectSameTagsAndCounts;
using ::mend::memory::testing::ExportInOrder;
using ::mend::memory::testing::kImportQueries;
using ::mend::memory::testing::SqliteFactStoreHarness;
using ::mend::memory::testing::WriteOneAtATime;
using ::mend::testing::FreshPostgresSchema;
using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::kNoPostgresServer;
using ::mend::testing::PostgresTestUrl;
using ::mend::testing::RawPostgresExec;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::SizeIs;

class PostgresFactImportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PostgresTestUrl().empty()) GTEST_SKIP() << kNoPostgresServer;
  }
  void TearDown() override {
    stores_.clear();
    for (const std::string& schema : schemas_) {
      RawPostgresExec("DROP SCHEMA IF EXISTS \"" + schema + "\" CASCADE");
    }
  }

  // A store in a schema of its own (null when it cannot be opened); `pool_size` 1 makes every
  // write reuse one connection.
  FactStore* OpenPostgres(int pool_size = 2) {
    schemas_.push_back(FreshPostgresSchema("mend_import"));
    PostgresFactStoreOptions options;
    options.url = PostgresTestUrl();
    options.schema = schemas_.back();
    options.pool_size = pool_size;
    return Keep(OpenPostgresFactStore(options, clock_));
  }

  FactStore* OpenSqlite() {
    sqlite_ = std::make_unique<SqliteFactStoreHarness>();
    return Keep(sqlite_->Open(clock_));
  }

  FactStore* Keep(Result<std::unique_ptr<FactStore>> store) {
    EXPECT_THAT(store.status(), IsOk());
    if (!store.ok()) return nullptr;
    stores_.push_back(std::move(store).value());
    return stores_.back().get();
  }

  ManualClock clock_;
  std::vector<std::string> schemas_;
  std::unique_ptr<SqliteFactStoreHarness> sqlite_;
  std::vector<std::unique_ptr<FactStore>> stores_;
};

TEST_F(PostgresFactImportTest, AnImportAgreesWithSqlitesImport) {
  FactStore* written = OpenPostgres();
  FactStore* sqlite = OpenSqlite();
  FactStore* postgres = OpenPostgres();
  ASSERT_NE(written, nullptr);
  ASSERT_NE(sqlite, nullptr);
  ASSERT_NE(postgres, nullptr);
  WriteOneAtATime(*written, clock_);
  std::vector<Fact> facts = ExportInOrder(*written);
  Fact repeated = facts[0];  // the same id again in one import: the first one stays
  repeated.content = "a different text under a repeated id";
  facts.push_back(repeated);
  Fact unusable = facts[1];
  unusable.id = " ";
  facts.push_back(unusable);
  // An id already present is skipped, whichever import brought it.
  ASSERT_THAT(sqlite->Import({facts[2]}).status(), IsOk());
  ASSERT_THAT(postgres->Import({facts[2]}).status(), IsOk());

  auto want = sqlite->Import(facts);
  auto got = postgres->Import(facts);

  ASSERT_THAT(want.status(), IsOk());
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(want->imported, 6);
  EXPECT_EQ(want->skipped, 2);
  EXPECT_THAT(want->unusable, SizeIs(1));
  EXPECT_EQ(got->imported, want->imported);
  EXPECT_EQ(got->skipped, want->skipped);
  EXPECT_EQ(got->unusable, want->unusable);
  EXPECT_EQ(DescribeAll(*postgres), DescribeAll(*sqlite));
  ExpectSameTagsAndCounts(*sqlite, *postgres);
  ExpectKeptStatisticsMatchTheActiveFacts(*postgres);
  for (const std::string& q : kImportQueries) {
    auto a = sqlite->SearchLexical(QueryTerms(q), 10, "");
    auto b = postgres->SearchLexical(QueryTerms(q), 10, "");
    ASSERT_THAT(a.status(), IsOk());
    ASSERT_THAT(b.status(), IsOk());
    std::set<std::string> want_ids, got_ids;
    for (const LexicalHit& hit : *a) want_ids.insert(hit.id);
    for (const LexicalHit& hit : *b) got_ids.insert(hit.id);
    EXPECT_EQ(got_ids, want_ids) << q;
  }
}

TEST_F(PostgresFactImportTest, AFailedImportWritesNothingAndTheNextOneWorks) {
  FactStore* opened = OpenPostgres(/*pool_size=*/1);
  ASSERT_NE(opened, nullptr);
  FactStore& store = *opened;
  Fact good;
  good.id = "good";
  good.content = "Restores are tested on the first Monday of every month";
  good.tags = {"backups"};
  Fact refused = good;
  refused.id = "bad \xff id";  // PostgreSQL's text takes no invalid UTF-8
  refused.content = "another fact";

  EXPECT_THAT(store.Import({good, refused}).status(), StatusIs(StatusCode::kInternal));

  EXPECT_THAT(store.Count(), IsOkAndHolds(0));
  EXPECT_THAT(store.MatchTags({"backups"}, "", 10),
              IsOkAndHolds(ElementsAre(::testing::Field(&TagMatch::facts, 0))));
  // The staging table went with the failed transaction, on the same connection.
  auto again = store.Import({good});
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(again->imported, 1);
  EXPECT_THAT(store.Count(), IsOkAndHolds(1));
  ExpectKeptStatisticsMatchTheActiveFacts(store);
}

}  // namespace
}  // namespace mend::memory
