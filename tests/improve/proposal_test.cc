#include "mend/improve/proposal.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/improve/audit.h"
#include "tests/support/status_matchers.h"

namespace mend::improve {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kId[] = "imp-20250102T030405-0a1b2c3d";
constexpr char kOtherId[] = "imp-20250103T000000-00000000";

class ProposalTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MEND_ASSERT_OK(fs_.CreateDirs("/agent/skills"));
    MEND_ASSERT_OK(WriteFileAtomically(fs_, "/agent/agent.toml", "name = \"a\"\n"));
    MEND_ASSERT_OK(WriteFileAtomically(fs_, "/agent/instructions.md", "old\n"));
    MEND_ASSERT_OK(WriteFileAtomically(fs_, "/agent/skills/a.md", "skill a\n"));
    base_.instructions = "old\n";
    base_.skills["skills/a.md"] = "skill a\n";
    after_ = base_;
    after_.instructions = "new\n";
    after_.skills["skills/b.md"] = "skill b\n";
    ASSERT_TRUE(AuditFolder::Create(fs_, "/home", kId).ok());
  }

  Proposal Queue() {
    Proposal p = MakeProposal(kId, "/agent", base_, after_, clock_.Now());
    EXPECT_TRUE(WriteProposal(fs_, "/home", p).ok());
    return p;
  }

  MemoryFileSystem fs_;
  ManualClock clock_;
  AgentText base_;
  AgentText after_;
};

TEST_F(ProposalTest, MakeProposalHoldsOnlyTheChangedFilesWithTheirBaseHashes) {
  Proposal p = MakeProposal(kId, "/agent", base_, after_, clock_.Now());
  ASSERT_EQ(p.files.size(), 2u);
  EXPECT_EQ(p.files.at("instructions.md"), "new\n");
  EXPECT_EQ(p.files.at("skills/b.md"), "skill b\n");
  EXPECT_EQ(p.base_sha256.at("skills/b.md"), "");  // did not exist
  EXPECT_EQ(p.base_sha256.at("instructions.md").size(), 64u);
  EXPECT_EQ(p.status, ProposalStatus::kQueued);
}

TEST_F(ProposalTest, WriteThenReadRoundTrips) {
  Proposal p = Queue();
  Result<Proposal> read = ReadProposal(fs_, "/home", kId);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, p);
}

