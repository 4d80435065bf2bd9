#include "mend/improve/audit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/base/random.h"
#include "tests/support/status_matchers.h"

namespace mend::improve {
namespace {

using ::mend::testing::StatusIs;

std::vector<ScoreRow> Rows(const std::string& id, bool held_out, const std::string& arm,
                           std::string_view pattern, double cost) {
  std::vector<ScoreRow> rows;
  int i = 0;
  for (char c : pattern)
    rows.push_back({id, held_out, arm, i++, c == 'P', c == 'P' ? 1.0 : 0.0, cost});
  return rows;
}

constexpr char kId[] = "imp-20250102T030405-0a1b2c3d";

// Writes a complete attempt: two cases, baseline and candidate-1, decided by Decide.
void WriteAttempt(FileSystem& fs, const std::string& home) {
  Result<AuditFolder> folder = AuditFolder::Create(fs, home, kId);
  ASSERT_TRUE(folder.ok()) << folder.status().ToString();
  std::vector<Case> cases = {{"fix-1", "Fix it", "ws", {"--x"}, {"py"}},
                             {"sum-2", "Summarise", "", {}, {}}};
  AuditOptions options{3, 2, GateOptions{}};
  MEND_ASSERT_OK(folder->WriteInputs(
      MakeAuditInputs("agents/a", "be careful", {{"tests.md", "run tests"}}, cases, options)));
  MEND_ASSERT_OK(folder->WriteSplit(SplitCases(cases, 0.5, 7)));
  MEND_ASSERT_OK(folder->WriteEditorRequest(1, 1, "request text"));
  MEND_ASSERT_OK(folder->WriteEditorReply(1, 1, "reply text"));
  std::vector<ScoreRow> rows;
  for (auto part :
       {Rows("fix-1", false, "baseline", "FFF", 0.01), Rows("sum-2", true, "baseline", "PPF", 0.01),
        Rows("fix-1", false, "candidate-1", "PPP", 0.01),
        Rows("sum-2", true, "candidate-1", "PPP", 0.01)}) {
    rows.insert(rows.end(), part.begin(), part.end());
  }
  MEND_ASSERT_OK(folder->AppendScores({rows.begin(), rows.begin() + 6}));
  MEND_ASSERT_OK(folder->AppendScores({rows.begin() + 6, rows.end()}));
  Result<std::vector<CaseScores>> scores = CaseScoresFromRows(rows, 1);
  ASSERT_TRUE(scores.ok());
  Result<GateDecision> d = Decide(*scores, GateOptions{});
  ASSERT_TRUE(d.ok());
  MEND_ASSERT_OK(folder->WriteDecision(1, *d));
  MEND_ASSERT_OK(folder->WriteCard("the card\n"));
}

TEST(AuditTest, RoundTripAndRecompute) {
  MemoryFileSystem fs;
  WriteAttempt(fs, "/home");
  Result<AuditRecord> rec = ReadAudit(fs, "/home", kId);
  ASSERT_TRUE(rec.ok()) << rec.status().ToString();
  EXPECT_EQ(rec->inputs.agent_dir, "agents/a");
  EXPECT_EQ(rec->inputs.instructions_sha256.size(), 64u);
  ASSERT_EQ(rec->inputs.skills_sha256.size(), 1u);
  ASSERT_EQ(rec->inputs.cases.size(), 2u);
  EXPECT_EQ(rec->inputs.cases[0].check_args, std::vector<std::string>{"--x"});
  EXPECT_EQ(rec->inputs.options.repeats, 3);
  ASSERT_TRUE(rec->split.has_value());
  EXPECT_EQ(rec->split->seed, 7u);
  EXPECT_EQ(rec->split->training_ids.size() + rec->split->held_out_ids.size(), 2u);
  ASSERT_EQ(rec->editor.size(), 1u);
  EXPECT_EQ(rec->editor[0].request, "request text");
  EXPECT_EQ(rec->editor[0].reply, "reply text");
  EXPECT_EQ(rec->scores.size(), 12u);
  ASSERT_TRUE(rec->decision.has_value());
  EXPECT_EQ(rec->decision->outcome, GateOutcome::kProposal);
  EXPECT_EQ(rec->card, "the card\n");

  Result<GateDecision> again = RecomputeDecision(*rec, rec->inputs.options.gates);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->outcome, rec->decision->outcome);
  EXPECT_EQ(again->reason, rec->decision->reason);
  ASSERT_EQ(again->cases.size(), rec->decision->cases.size());
  for (std::size_t i = 0; i < again->cases.size(); ++i) {
    EXPECT_EQ(again->cases[i].case_id, rec->decision->cases[i].case_id);
    EXPECT_EQ(again->cases[i].verdict, rec->decision->cases[i].verdict);
    EXPECT_EQ(again->cases[i].candidate_passes, rec->decision->cases[i].candidate_passes);
  }
}

TEST(AuditTest, AttemptIds) {
  ManualClock clock(Time{} + std::chrono::seconds(1735787045));  // 2025-01-02T03:04:05Z
  SeededRandom random(1);
  Env env{nullptr, &clock, &random};
  Result<std::string> id = NewAttemptId(env);
  ASSERT_TRUE(id.ok());
  EXPECT_TRUE(IsValidAttemptId(*id));
  EXPECT_EQ(id->substr(0, 20), "imp-20250102T030405-");
  for (const char* bad :
       {"", "../etc", "imp-20250102T030405-0A1B2C3D", "imp-20250102T030405-0a1b2c3",
        "imp-20250102T030405/0a1b2c3d", "imp-2025010xT030405-0a1b2c3d"}) {
    EXPECT_FALSE(IsValidAttemptId(bad)) << bad;
  }
  MemoryFileSystem fs;
  EXPECT_THAT(ReadAudit(fs, "/home", "../../etc").status(), StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(AuditFolder::Create(fs, "/home", "a/b").status(),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(ReadAudit(fs, "/home", kId).status(), StatusIs(StatusCode::kNotFound));
}

TEST(AuditTest, CorruptFilesAreDataLossNamingTheFile) {
  for (const char* file : {"inputs.json", "split.json", "scores.jsonl", "decision.json"}) {
    MemoryFileSystem fs;
    WriteAttempt(fs, "/home");
    const std::string dir = std::string("/home/improve/") + kId;
    MEND_ASSERT_OK(WriteFileAtomically(fs, dir + "/" + file, "{\"truncated"));
    EXPECT_THAT(ReadAudit(fs, "/home", kId).status(),
                StatusIs(StatusCode::kDataLoss, ::testing::HasSubstr(file)));
  }
  MemoryFileSystem fs;
  WriteAttempt(fs, "/home");
  MEND_ASSERT_OK(
      WriteFileAtomically(fs, std::string("/home/improve/") + kId + "/editor/x.txt", ""));
  EXPECT_THAT(ReadAudit(fs, "/home", kId).status(),
              StatusIs(StatusCode::kDataLoss, ::testing::HasSubstr("editor/x.txt")));
}

TEST(AuditTest, RejectsBadRowsAndDuplicates) {
  MemoryFileSystem fs;
  Result<AuditFolder> folder = AuditFolder::Create(fs, "/home", kId);
  ASSERT_TRUE(folder.ok());
  EXPECT_THAT(AuditFolder::Create(fs, "/home", kId).status(), StatusIs(StatusCode::kAlreadyExists));
  EXPECT_THAT(folder->AppendScores(Rows("a", false, "candidate-0", "P", 0)),
              StatusIs(StatusCode::kInvalidArgument));
  EXPECT_THAT(folder->WriteEditorRequest(0, 1, "x"), StatusIs(StatusCode::kInvalidArgument));
  std::vector<ScoreRow> dup = Rows("a", false, "baseline", "PP", 0);
  dup.push_back(dup[0]);
  EXPECT_THAT(CaseScoresFromRows(dup, 1).status(), StatusIs(StatusCode::kInvalidArgument));
}

TEST(AuditTest, PosixModes) {
  std::string home = JoinPath(::testing::TempDir(), "mend_audit_XXXXXX");
  ASSERT_NE(::mkdtemp(home.data()), nullptr);
  WriteAttempt(*PosixFileSystem::Default(), home);
  const std::string dir = home + "/improve/" + kId;
  struct stat st {};
  for (const std::string& d : {dir, dir + "/editor"}) {
    ASSERT_EQ(::stat(d.c_str(), &st), 0) << d;
    EXPECT_EQ(st.st_mode & 0777, 0700u) << d;
  }
  for (const char* f : {"inputs.json", "split.json", "scores.jsonl", "decision.json", "card.txt",
                        "editor/1-1.request.txt", "editor/1-1.reply.txt"}) {
    ASSERT_EQ(::stat((dir + "/" + f).c_str(), &st), 0) << f;
    EXPECT_EQ(st.st_mode & 0777, 0600u) << f;
  }
}

}  // namespace
}  // namespace mend::improve
