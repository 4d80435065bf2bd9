#pragma once

// The CanaryStore conformance suite: what every canary store does (improve/canary_store.h). The
// tests are defined here, so exactly one file of a test binary includes this header; it
// instantiates CanaryStoreConformanceTest with a harness that opens its store. mend_improve_test
// runs it on SQLite, mend_improve_postgres_test on PostgreSQL.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/base/result.h"
#include "mend/base/time_format.h"
#include "mend/improve/canary.h"
#include "mend/improve/canary_store.h"
#include "tests/support/status_matchers.h"

namespace mend::improve::testing {

// Opens stores of one kind. Stores opened by one harness share what processes or hosts share (the
// database file, the PostgreSQL database).
class CanaryStoreHarness {
 public:
  virtual ~CanaryStoreHarness() = default;
  virtual Result<std::unique_ptr<CanaryStore>> Open(Clock& clock) = 0;
};

struct CanaryStoreParam {
  std::string name;
  // Returns null when the store cannot be tested here (the test is skipped).
  std::function<std::unique_ptr<CanaryStoreHarness>()> make;
};

inline void PrintTo(const CanaryStoreParam& param, std::ostream* os) { *os << param.name; }

inline std::string CanaryStoreParamName(const ::testing::TestParamInfo<CanaryStoreParam>& info) {
  return info.param.name;
}

inline constexpr char kProposal[] = "imp-20250102T030405-0a1b2c3d";
inline constexpr char kLaterProposal[] = "imp-20250103T000000-00000000";
inline constexpr char kAgent[] = "/agents/support";
inline constexpr char kOtherAgent[] = "/agents/billing";

class CanaryStoreConformanceTest : public ::testing::TestWithParam<CanaryStoreParam> {
 protected:
  void SetUp() override {
    harness_ = GetParam().make();
    if (harness_ == nullptr) GTEST_SKIP() << "this store cannot be tested here";
    store_ = OpenStore();
  }

  // Another store on the same database, as another process or host opens it.
  std::unique_ptr<CanaryStore> OpenStore() {
    Result<std::unique_ptr<CanaryStore>> store = harness_->Open(clock_);
    EXPECT_TRUE(store.ok()) << store.status().ToString();
    return store.ok() ? *std::move(store) : nullptr;
  }

  static Canary MakeCanary(const std::string& proposal_id, const std::string& agent_dir) {
    Canary c;
    c.proposal_id = proposal_id;
    c.agent_dir = agent_dir;
    c.percent = 12.5;
    c.auto_decide = true;
    c.rule.min_runs = 3;
    c.rule.max_runs = 40;
    c.rule.confidence = 0.9;
    c.rule.max_cost_increase = 0.25;
    return c;
  }

  static CanaryRunOutcome MakeOutcome(const std::string& proposal_id, const std::string& run_id,
                                      std::string_view arm, store::RunStatus status) {
    CanaryRunOutcome o;
    o.proposal_id = proposal_id;
    o.run_id = run_id;
    o.arm = std::string(arm);
    o.run.status = status;
    o.run.cost_usd = 0.125;
    o.run.steps = 4;
    o.run.input_tokens = 1000;
    o.run.output_tokens = 200;
    return o;
  }

  // A decider that promotes.
  static Status Promote(Canary& c, const std::vector<CanaryRunOutcome>& /*outcomes*/) {
    c.state = CanaryState::kPromoted;
    c.verdict = "promote";
    c.reason = "the proposal fails less";
    return OkStatus();
  }

