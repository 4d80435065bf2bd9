// What every attempt store does: see attempt_store_conformance.h.
#include "tests/improve/attempt_store_conformance.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/status_matchers.h"

namespace mend::improve::testing {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

TEST_P(AttemptStoreConformanceTest, UnknownAndInvalidIds) {
  auto host = NewHost("a");
  Result<std::vector<AttemptSummary>> list = host->store->List();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  EXPECT_TRUE(list->empty());
  EXPECT_THAT(host->store->GetProposal(kId).status(), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(host->store->Locate(kId).status(), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(host->store->Summary(kId).status(), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(host->store->RecordAttempt(kId), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(ApplyProposal(host->fs, clock_, *host->store, kHome, kId).status(),
              StatusIs(StatusCode::kNotFound));
  for (const char* bad : {"../../etc", "imp-x", ""}) {
    EXPECT_THAT(host->store->GetProposal(bad).status(), StatusIs(StatusCode::kInvalidArgument));
    EXPECT_THAT(host->store->Locate(bad).status(), StatusIs(StatusCode::kInvalidArgument));
    EXPECT_THAT(RejectProposal(clock_, *host->store, bad, "no").status(),
                StatusIs(StatusCode::kInvalidArgument));
  }
  // A proposal needs its attempt's audit folder in this home.
  EXPECT_THAT(host->store->PutProposal(MakeProposal(kId, "/agent", base_, after_, clock_.Now())),
              StatusIs(StatusCode::kNotFound));
}

TEST_P(AttemptStoreConformanceTest, AProposalIsStoredListedAndLocated) {
  auto host = NewHost("a");
  Proposal p = Propose(*host, kId);
  WriteAttempt(*host, kLaterId, GateOutcome::kNoImprovement);
  MEND_ASSERT_OK(host->store->RecordAttempt(kLaterId));

  Result<Proposal> read = host->store->GetProposal(kId);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, p);
  EXPECT_THAT(host->store->GetProposal(kLaterId).status(), StatusIs(StatusCode::kNotFound));

  Result<std::vector<AttemptSummary>> list = host->store->List();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].attempt_id, kLaterId);  // newest first
  EXPECT_EQ((*list)[0].outcome, "no_improvement");
  EXPECT_FALSE((*list)[0].proposal.has_value());
  EXPECT_EQ((*list)[1].attempt_id, kId);
  EXPECT_EQ((*list)[1].outcome, "proposal");
  EXPECT_EQ((*list)[1].agent_dir, "/agent");
  EXPECT_EQ((*list)[1].proposal, ProposalStatus::kQueued);

  Result<AttemptStore::Location> where = host->store->Locate(kId);
  ASSERT_TRUE(where.ok()) << where.status().ToString();
  EXPECT_TRUE(where->here);
  EXPECT_EQ(where->audit_dir, "/home/improve/" + std::string(kId));
  // The audit folder keeps its own copy of the proposal.
  EXPECT_TRUE(ReadProposal(host->fs, kHome, kId).ok());
}

TEST_P(AttemptStoreConformanceTest, AnUnrecordedAttemptOfThisHomeIsListedAndCanBeDecided) {
  // An attempt still running, or from before the home's store was what it is now.
  auto host = NewHost("a");
  WriteAttempt(*host, kId, GateOutcome::kProposal);
  MEND_ASSERT_OK(
      WriteProposal(host->fs, kHome, MakeProposal(kId, "/agent", base_, after_, clock_.Now())));
  Result<std::vector<AttemptSummary>> list = host->store->List();
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].proposal, ProposalStatus::kQueued);
  EXPECT_TRUE(host->store->GetProposal(kId).ok());
  Result<Proposal> rejected = RejectProposal(clock_, *host->store, kId, "not now");
  ASSERT_TRUE(rejected.ok()) << rejected.status().ToString();
  EXPECT_EQ(host->store->GetProposal(kId)->status, ProposalStatus::kRejected);
  EXPECT_EQ(host->store->List()->at(0).proposal, ProposalStatus::kRejected);
}

TEST_P(AttemptStoreConformanceTest, ApplyWritesTheFilesOnceAndKeepsABackup) {
  auto host = NewHost("a");
  Propose(*host, kId);
  Result<Proposal> applied = ApplyProposal(host->fs, clock_, *host->store, kHome, kId);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(applied->status, ProposalStatus::kApplied);
  EXPECT_FALSE(applied->decided_at.empty());
  EXPECT_EQ(*ReadFileToString(host->fs, "/agent/instructions.md"), "new\n");
  EXPECT_EQ(
      *ReadFileToString(host->fs, "/home/improve/" + std::string(kId) + "/backup/instructions.md"),
      "old\n");
  EXPECT_EQ(host->store->GetProposal(kId)->status, ProposalStatus::kApplied);
  EXPECT_EQ(ReadProposal(host->fs, kHome, kId)->status, ProposalStatus::kApplied);
  Status again = ApplyProposal(host->fs, clock_, *host->store, kHome, kId).status();
  EXPECT_THAT(again, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(again.message(), HasSubstr("already applied"));
  EXPECT_THAT(RejectProposal(clock_, *host->store, kId, "no").status(),
              StatusIs(StatusCode::kFailedPrecondition));
}

TEST_P(AttemptStoreConformanceTest, AFailedDecisionLeavesTheProposalQueued) {
  auto host = NewHost("a");
  Propose(*host, kId);
  MEND_ASSERT_OK(WriteFileAtomically(host->fs, "/agent/instructions.md", "edited by hand\n"));
  Status refused = ApplyProposal(host->fs, clock_, *host->store, kHome, kId).status();
  EXPECT_THAT(refused, StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(refused.message(), HasSubstr("changed since the improve attempt started"));
  EXPECT_EQ(host->store->GetProposal(kId)->status, ProposalStatus::kQueued);
  // Auto mode's note replaces the queued proposal's.
  Proposal noted = *host->store->GetProposal(kId);
  noted.note = "auto mode did not apply it";
  MEND_ASSERT_OK(host->store->PutProposal(noted));
  EXPECT_EQ(host->store->GetProposal(kId)->note, "auto mode did not apply it");
  MEND_ASSERT_OK(WriteFileAtomically(host->fs, "/agent/instructions.md", "old\n"));
  EXPECT_TRUE(ApplyProposal(host->fs, clock_, *host->store, kHome, kId).ok());
}

TEST_P(AttemptStoreConformanceTest, ConcurrentDecisionsDecideOnce) {
  auto host = NewHost("a");
  Propose(*host, kId);
  std::atomic<int> applied{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < 8; ++i) {
    threads.emplace_back([&, i] {
      Result<Proposal> r = i % 2 == 0 ? ApplyProposal(host->fs, clock_, *host->store, kHome, kId)
                                      : RejectProposal(clock_, *host->store, kId, "no");
      if (r.ok()) {
        ++applied;
      } else if (r.status().code() == StatusCode::kFailedPrecondition) {
        ++refused;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(applied.load(), 1);
  EXPECT_EQ(refused.load(), 7);
}

}  // namespace
}  // namespace mend::improve::testing
