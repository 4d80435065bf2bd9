// The PostgreSQL fact store: the conformance suite plus what only a server-backed store has
// (several stores on one database, as replicas on several hosts; schema versions; the extension).
//
// Needs a server: MEND_TEST_POSTGRES_URL names a database the tests may create schemas in
// (scripts/with_postgres starts a throwaway one). Without it every test is skipped. Each store gets
// its own schema, so tests run in parallel.

#include "mend/memory/postgres_fact_store.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "memory/pg_fact_store.h"
#include "mend/base/manual_clock.h"
#include "mend/memory/lexical.h"
#include "tests/memory/fact_store_conformance.h"
#include "tests/memory/import_comparison.h"
#include "tests/support/postgres_test_server.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::memory::testing::FactStoreConformanceTest;
using ::mend::memory::testing::FactStoreHarness;
using ::mend::memory::testing::FactStoreParam;
using ::mend::testing::FreshPostgresSchema;
using ::mend::testing::IsOk;
using ::mend::testing::kNoPostgresServer;
using ::mend::testing::PostgresTestUrl;
using ::mend::testing::RawPostgresExec;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;

PostgresFactStoreOptions OptionsFor(const std::string& schema) {
  PostgresFactStoreOptions options;
  options.url = PostgresTestUrl();
  options.schema = schema;
  options.pool_size = 2;
  return options;
}

// One schema for one test, dropped with the harness.
class PostgresFactStoreHarness : public FactStoreHarness {
 public:
  PostgresFactStoreHarness() : schema_(FreshPostgresSchema("mend_facts")) {}
  ~PostgresFactStoreHarness() override {
    RawPostgresExec("DROP SCHEMA IF EXISTS \"" + schema_ + "\" CASCADE");
  }

  Result<std::unique_ptr<FactStore>> Open(Clock& clock) override {
    return OpenPostgresFactStore(OptionsFor(schema_), clock);
  }
  const std::string& schema() const { return schema_; }

 private:
  std::string schema_;
};

void SkipWithoutServer() { GTEST_SKIP() << kNoPostgresServer; }

std::unique_ptr<FactStoreHarness> MakePostgresHarness() {
  if (PostgresTestUrl().empty()) {
    SkipWithoutServer();  // the fixture then runs nothing more
    return nullptr;
  }
  return std::make_unique<PostgresFactStoreHarness>();
}

}  // namespace

namespace testing {
INSTANTIATE_TEST_SUITE_P(Postgres, FactStoreConformanceTest,
                         ::testing::Values(FactStoreParam{"Postgres", MakePostgresHarness}),
                         FactStoreParamName);
INSTANTIATE_TEST_SUITE_P(Postgres, FactStoreBulkImportTest,
                         ::testing::Values(FactStoreParam{"Postgres", MakePostgresHarness}),
                         FactStoreParamName);
}  // namespace testing

namespace {

class PostgresFactStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (PostgresTestUrl().empty()) GTEST_SKIP() << kNoPostgresServer;
    harness_ = std::make_unique<PostgresFactStoreHarness>();
  }

  std::unique_ptr<FactStore> MustOpen() {
    Result<std::unique_ptr<FactStore>> store = harness_->Open(clock_);
    EXPECT_THAT(store.status(), IsOk());
    return store.ok() ? std::move(store).value() : nullptr;
  }

  ManualClock clock_;
  std::unique_ptr<PostgresFactStoreHarness> harness_;
};

TEST(PgQueryTextTest, QuotesEveryWordAsALexeme) {
  EXPECT_EQ(internal::PgOrQuery({"deploy", "k8s"}), "'deploy' | 'k8s'");
  EXPECT_EQ(internal::PgOrQuery({}), "");
  EXPECT_EQ(internal::PgWordQuery({"pin", "compiler"}, '&'), "'pin' & 'compiler'");
  EXPECT_EQ(internal::PgOrQuery({"", "a'b", "c\\d"}), "'a''b' | 'c\\\\d'");
}

TEST(PgQueryTextTest, SearchTextHoldsTheWordsAsMendCutsThem) {
  EXPECT_EQ(internal::PgSearchText("Run src/memory/retriever.cc: OK", "ci build", "Fix the BUILD"),
            "run src memory retriever cc ok ci build fix the build");
}