  std::unique_ptr<CanaryStoreHarness> harness_;
  ManualClock clock_;
  std::unique_ptr<CanaryStore> store_;
};

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

TEST_P(CanaryStoreConformanceTest, StartedCanariesAreReadBackAndListedNewestFirst) {
  const Time first = clock_.Now();
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  clock_.Advance(std::chrono::milliseconds(1500));
  MEND_ASSERT_OK(store_->Start(MakeCanary(kLaterProposal, kOtherAgent)));

  Canary expected = MakeCanary(kProposal, kAgent);
  expected.state = CanaryState::kRunning;
  expected.started_at = FormatRfc3339(first);
  EXPECT_THAT(store_->Get(kProposal), ::mend::testing::IsOkAndHolds(expected));

  Result<std::vector<Canary>> list = store_->List();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].proposal_id, kLaterProposal);
  EXPECT_EQ((*list)[0].started_at, FormatRfc3339(first + std::chrono::milliseconds(1500)));
  EXPECT_EQ((*list)[1], expected);

  Result<std::optional<Canary>> running = store_->Running(kAgent);
  ASSERT_TRUE(running.ok()) << running.status().ToString();
  EXPECT_EQ(*running, expected);
  EXPECT_THAT(store_->Running("/agents/none"), ::mend::testing::IsOkAndHolds(std::nullopt));
  EXPECT_THAT(store_->Get("imp-unknown"),
              StatusIs(StatusCode::kNotFound, HasSubstr("no canary for proposal imp-unknown")));
}

TEST_P(CanaryStoreConformanceTest, StartIgnoresTheDecisionFieldsItIsGiven) {
  Canary given = MakeCanary(kProposal, kAgent);
  given.state = CanaryState::kPromoted;
  given.started_at = "2001-01-01T00:00:00Z";
  given.verdict = "promote";
  given.decided_at = "2001-01-01T00:00:00Z";
  given.reason = "no";
  MEND_ASSERT_OK(store_->Start(given));
  Result<Canary> read = store_->Get(kProposal);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->state, CanaryState::kRunning);
  EXPECT_EQ(read->started_at, FormatRfc3339(clock_.Now()));
  EXPECT_EQ(read->verdict, "");
  EXPECT_EQ(read->decided_at, "");
  EXPECT_EQ(read->reason, "");
}

TEST_P(CanaryStoreConformanceTest, AnAgentHasOneRunningCanaryNamedInTheRefusal) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  EXPECT_THAT(store_->Start(MakeCanary(kLaterProposal, kAgent)),
              StatusIs(StatusCode::kAlreadyExists, HasSubstr(kProposal)));
  // The same proposal cannot be canaried twice, on any folder.
  EXPECT_THAT(store_->Start(MakeCanary(kProposal, kOtherAgent)),
              StatusIs(StatusCode::kAlreadyExists));
  EXPECT_EQ(store_->List()->size(), 1u);
  EXPECT_EQ(store_->Running(kAgent)->value().proposal_id, kProposal);
}

TEST_P(CanaryStoreConformanceTest, ASecondCanaryStartsOnceTheFirstIsDecided) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  Result<Canary> decided = store_->Decide(kProposal, [](Canary& c, const auto&) {
    c.state = CanaryState::kRolledBack;
    c.verdict = "roll_back";
    return OkStatus();
  });
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  EXPECT_THAT(store_->Running(kAgent), ::mend::testing::IsOkAndHolds(std::nullopt));
  MEND_ASSERT_OK(store_->Start(MakeCanary(kLaterProposal, kAgent)));
  EXPECT_EQ(store_->Running(kAgent)->value().proposal_id, kLaterProposal);
  // A decided proposal is not canaried again.
  EXPECT_THAT(store_->Start(MakeCanary(kProposal, kOtherAgent)),
              StatusIs(StatusCode::kAlreadyExists, HasSubstr("before")));
}

TEST_P(CanaryStoreConformanceTest, InvalidCanariesAreRefusedAndNotStored) {
  std::vector<Canary> bad;
  for (double percent : {0.0, -1.0, 100.5, 101.0, std::numeric_limits<double>::quiet_NaN()}) {
    bad.push_back(MakeCanary(kProposal, kAgent));
    bad.back().percent = percent;
  }
  bad.push_back(MakeCanary("", kAgent));
  bad.push_back(MakeCanary(kProposal, ""));
  bad.push_back(MakeCanary(kProposal, kAgent));
  bad.back().rule.confidence = 1.5;
  bad.push_back(MakeCanary(kProposal, kAgent));
  bad.back().rule.max_runs = 1;  // below min_runs
  for (const Canary& c : bad) {
    EXPECT_THAT(store_->Start(c), StatusIs(StatusCode::kInvalidArgument))
        << "percent " << c.percent << ", id \"" << c.proposal_id << "\"";
  }
  EXPECT_TRUE(store_->List()->empty());
  Canary whole = MakeCanary(kProposal, kAgent);
  whole.percent = 100;
  MEND_EXPECT_OK(store_->Start(whole));
}

