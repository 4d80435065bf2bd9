// The PostgreSQL attempt store: the conformance suite, plus what only a shared store has (hosts
// that see each other's attempts and decide each proposal once; schema versions; damaged rows).
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

#include "mend/app/improve_view.h"
#include "tests/improve/attempt_store_conformance.h"
#include "tests/support/postgres_test_server.h"

namespace mend::improve::testing {
namespace {

using ::mend::testing::FreshPostgresSchema;
using ::mend::testing::kNoPostgresServer;
using ::mend::testing::PostgresTestUrl;
using ::mend::testing::RawPostgresExec;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

class PostgresHarness : public AttemptStoreHarness {
 public:
  PostgresHarness() : schema_(FreshPostgresSchema("mend_improve")) {}
  ~PostgresHarness() override {
    RawPostgresExec("DROP SCHEMA IF EXISTS \"" + schema_ + "\" CASCADE");
  }

  Result<std::unique_ptr<AttemptStore>> Open(FileSystem& fs, const std::string& home,
                                             const std::string& host) override {
    PostgresAttemptStoreOptions options;
    options.url = PostgresTestUrl();
    options.schema = schema_;
    options.host = host;
    options.home = home;
    return OpenPostgresAttemptStore(options, fs);
  }
  const std::string& schema() const { return schema_; }

 private:
  std::string schema_;
};

std::unique_ptr<AttemptStoreHarness> MakePostgresHarness() {
  if (PostgresTestUrl().empty()) return nullptr;
  return std::make_unique<PostgresHarness>();
}

// Two hosts on one database: the shared behaviour.
class PostgresAttemptStoreTest : public AttemptStoreConformanceTest {
 protected:
  void SetUp() override {
    AttemptStoreConformanceTest::SetUp();
    if (IsSkipped()) return;
    pg_ = static_cast<PostgresHarness*>(harness_.get());
  }
  PostgresHarness* pg_ = nullptr;
};

TEST_P(PostgresAttemptStoreTest, AnAttemptOfOneHostIsListedShownAndDecidedOnAnother) {
  auto a = NewHost("host-a");
  auto b = NewHost("host-b");
  Propose(*a, kId);

  Result<std::vector<AttemptSummary>> list = b->store->List();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].attempt_id, kId);
  EXPECT_EQ((*list)[0].host, "host-a");
  EXPECT_EQ((*list)[0].outcome, "proposal");
  EXPECT_EQ((*list)[0].proposal, ProposalStatus::kQueued);

  Result<AttemptStore::Location> where = b->store->Locate(kId);
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  EXPECT_FALSE(where->here);
  EXPECT_EQ(where->host, "host-a");
  EXPECT_EQ(where->audit_dir, "/home/improve/" + std::string(kId));
  EXPECT_TRUE(a->store->Locate(kId)->here);

  // `show` on B: no audit folder there, the row stands in; the diff is against B's agent folder.
  Result<app::AttemptDetail> detail = app::ReadAttemptDetail(b->fs, *b->store, kHome, kId);
  ASSERT_TRUE(detail.ok()) << detail.status().ToString();
  EXPECT_FALSE(detail->location.here);
  EXPECT_EQ(detail->summary.outcome, "proposal");
  EXPECT_EQ(detail->record.inputs.agent_dir, "/agent");
  ASSERT_TRUE(detail->proposal.has_value());
  EXPECT_THAT(detail->diff, HasSubstr("+new"));

  // Applied on B: B's agent folder changes, B keeps the backup, A sees the decision.
  Result<Proposal> applied = ApplyProposal(b->fs, clock_, *b->store, kHome, kId);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(*ReadFileToString(b->fs, "/agent/instructions.md"), "new\n");
  EXPECT_EQ(
      *ReadFileToString(b->fs, "/home/improve/" + std::string(kId) + "/backup/instructions.md"),
      "old\n");
  EXPECT_EQ(*ReadFileToString(a->fs, "/agent/instructions.md"), "old\n");
  EXPECT_EQ(a->store->GetProposal(kId)->status, ProposalStatus::kApplied);
  EXPECT_EQ(a->store->List()->at(0).proposal, ProposalStatus::kApplied);
  EXPECT_THAT(RejectProposal(clock_, *a->store, kId, "late").status(),
              StatusIs(StatusCode::kFailedPrecondition));
  // B's backup folder does not make B the attempt's home.
  EXPECT_FALSE(b->store->Locate(kId)->here);
}

