// The PostgreSQL canary store: the conformance suite, plus what only a shared store has (deciders
// and recorders on several hosts waiting for each other, schema versions, damaged rows).
//
// Needs a server: MEND_TEST_POSTGRES_URL names a database the tests may create schemas in
// (scripts/with_postgres starts a throwaway one). Without it every test is skipped. Each harness
// gets its own schema, so tests run in parallel.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <libpq-fe.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "mend/db/schema_read.h"
#include "tests/improve/canary_store_conformance.h"
#include "tests/support/postgres_test_server.h"

namespace mend::improve::testing {
namespace {

using ::mend::testing::FreshPostgresSchema;
using ::mend::testing::PostgresTestUrl;
using ::mend::testing::RawPostgresExec;

class PostgresHarness : public CanaryStoreHarness {
 public:
  PostgresHarness() : schema_(FreshPostgresSchema("mend_canary")) {}
  ~PostgresHarness() override {
    RawPostgresExec("DROP SCHEMA IF EXISTS \"" + schema_ + "\" CASCADE");
  }

  Result<std::unique_ptr<CanaryStore>> Open(Clock& clock) override {
    PostgresCanaryStoreOptions options;
    options.url = PostgresTestUrl();
    options.schema = schema_;
    return OpenPostgresCanaryStore(options, clock);
  }
  const std::string& schema() const { return schema_; }