TEST_P(CanaryStoreConformanceTest, ARecordedOutcomeIsReplacedByItsRunsNextOne) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  MEND_ASSERT_OK(store_->RecordOutcome(
      MakeOutcome(kProposal, "run-1", kBaselineArm, store::RunStatus::kFailed)));
  clock_.Advance(std::chrono::seconds(3));
  CanaryRunOutcome again =
      MakeOutcome(kProposal, "run-1", kBaselineArm, store::RunStatus::kCompleted);
  again.run.error_code = "MEND_TOOL";
  again.run.checks_passed = false;
  again.run.cost_usd = 0.375;
  again.run.steps = 9;
  again.run.input_tokens = 12345;
  again.run.output_tokens = 678;
  MEND_ASSERT_OK(store_->RecordOutcome(again));

  Result<std::vector<CanaryRunOutcome>> outcomes = store_->Outcomes(kProposal);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status().ToString();
  ASSERT_EQ(outcomes->size(), 1u);
  again.recorded_at = FormatRfc3339(clock_.Now());
  EXPECT_EQ((*outcomes)[0], again);
}

TEST_P(CanaryStoreConformanceTest, OutcomesComeInRunIdOrderPerCanary) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  MEND_ASSERT_OK(store_->Start(MakeCanary(kLaterProposal, kOtherAgent)));
  for (const char* run : {"run-c", "run-a", "run-B", "run-b"}) {
    MEND_ASSERT_OK(store_->RecordOutcome(
        MakeOutcome(kProposal, run, kProposal, store::RunStatus::kCompleted)));
  }
  MEND_ASSERT_OK(store_->RecordOutcome(
      MakeOutcome(kLaterProposal, "run-z", kBaselineArm, store::RunStatus::kCompleted)));
  Result<std::vector<CanaryRunOutcome>> outcomes = store_->Outcomes(kProposal);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status().ToString();
  std::vector<std::string> ids;
  for (const CanaryRunOutcome& o : *outcomes) ids.push_back(o.run_id);
  // Byte order, whatever the database's collation.
  EXPECT_THAT(ids, ::testing::ElementsAre("run-B", "run-a", "run-b", "run-c"));
  EXPECT_EQ(store_->Outcomes(kLaterProposal)->size(), 1u);
  EXPECT_THAT(store_->Outcomes("imp-unknown").status(), StatusIs(StatusCode::kNotFound));
}

TEST_P(CanaryStoreConformanceTest, AnOutcomeNeedsAKnownCanaryARunIdAndAnArmOfIt) {
  EXPECT_THAT(store_->RecordOutcome(
                  MakeOutcome(kProposal, "run-1", kBaselineArm, store::RunStatus::kCompleted)),
              StatusIs(StatusCode::kNotFound));
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  for (const char* arm : {"", "proposal", kLaterProposal, "Baseline"}) {
    EXPECT_THAT(
        store_->RecordOutcome(MakeOutcome(kProposal, "run-1", arm, store::RunStatus::kCompleted)),
        StatusIs(StatusCode::kInvalidArgument))
        << "arm \"" << arm << "\"";
  }
  EXPECT_THAT(
      store_->RecordOutcome(MakeOutcome(kProposal, "", kBaselineArm, store::RunStatus::kCompleted)),
      StatusIs(StatusCode::kInvalidArgument));
  EXPECT_TRUE(store_->Outcomes(kProposal)->empty());
  MEND_EXPECT_OK(store_->RecordOutcome(
      MakeOutcome(kProposal, "run-1", kProposal, store::RunStatus::kCompleted)));
  MEND_EXPECT_OK(store_->RecordOutcome(
      MakeOutcome(kProposal, "run-2", kBaselineArm, store::RunStatus::kCompleted)));
}