TEST_P(PostgresAttemptStoreTest, HostsRacingToDecideOneProposalDecideItOnce) {
  std::vector<std::unique_ptr<Host>> hosts;
  for (int i = 0; i < 3; ++i) hosts.push_back(NewHost("host-" + std::to_string(i)));
  Propose(*hosts[0], kId);
  std::atomic<int> decided{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 9; ++i) {
    Host& host = *hosts[static_cast<size_t>(i % 3)];
    threads.emplace_back([&, i] {
      Result<Proposal> r = i % 2 == 0 ? ApplyProposal(host.fs, clock_, *host.store, kHome, kId)
                                      : RejectProposal(clock_, *host.store, kId, "no");
      if (r.ok()) {
        ++decided;
      } else if (r.status().code() == StatusCode::kFailedPrecondition) {
        ++refused;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(decided.load(), 1);
  EXPECT_EQ(refused.load(), 8);
  int changed = 0;
  for (auto& host : hosts) {
    if (*ReadFileToString(host->fs, "/agent/instructions.md") == "new\n") ++changed;
  }
  EXPECT_LE(changed, 1);  // only the host that applied it, if it was applied
}

// How many sessions wait for a row lock on improve_attempts, read as an operator would.
int RowLockWaiters() {
  PGconn* conn = PQconnectdb(PostgresTestUrl().c_str());
  PGresult* res = PQexec(conn,
                         "SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' "
                         "AND query LIKE '%improve_attempts%FOR UPDATE%'");
  const int n = PQresultStatus(res) == PGRES_TUPLES_OK ? std::atoi(PQgetvalue(res, 0, 0)) : -1;
  PQclear(res);
  PQfinish(conn);
  return n;
}

TEST_P(PostgresAttemptStoreTest, ASecondDeciderWaitsForTheFirstAndFindsItDecided) {
  auto a = NewHost("host-a");
  auto b = NewHost("host-b");
  Propose(*a, kId);
  std::atomic<bool> inside{false};
  std::atomic<bool> second_done{false};
  bool second_waited = false;
  Status second;
  std::thread rejecter;
  Result<Proposal> first = a->store->Decide(kId, [&](Proposal& p) -> Status {
    // While A holds the proposal, B tries to reject it: B must wait for A, not decide too.
    inside = true;
    rejecter = std::thread([&] {
      second = RejectProposal(clock_, *b->store, kId, "no").status();
      second_done = true;
    });
    for (;;) {
      if (second_done) break;
      if (RowLockWaiters() > 0) {
        second_waited = true;
        break;
      }
    }
    p.status = ProposalStatus::kApplied;
    return OkStatus();
  });
  if (rejecter.joinable()) rejecter.join();
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(inside);
  EXPECT_TRUE(second_waited) << "the second decider did not wait for the first";
  EXPECT_THAT(second, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(second.message(), HasSubstr("already applied"));
  EXPECT_EQ(b->store->GetProposal(kId)->status, ProposalStatus::kApplied);
}

TEST_P(PostgresAttemptStoreTest, AnotherHostCannotTakeOverAnAttemptId) {
  auto a = NewHost("host-a");
  auto b = NewHost("host-b");
  Propose(*a, kId);
  // The same id on B (ids carry 32 random bits; this is a collision or a copied folder).
  WriteAttempt(*b, kId, GateOutcome::kNoImprovement);
  Status taken = b->store->RecordAttempt(kId);
  EXPECT_THAT(taken, StatusIs(StatusCode::kAlreadyExists));
  EXPECT_THAT(taken.message(), HasSubstr("another host"));
  EXPECT_EQ(a->store->Summary(kId)->outcome, "proposal");
}

TEST_P(PostgresAttemptStoreTest, ADamagedStoredProposalIsDataLossNamingTheAttempt) {
  auto a = NewHost("host-a");
  Propose(*a, kId);
  RawPostgresExec("UPDATE \"" + pg_->schema() +
                  "\".improve_attempts SET proposal = '{not json' WHERE attempt_id = '" + kId +
                  "'");
  Status read = a->store->GetProposal(kId).status();
  EXPECT_THAT(read, StatusIs(StatusCode::kDataLoss));
  EXPECT_THAT(read.message(), HasSubstr(kId));
  EXPECT_THAT(ApplyProposal(a->fs, clock_, *a->store, kHome, kId).status(),
              StatusIs(StatusCode::kDataLoss));
  EXPECT_EQ(*ReadFileToString(a->fs, "/agent/instructions.md"), "old\n");
}

TEST_P(PostgresAttemptStoreTest, SchemaVersionsAreKeptAndANewerOneIsRefused) {
  const std::string url = PostgresTestUrl();
  EXPECT_EQ(*ReadPostgresAttemptStoreSchemaVersion(url, pg_->schema()), 0);
  { auto a = NewHost("host-a"); }
  EXPECT_EQ(*ReadPostgresAttemptStoreSchemaVersion(url, pg_->schema()),
            PostgresAttemptStoreSchemaVersion());
  { auto again = NewHost("host-a"); }  // opening again changes nothing
  RawPostgresExec("UPDATE \"" + pg_->schema() +
                  "\".meta SET value = '99' WHERE key = 'improve.schema_version'");
  MemoryFileSystem fs;
  Status newer = harness_->Open(fs, kHome, "host-a").status();
  EXPECT_THAT(newer, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(newer.message(), HasSubstr("newer mend"));
  RawPostgresExec("UPDATE \"" + pg_->schema() +
                  "\".meta SET value = 'x' WHERE key = 'improve.schema_version'");
  EXPECT_THAT(harness_->Open(fs, kHome, "host-a").status(), StatusIs(StatusCode::kDataLoss));
}

TEST(PostgresAttemptStoreOpenTest, AnUnreachableServerIsUnavailableWithoutThePassword) {
  MemoryFileSystem fs;
  PostgresAttemptStoreOptions options;
  options.url = "postgres://mend:s3cret@127.0.0.1:1/mend";
  options.connect_timeout = std::chrono::seconds(2);
  Status s = OpenPostgresAttemptStore(options, fs).status();
  EXPECT_THAT(s, StatusIs(StatusCode::kUnavailable));
  EXPECT_THAT(std::string(s.message()), ::testing::Not(HasSubstr("s3cret")));
}

const std::vector<AttemptStoreParam>& Params() {
  static const std::vector<AttemptStoreParam> params = {{"Postgres", MakePostgresHarness}};
  return params;
}

}  // namespace

INSTANTIATE_TEST_SUITE_P(Postgres, AttemptStoreConformanceTest, ::testing::ValuesIn(Params()),
                         AttemptStoreParamName);
INSTANTIATE_TEST_SUITE_P(Postgres, PostgresAttemptStoreTest, ::testing::ValuesIn(Params()),
                         AttemptStoreParamName);

}  // namespace mend::improve::testing