TEST_F(PostgresFactStoreTest, TwoReplicasShareFactsAndStatistics) {
  std::unique_ptr<FactStore> a = MustOpen();
  std::unique_ptr<FactStore> b = MustOpen();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  NewFact fact;
  fact.content = "Run the database migrations before the integration tests";
  fact.category = "lesson";
  fact.tags = {"migrations"};
  ASSERT_THAT(a->Add(fact).status(), IsOk());
  // What replica A learned, replica B finds, counts and tags.
  auto hits = b->SearchLexical(QueryTerms("integration tests fail: migrations"), 10, "");
  ASSERT_THAT(hits.status(), IsOk());
  ASSERT_THAT(*hits, SizeIs(1));
  EXPECT_EQ((*hits)[0].id, FactIdFor(fact.content));
  auto count = b->Count();
  ASSERT_THAT(count.status(), IsOk());
  EXPECT_EQ(*count, 1);
  auto tags = b->MatchTags({"migrations"}, "", 100);
  ASSERT_THAT(tags.status(), IsOk());
  ASSERT_THAT(*tags, SizeIs(1));
  EXPECT_THAT((*tags)[0].ids, ElementsAre(FactIdFor(fact.content)));
  // The same lesson written again on B reinforces A's fact instead of adding a second one.
  auto again = b->Add(fact);
  ASSERT_THAT(again.status(), IsOk());
  EXPECT_EQ(again->kind, AddResult::Kind::kReinforced);
  auto generation_a = a->Generation();
  auto generation_b = b->Generation();
  ASSERT_THAT(generation_a.status(), IsOk());
  EXPECT_EQ(*generation_a, *generation_b);
}

TEST_F(PostgresFactStoreTest, ConcurrentWritesOfOneLessonMakeOneFact) {
  std::unique_ptr<FactStore> a = MustOpen();
  std::unique_ptr<FactStore> b = MustOpen();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  constexpr int kWrites = 20;
  std::atomic<int> failures{0};
  auto write = [&](FactStore* store, int salt) {
    for (int i = 0; i < kWrites; ++i) {
      NewFact fact;
      // Half the writes are the same text, half a near duplicate of it (a different id).
      fact.content = (i + salt) % 2 == 0
                         ? "Always pin the compiler version in CI images to avoid surprise breaks"
                         : "Always pin the compiler version in CI images to avoid surprise breaks!";
      fact.category = "lesson";
      if (!store->Add(fact).ok()) failures.fetch_add(1);
    }
  };
  std::thread ta(write, a.get(), 0);
  std::thread tb(write, b.get(), 1);
  ta.join();
  tb.join();
  EXPECT_EQ(failures.load(), 0);
  auto count = a->Count();
  ASSERT_THAT(count.status(), IsOk());
  EXPECT_EQ(*count, 1);
  auto facts = a->List(ListOptions{});
  ASSERT_THAT(facts.status(), IsOk());
  ASSERT_THAT(*facts, SizeIs(1));
  EXPECT_EQ((*facts)[0].access_count, 2 * kWrites - 1);
  testing::ExpectKeptStatisticsMatchTheActiveFacts(*b);
}

TEST_F(PostgresFactStoreTest, GoesOnAfterTheServerClosedItsConnections) {
  // This store's connections carry a name of their own, so closing them spares other tests'.
  const std::string app = "mend_reconnect_" + harness_->schema();
  PostgresFactStoreOptions options = OptionsFor(harness_->schema());
  options.url += (options.url.find('?') == std::string::npos ? "?" : "&") +
                 std::string("application_name=") + app;
  Result<std::unique_ptr<FactStore>> opened = OpenPostgresFactStore(options, clock_);
  ASSERT_THAT(opened.status(), IsOk());
  std::unique_ptr<FactStore> store = std::move(opened).value();
  NewFact fact;
  fact.content = "The nightly backup job writes to the cold storage bucket";
  ASSERT_THAT(store->Add(fact).status(), IsOk());
  // What a server restart does to the pool's idle connections.
  const std::string kill_others =
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = '" + app +
      "'";
  RawPostgresExec(kill_others);
  auto got = store->Get(FactIdFor(fact.content));
  ASSERT_THAT(got.status(), IsOk());
  EXPECT_EQ(got->content, fact.content);
  RawPostgresExec(kill_others);
  NewFact other;
  other.content = "Restores are tested on the first Monday of every month";
  EXPECT_THAT(store->Add(other).status(), IsOk());
  auto count = store->Count();
  ASSERT_THAT(count.status(), IsOk());
  EXPECT_EQ(*count, 2);
}