TEST_P(CanaryStoreConformanceTest, ADecidedCanaryRecordsNoMoreOutcomes) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  MEND_ASSERT_OK(store_->RecordOutcome(
      MakeOutcome(kProposal, "run-1", kBaselineArm, store::RunStatus::kRunning)));
  ASSERT_TRUE(store_->Decide(kProposal, Promote).ok());
  EXPECT_THAT(store_->RecordOutcome(
                  MakeOutcome(kProposal, "run-1", kBaselineArm, store::RunStatus::kCompleted)),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("already promoted")));
  EXPECT_THAT(store_->RecordOutcome(
                  MakeOutcome(kProposal, "run-2", kProposal, store::RunStatus::kCompleted)),
              StatusIs(StatusCode::kFailedPrecondition));
  Result<std::vector<CanaryRunOutcome>> outcomes = store_->Outcomes(kProposal);
  ASSERT_TRUE(outcomes.ok()) << outcomes.status().ToString();
  ASSERT_EQ(outcomes->size(), 1u);
  EXPECT_EQ((*outcomes)[0].run.status, store::RunStatus::kRunning);
}

TEST_P(CanaryStoreConformanceTest, ACanaryIsDecidedOnceWithItsOutcomes) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  MEND_ASSERT_OK(store_->RecordOutcome(
      MakeOutcome(kProposal, "run-2", kProposal, store::RunStatus::kCompleted)));
  MEND_ASSERT_OK(store_->RecordOutcome(
      MakeOutcome(kProposal, "run-1", kBaselineArm, store::RunStatus::kFailed)));
  clock_.Advance(std::chrono::minutes(5));
  std::vector<std::string> seen;
  Result<Canary> decided =
      store_->Decide(kProposal, [&](Canary& c, const std::vector<CanaryRunOutcome>& outcomes) {
        EXPECT_EQ(c.state, CanaryState::kRunning);
        for (const CanaryRunOutcome& o : outcomes) seen.push_back(o.run_id);
        c.percent = 99;  // not a decision's to change: not stored
        return Promote(c, outcomes);
      });
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  EXPECT_THAT(seen, ::testing::ElementsAre("run-1", "run-2"));
  EXPECT_EQ(decided->state, CanaryState::kPromoted);
  EXPECT_EQ(decided->verdict, "promote");
  EXPECT_EQ(decided->reason, "the proposal fails less");
  EXPECT_EQ(decided->decided_at, FormatRfc3339(clock_.Now()));
  EXPECT_EQ(decided->percent, 12.5);
  EXPECT_THAT(store_->Get(kProposal), ::mend::testing::IsOkAndHolds(*decided));

  bool called = false;
  Result<Canary> again = store_->Decide(kProposal, [&](Canary& c, const auto&) {
    called = true;
    c.state = CanaryState::kRolledBack;
    return OkStatus();
  });
  EXPECT_THAT(again.status(),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("already promoted")));
  EXPECT_FALSE(called);
  EXPECT_THAT(store_->Get(kProposal), ::mend::testing::IsOkAndHolds(*decided));
  EXPECT_THAT(store_->Decide("imp-unknown", Promote).status(), StatusIs(StatusCode::kNotFound));
}

TEST_P(CanaryStoreConformanceTest, AFailedDecisionLeavesTheCanaryRunningAndUnchanged) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  const Canary before = *store_->Get(kProposal);
  Result<Canary> kept = store_->Decide(kProposal, [](Canary& c, const auto&) {
    c.state = CanaryState::kPromoted;
    c.verdict = "promote";
    return FailedPreconditionError("the rule says continue");
  });
  EXPECT_THAT(kept.status(), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("continue")));
  EXPECT_THAT(store_->Get(kProposal), ::mend::testing::IsOkAndHolds(before));
  // A decider that returns OK must decide.
  Result<Canary> undecided = store_->Decide(kProposal, [](Canary& c, const auto&) {
    c.verdict = "promote";
    return OkStatus();
  });
  EXPECT_THAT(undecided.status(), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(store_->Get(kProposal), ::mend::testing::IsOkAndHolds(before));
  // Still running: outcomes are recorded, and it can be decided.
  MEND_EXPECT_OK(store_->RecordOutcome(
      MakeOutcome(kProposal, "run-1", kBaselineArm, store::RunStatus::kCompleted)));
  EXPECT_TRUE(store_->Decide(kProposal, Promote).ok());
}