 private:
  std::string schema_;
};

std::unique_ptr<CanaryStoreHarness> MakePostgresHarness() {
  if (PostgresTestUrl().empty()) return nullptr;
  return std::make_unique<PostgresHarness>();
}

class PostgresCanaryStoreTest : public CanaryStoreConformanceTest {
 protected:
  void SetUp() override {
    CanaryStoreConformanceTest::SetUp();
    if (IsSkipped()) return;
    pg_ = static_cast<PostgresHarness*>(harness_.get());
  }
  std::string Table(const std::string& name) const { return "\"" + pg_->schema() + "\"." + name; }
  PostgresHarness* pg_ = nullptr;
};

// How many sessions wait for a row lock on canaries, read as an operator would.
int CanaryLockWaiters() {
  PGconn* conn = PQconnectdb(PostgresTestUrl().c_str());
  PGresult* res = PQexec(conn,
                         "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                         "AND query LIKE '%FROM canaries%FOR %'");
  const int n = PQresultStatus(res) == PGRES_TUPLES_OK ? std::atoi(PQgetvalue(res, 0, 0)) : -1;
  PQclear(res);
  PQfinish(conn);
  return n;
}

TEST_P(PostgresCanaryStoreTest, HostsRacingToDecideOneCanaryRunOneDecider) {
  std::vector<std::unique_ptr<CanaryStore>> hosts;
  for (int i = 0; i < 3; ++i) hosts.push_back(OpenStore());
  MEND_ASSERT_OK(hosts[0]->Start(MakeCanary(kProposal, kAgent)));
  std::atomic<int> deciders{0};
  std::atomic<int> committed{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 9; ++i) {
    CanaryStore& host = *hosts[static_cast<size_t>(i % 3)];
    threads.emplace_back([&] {
      Result<Canary> r = host.Decide(kProposal, [&](Canary& c, const auto& outcomes) {
        ++deciders;
        return Promote(c, outcomes);
      });
      if (r.ok()) {
        ++committed;
      } else if (r.status().code() == StatusCode::kFailedPrecondition) {
        ++refused;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(deciders.load(), 1);
  EXPECT_EQ(committed.load(), 1);
  EXPECT_EQ(refused.load(), 8);
}

TEST_P(PostgresCanaryStoreTest, AnOutcomeWaitsForTheDeciderAndIsThenRefused) {
  std::unique_ptr<CanaryStore> other = OpenStore();
  ASSERT_NE(other, nullptr);
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  std::atomic<bool> recorded{false};
  bool waited = false;
  Status late;
  std::thread recorder;
  Result<Canary> decided = store_->Decide(kProposal, [&](Canary& c, const auto& outcomes) {
    // While this host holds the canary, another records an outcome: it must wait, not count.
    recorder = std::thread([&] {
      late = other->RecordOutcome(
          MakeOutcome(kProposal, "run-1", kProposal, store::RunStatus::kCompleted));
      recorded = true;
    });
    for (;;) {
      if (recorded) break;
      if (CanaryLockWaiters() > 0) {
        waited = true;
        break;
      }
    }
    return Promote(c, outcomes);
  });
  if (recorder.joinable()) recorder.join();
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  EXPECT_TRUE(waited) << "the outcome did not wait for the decision";
  EXPECT_THAT(late, StatusIs(StatusCode::kFailedPrecondition, HasSubstr("already promoted")));
  EXPECT_TRUE(store_->Outcomes(kProposal)->empty());
}

TEST_P(PostgresCanaryStoreTest, ADamagedRowIsDataLossNamingTheCanary) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  MEND_ASSERT_OK(store_->RecordOutcome(
      MakeOutcome(kProposal, "run-1", kBaselineArm, store::RunStatus::kCompleted)));
  RawPostgresExec("UPDATE " + Table("canary_runs") + " SET status = 'exploded'");
  EXPECT_THAT(store_->Outcomes(kProposal).status(),
              StatusIs(StatusCode::kDataLoss, HasSubstr("run-1")));
  EXPECT_THAT(store_->Decide(kProposal, Promote).status(), StatusIs(StatusCode::kDataLoss));
  EXPECT_EQ(store_->Get(kProposal)->state, CanaryState::kRunning);
  // A state no mend writes (the CHECK dropped by hand) is not taken for one.
  RawPostgresExec("ALTER TABLE " + Table("canaries") + " DROP CONSTRAINT canaries_state_check");
  RawPostgresExec("UPDATE " + Table("canaries") + " SET state = 'paused'");
  Status s = store_->Get(kProposal).status();
  EXPECT_THAT(s, StatusIs(StatusCode::kDataLoss, HasSubstr(kProposal)));
  EXPECT_THAT(s.message(), HasSubstr("unknown canary state \"paused\""));
  EXPECT_THAT(store_->List().status(), StatusIs(StatusCode::kDataLoss));
}

TEST_P(PostgresCanaryStoreTest, SchemaVersionsAreKeptAndANewerOneIsRefused) {
  const std::string url = PostgresTestUrl();
  auto version = [&] {
    return db::ReadPostgresMetaVersion(url, pg_->schema(), std::chrono::seconds(5),
                                       "canary.schema_version");
  };
  EXPECT_THAT(version(), ::mend::testing::IsOkAndHolds(1));
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  ASSERT_NE(OpenStore(), nullptr);  // opening again changes nothing
  EXPECT_THAT(version(), ::mend::testing::IsOkAndHolds(1));
  EXPECT_EQ(store_->List()->size(), 1u);

  RawPostgresExec("UPDATE " + Table("meta") +
                  " SET value = '99' WHERE key = 'canary.schema_version'");
  Status newer = harness_->Open(clock_).status();
  EXPECT_THAT(newer, StatusIs(StatusCode::kFailedPrecondition, HasSubstr("newer mend")));
  RawPostgresExec("UPDATE " + Table("meta") +
                  " SET value = 'x' WHERE key = 'canary.schema_version'");
  EXPECT_THAT(harness_->Open(clock_).status(), StatusIs(StatusCode::kDataLoss));
}

TEST(PostgresCanaryStoreOpenTest, AnUnreachableServerIsUnavailableWithoutThePassword) {
  ManualClock clock;
  PostgresCanaryStoreOptions options;
  options.url = "postgres://mend:s3cret@127.0.0.1:1/mend";
  options.connect_timeout = std::chrono::seconds(2);
  Status s = OpenPostgresCanaryStore(options, clock).status();
  EXPECT_THAT(s, StatusIs(StatusCode::kUnavailable));
  EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("s3cret")));
  options.url = "";
  EXPECT_THAT(OpenPostgresCanaryStore(options, clock).status(),
              StatusIs(StatusCode::kInvalidArgument));
}

const std::vector<CanaryStoreParam>& Params() {
  static const std::vector<CanaryStoreParam> params = {{"Postgres", MakePostgresHarness}};
  return params;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Postgres, CanaryStoreConformanceTest, ::testing::ValuesIn(Params()),
                         CanaryStoreParamName);
INSTANTIATE_TEST_SUITE_P(Postgres, PostgresCanaryStoreTest, ::testing::ValuesIn(Params()),
                         CanaryStoreParamName);

}  // namespace mend::improve::testing