TEST_F(ProposalTest, ApplyWritesTheFilesAndKeepsABackup) {
  Queue();
  Result<Proposal> applied = ApplyProposal(fs_, clock_, "/home", kId);
  ASSERT_TRUE(applied.ok()) << applied.status().ToString();
  EXPECT_EQ(applied->status, ProposalStatus::kApplied);
  EXPECT_FALSE(applied->decided_at.empty());
  EXPECT_EQ(*ReadFileToString(fs_, "/agent/instructions.md"), "new\n");
  EXPECT_EQ(*ReadFileToString(fs_, "/agent/skills/b.md"), "skill b\n");
  EXPECT_EQ(*ReadFileToString(fs_, "/agent/skills/a.md"), "skill a\n");
  EXPECT_EQ(*ReadFileToString(fs_, "/agent/agent.toml"), "name = \"a\"\n");
  EXPECT_EQ(*ReadFileToString(fs_, "/home/improve/" + std::string(kId) + "/backup/instructions.md"),
            "old\n");
  EXPECT_EQ(ReadProposal(fs_, "/home", kId)->status, ProposalStatus::kApplied);
  // Once applied, it cannot be applied or rejected again.
  EXPECT_THAT(ApplyProposal(fs_, clock_, "/home", kId).status(),
              StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(RejectProposal(fs_, clock_, "/home", kId, "no").status(),
              StatusIs(StatusCode::kFailedPrecondition));
}

TEST_F(ProposalTest, AHandEditSinceTheAttemptStartedRefusesTheApplyAndWritesNothing) {
  Queue();
  MEND_ASSERT_OK(WriteFileAtomically(fs_, "/agent/instructions.md", "edited by hand\n"));
  Result<Proposal> applied = ApplyProposal(fs_, clock_, "/home", kId);
  EXPECT_THAT(applied.status(), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(applied.status().message(), HasSubstr("instructions.md changed"));
  EXPECT_EQ(*ReadFileToString(fs_, "/agent/instructions.md"), "edited by hand\n");
  EXPECT_THAT(ReadFileToString(fs_, "/agent/skills/b.md").status(),
              StatusIs(StatusCode::kNotFound));
  EXPECT_EQ(ReadProposal(fs_, "/home", kId)->status, ProposalStatus::kQueued);
}

TEST_F(ProposalTest, ANewSkillThatAppearedMeanwhileAlsoRefuses) {
  Queue();
  MEND_ASSERT_OK(WriteFileAtomically(fs_, "/agent/skills/b.md", "someone else's b\n"));
  EXPECT_THAT(ApplyProposal(fs_, clock_, "/home", kId).status(),
              StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_EQ(*ReadFileToString(fs_, "/agent/instructions.md"), "old\n");
}

TEST_F(ProposalTest, RejectRecordsTheReason) {
  Queue();
  Result<Proposal> rejected = RejectProposal(fs_, clock_, "/home", kId, "too long");
  ASSERT_TRUE(rejected.ok());
  EXPECT_EQ(rejected->status, ProposalStatus::kRejected);
  EXPECT_EQ(ReadProposal(fs_, "/home", kId)->note, "too long");
  EXPECT_EQ(*ReadFileToString(fs_, "/agent/instructions.md"), "old\n");
}

TEST_F(ProposalTest, AHandEditedProposalCannotReachAProtectedFile) {
  Queue();
  const std::string path = "/home/improve/" + std::string(kId) + "/proposal.json";
  std::string text = *ReadFileToString(fs_, path);
  const std::string from = "\"skills/b.md\"";
  text.replace(text.find(from), from.size(), "\"agent.toml\"");
  MEND_ASSERT_OK(WriteFileAtomically(fs_, path, text));
  EXPECT_THAT(ReadProposal(fs_, "/home", kId).status(), StatusIs(StatusCode::kDataLoss));
  EXPECT_THAT(ApplyProposal(fs_, clock_, "/home", kId).status(), StatusIs(StatusCode::kDataLoss));
  EXPECT_EQ(*ReadFileToString(fs_, "/agent/agent.toml"), "name = \"a\"\n");
}

TEST_F(ProposalTest, MissingAndInvalidIds) {
  EXPECT_THAT(ReadProposal(fs_, "/home", kId).status(), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(ReadProposal(fs_, "/home", kOtherId).status(), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(ReadProposal(fs_, "/home", "../../etc").status(),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ApplyProposal(fs_, clock_, "/home", "imp-x").status(),
              StatusIs(StatusCode::kInvalidArgument));
  MEND_ASSERT_OK(WriteFileAtomically(fs_, "/home/improve/" + std::string(kId) + "/proposal.json",
                                     "{not json"));
  EXPECT_THAT(ReadProposal(fs_, "/home", kId).status(), StatusIs(StatusCode::kDataLoss));
}

TEST_F(ProposalTest, ListAttemptsIsNewestFirstAndSaysWhatBecameOfEachProposal) {
  Queue();
  ASSERT_TRUE(AuditFolder::Create(fs_, "/home", kOtherId).ok());
  MEND_ASSERT_OK(fs_.CreateDirs("/home/improve/not-an-attempt"));
  Result<std::vector<AttemptSummary>> list = ListAttempts(fs_, "/home");
  ASSERT_TRUE(list.ok()) << list.status().ToString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].attempt_id, kOtherId);
  EXPECT_EQ((*list)[0].outcome, "unreadable");  // no inputs.json
  EXPECT_EQ((*list)[1].attempt_id, kId);
  EXPECT_EQ((*list)[1].proposal, ProposalStatus::kQueued);
  EXPECT_TRUE(ListAttempts(fs_, "/nowhere")->empty());
}

}  // namespace
}  // namespace mend::improve