TEST_P(CanaryStoreConformanceTest, TheDecidersOutcomesSumPerArm) {
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  CanaryRunOutcome stopped = MakeOutcome(kProposal, "run-1", kProposal, store::RunStatus::kFailed);
  stopped.run.error_code = "MEND_RUN_NO_PROGRESS";
  CanaryRunOutcome unchecked =
      MakeOutcome(kProposal, "run-4", kProposal, store::RunStatus::kCompleted);
  unchecked.run.checks_passed = false;
  for (const CanaryRunOutcome& o :
       {stopped, MakeOutcome(kProposal, "run-2", kBaselineArm, store::RunStatus::kCompleted),
        MakeOutcome(kProposal, "run-3", kBaselineArm, store::RunStatus::kRunning), unchecked,
        MakeOutcome(kProposal, "run-5", kProposal, store::RunStatus::kCompleted)}) {
    MEND_ASSERT_OK(store_->RecordOutcome(o));
  }
  ArmOutcomes baseline;
  ArmOutcomes proposal;
  Result<Canary> decided =
      store_->Decide(kProposal, [&](Canary& c, const std::vector<CanaryRunOutcome>& outcomes) {
        SumOutcomes(outcomes, baseline, proposal);
        return Promote(c, outcomes);
      });
  ASSERT_TRUE(decided.ok()) << decided.status().ToString();
  EXPECT_EQ(baseline.runs, 1);  // the running one does not count yet
  EXPECT_EQ(baseline.successes, 1);
  EXPECT_EQ(baseline.steps, 4);
  EXPECT_EQ(proposal.runs, 3);
  EXPECT_EQ(proposal.successes, 1);
  EXPECT_EQ(proposal.completed, 2);
  EXPECT_EQ(proposal.checks_failed, 1);
  EXPECT_EQ(proposal.no_progress, 1);
  EXPECT_EQ(proposal.failed, 0);
  EXPECT_DOUBLE_EQ(proposal.cost_usd, 0.375);
  EXPECT_EQ(proposal.input_tokens, 3000);
  EXPECT_EQ(proposal.output_tokens, 600);
}

TEST_P(CanaryStoreConformanceTest, StoresOnOneDatabaseShareCanariesAndDecideThemOnce) {
  std::unique_ptr<CanaryStore> other = OpenStore();
  ASSERT_NE(other, nullptr);
  MEND_ASSERT_OK(store_->Start(MakeCanary(kProposal, kAgent)));
  EXPECT_EQ(other->Running(kAgent)->value().proposal_id, kProposal);
  EXPECT_THAT(other->Start(MakeCanary(kLaterProposal, kAgent)),
              StatusIs(StatusCode::kAlreadyExists, HasSubstr(kProposal)));
  MEND_ASSERT_OK(other->RecordOutcome(
      MakeOutcome(kProposal, "run-1", kBaselineArm, store::RunStatus::kCompleted)));
  EXPECT_EQ(store_->Outcomes(kProposal)->size(), 1u);

  // Deciders on both stores at once: one decides, the others find it decided.
  std::atomic<int> committed{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 6; ++i) {
    CanaryStore& store = i % 2 == 0 ? *store_ : *other;
    threads.emplace_back([&] {
      Result<Canary> r = store.Decide(kProposal, Promote);
      if (r.ok()) {
        ++committed;
      } else if (r.status().code() == StatusCode::kFailedPrecondition) {
        ++refused;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(committed.load(), 1);
  EXPECT_EQ(refused.load(), 5);
  EXPECT_EQ(store_->Get(kProposal)->state, CanaryState::kPromoted);
}

}  // namespace mend::improve::testing