TEST_F(PostgresFactStoreTest, RefusesMemoryWrittenByANewerMend) {
  { ASSERT_NE(MustOpen(), nullptr); }
  RawPostgresExec("UPDATE \"" + harness_->schema() +
                  "\".meta SET value = '99' WHERE key = 'memory.schema_version'");
  Result<std::unique_ptr<FactStore>> store = harness_->Open(clock_);
  EXPECT_THAT(store.status(), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("newer mend")));
  EXPECT_THAT(std::string(store.status().message()), HasSubstr("upgrade mend"));
}

TEST_F(PostgresFactStoreTest, AVersionOneDatabaseGainsInjectionScoresAndKeepsItsInjections) {
  std::string id;
  {
    std::unique_ptr<FactStore> store = MustOpen();
    ASSERT_NE(store, nullptr);
    auto added = store->Add({"alpha fact"});
    ASSERT_THAT(added.status(), IsOk());
    id = added->id;
    ASSERT_THAT(store->RecordInjection("run-1", {{id, 0.5}}), IsOk());
  }
  // What version 1 had: injections without a score and no index by fact.
  const std::string schema = "\"" + harness_->schema() + "\".";
  RawPostgresExec("DROP INDEX " + schema + "fact_injections_fact");
  RawPostgresExec("ALTER TABLE " + schema + "fact_injections DROP COLUMN score");
  RawPostgresExec("UPDATE " + schema + "meta SET value = '1' WHERE key = 'memory.schema_version'");
  std::unique_ptr<FactStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  auto old = store->InjectionsOfRun("run-1");
  ASSERT_THAT(old.status(), IsOk());
  ASSERT_EQ(old->size(), 1u);
  EXPECT_EQ((*old)[0].fact_id, id);
  EXPECT_EQ((*old)[0].score, std::nullopt);
  ASSERT_THAT(store->RecordInjection("run-2", {{id, 0.25}}), IsOk());
  auto given = store->InjectionsOfFact(id, 10);
  ASSERT_THAT(given.status(), IsOk());
  ASSERT_EQ(given->size(), 2u);
  EXPECT_EQ((*given)[0].run_id, "run-2");
  EXPECT_EQ((*given)[0].score, 0.25);
}

TEST_F(PostgresFactStoreTest, UnreadableSchemaVersionIsDataLoss) {
  { ASSERT_NE(MustOpen(), nullptr); }
  RawPostgresExec("UPDATE \"" + harness_->schema() +
                  "\".meta SET value = 'x' WHERE key = 'memory.schema_version'");
  EXPECT_THAT(harness_->Open(clock_).status(), StatusIs(StatusCode::kDataLoss));
}

TEST_F(PostgresFactStoreTest, SharesItsSchemaWithTheRunsStore) {
  // The runs store keeps its version in the same meta table; memory adds its own keys beside it.
  RawPostgresExec("CREATE SCHEMA \"" + harness_->schema() + "\"");
  RawPostgresExec("CREATE TABLE \"" + harness_->schema() +
                  "\".meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  RawPostgresExec("INSERT INTO \"" + harness_->schema() +
                  "\".meta (key, value) VALUES ('store.schema_version', '4')");
  std::unique_ptr<FactStore> store = MustOpen();
  ASSERT_NE(store, nullptr);
  NewFact fact;
  fact.content = "Caches expire after one hour";
  EXPECT_THAT(store->Add(fact).status(), IsOk());
}

TEST(PostgresFactStoreOpenTest, UnreachableServerIsUnavailableWithoutThePassword) {
  ManualClock clock;
  PostgresFactStoreOptions options;
  options.url = "postgres://mend:hunter2@127.0.0.1:1/mend?connect_timeout=2";
  Result<std::unique_ptr<FactStore>> store = OpenPostgresFactStore(options, clock);
  EXPECT_THAT(store.status(), StatusIs(StatusCode::kUnavailable));
  EXPECT_THAT(std::string(store.status().message()), ::testing::Not(HasSubstr("hunter2")));
}

TEST(PostgresFactStoreOpenTest, InvalidOptionsAreRefused) {
  ManualClock clock;
  PostgresFactStoreOptions options;
  EXPECT_THAT(OpenPostgresFactStore(options, clock).status(),
              StatusIs(StatusCode::kInvalidArgument));
  options.url = "postgres://127.0.0.1:1/x";
  options.pool_size = 0;
  EXPECT_THAT(OpenPostgresFactStore(options, clock).status(),
              StatusIs(StatusCode::kInvalidArgument));
}

}  // namespace
}  // namespace mend::memory
