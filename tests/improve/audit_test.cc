#include "mend/improve/audit.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/base/fault_injection_file_system.h"
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

// A full disk (docs/reliability.md, "A full disk"): a write into the audit folder fails with
// kResourceExhausted and leaves what was written before; once there is space the attempt is
// written whole and reads back.
TEST(AuditTest, AWriteOnAFullDiskFailsClearlyAndTheAttemptIsWrittenOnceThereIsSpace) {
  MemoryFileSystem memory;
  FaultInjectionFileSystem fs(&memory);
  Result<AuditFolder> folder = AuditFolder::Create(fs, "/home", kId);
  ASSERT_TRUE(folder.ok()) << folder.status();
  fs.FailAlways(FsOp::kWrite, ENOSPC);
  fs.FailAlways(FsOp::kCreateDirs, ENOSPC);
  EXPECT_THAT(folder->WriteCard("the card\n"), StatusIs(StatusCode::kResourceExhausted));
  EXPECT_THAT(AuditFolder::Create(fs, "/home", "imp-20250102T030405-0a1b2c3e").status(),
              StatusIs(StatusCode::kResourceExhausted));
  fs.ClearFaults();
  WriteAttempt(fs, "/other-home");
  Result<AuditRecord> record = ReadAudit(fs, "/other-home", kId);
  ASSERT_TRUE(record.ok()) << record.status();
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

constexpr char kTwoCasesId[] = "imp-20250102T030405-0000abcd";

// An attempt whose candidate is better on two training cases, a and b (FFF -> PPP each).
AuditRecord TwoBetterCases(FileSystem& fs) {
  Result<AuditFolder> folder = AuditFolder::Create(fs, "/home", kTwoCasesId);
  EXPECT_TRUE(folder.ok()) << folder.status();
  std::vector<Case> cases = {{"a", "A", "", {}, {}}, {"b", "B", "", {}, {}}};
  EXPECT_TRUE(folder->WriteInputs(MakeAuditInputs("/agents/x", "", {}, cases, {3, 1, {}})).ok());
  std::vector<ScoreRow> rows;
  for (auto part :
       {Rows("a", false, "baseline", "FFF", 0.01), Rows("b", false, "baseline", "FFF", 0.01),
        Rows("a", false, "candidate-1", "PPP", 0.01),
        Rows("b", false, "candidate-1", "PPP", 0.01)}) {
    rows.insert(rows.end(), part.begin(), part.end());
  }
  EXPECT_TRUE(folder->AppendScores(rows).ok());
  Result<GateDecision> d = Decide(*CaseScoresFromRows(rows, 1), GateOptions{});
  EXPECT_TRUE(d.ok());
  EXPECT_TRUE(folder->WriteDecision(1, *d).ok());
  Result<AuditRecord> record = ReadAudit(fs, "/home", kTwoCasesId);
  EXPECT_TRUE(record.ok()) << record.status();
  return record.ok() ? *record : AuditRecord{};
}

void SetCandidatePass(AuditRecord& record, const std::string& case_id, int repeat, bool pass) {
  for (ScoreRow& row : record.scores) {
    if (row.case_id == case_id && row.arm == "candidate-1" && row.repeat == repeat) row.pass = pass;
  }
}

TEST(AuditCheckTest, AVerdictTheScoresNoLongerGiveIsNamed) {
  MemoryFileSystem fs;
  AuditRecord record = TwoBetterCases(fs);
  Result<AuditCheck> check = CheckRecordedDecision(record);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_TRUE(check->matches);
  EXPECT_EQ(check->mismatch, "");

  // b: 0/3 -> 1/3 is no longer better, yet a still is, so outcome and gate stay the same.
  SetCandidatePass(record, "b", 0, false);
  SetCandidatePass(record, "b", 1, false);
  check = CheckRecordedDecision(record);
  ASSERT_TRUE(check.ok()) << check.status();
  EXPECT_FALSE(check->matches);
  EXPECT_EQ(check->mismatch, "cases[1].verdict: recorded better, recomputed same (case b)");
  Result<GateDecision> again = RecomputeDecision(record, record.inputs.options.gates);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->outcome, record.decision->outcome);  // what the old check compared
}

TEST(AuditCheckTest, EveryRecordedFieldIsCompared) {
  MemoryFileSystem fs;
  const AuditRecord original = TwoBetterCases(fs);
  struct Edit {
    std::function<void(AuditRecord&)> apply;
    std::string mismatch;
  };
  const std::vector<Edit> edits = {
      {[](AuditRecord& r) { r.decision->outcome = GateOutcome::kNoImprovement; },
       "outcome: recorded no_improvement, recomputed proposal"},
      {[](AuditRecord& r) { r.decision->refused_by = Gate::kCost; },
       "gate: recorded cost, recomputed null"},
      {[](AuditRecord& r) { r.decision->cases.pop_back(); },
       "cases: recorded 1 cases, recomputed 2 cases"},
      {[](AuditRecord& r) { r.decision->cases[0].case_id = "z"; },
       "cases[0].case_id: recorded z, recomputed a"},
      {[](AuditRecord& r) { r.decision->cases[1].held_out = true; },
       "cases[1].held_out: recorded true, recomputed false"},
      {[](AuditRecord& r) { r.decision->cases[0].baseline_passes = 1; },
       "cases[0].baseline_passes: recorded 1, recomputed 0 (case a)"},
      {[](AuditRecord& r) { r.decision->cases[1].candidate_passes = 2; },
       "cases[1].candidate_passes: recorded 2, recomputed 3 (case b)"},
      {[](AuditRecord& r) { r.decision->gains[1] = 2; },
       "cases[1].gain: recorded 2, recomputed 3 (case b)"},
      {[](AuditRecord& r) { r.scores[0].cost_usd = 0.02; },
       "baseline_cost.total_usd: recorded 0.060000000000000005, recomputed 0.07"},
      {[](AuditRecord& r) { r.decision->costs->candidate.passes = 5; },
       "candidate_cost.passes: recorded 5, recomputed 6"},
      {[](AuditRecord& r) { r.decision->costs->candidate.per_success_usd = 0.02; },
       "candidate_cost.per_success_usd: recorded 0.02, recomputed 0.01"},
      {[](AuditRecord& r) { r.decision->costs->max_cost_increase = 1; },
       "max_cost_increase: recorded 1.0, recomputed 0.5"},
      {[](AuditRecord& r) { r.decision->costs->cost_limit_usd = 0.5; },
       "cost_limit_usd: recorded 0.5, recomputed null"},
      {[](AuditRecord& r) { r.decision->reason = "trust me"; },
       "reason: recorded \"trust me\", recomputed \"2 training cases are better and none is "
       "worse\""},
  };
  for (const Edit& edit : edits) {
    AuditRecord record = original;
    edit.apply(record);
    Result<AuditCheck> check = CheckRecordedDecision(record);
    ASSERT_TRUE(check.ok()) << check.status();
    EXPECT_FALSE(check->matches) << edit.mismatch;
    EXPECT_THAT(check->mismatch, ::testing::StartsWith(edit.mismatch));
  }
}

TEST(AuditCheckTest, ScoresThatDoNotDecideAreAMismatchAndNoDecisionIsAnError) {
  MemoryFileSystem fs;
  AuditRecord record = TwoBetterCases(fs);
  record.scores.resize(3);  // a's baseline only
  Result<AuditCheck> check = CheckRecordedDecision(record);
  ASSERT_TRUE(check.ok());
  EXPECT_FALSE(check->matches);
  EXPECT_THAT(check->mismatch, ::testing::StartsWith("the recorded scores do not decide: "));
  record.decision.reset();
  EXPECT_THAT(CheckRecordedDecision(record), StatusIs(StatusCode::kFailedPrecondition));
}

TEST(AuditCheckTest, AFolderWrittenBeforeCostsAndGainsWereRecordedStillChecks) {
  MemoryFileSystem fs;
  TwoBetterCases(fs);
  const std::string path = std::string("/home/improve/") + kTwoCasesId + "/decision.json";
  nlohmann::json old = nlohmann::json::parse(*ReadFileToString(fs, path));
  for (const char* key :
       {"baseline_cost", "candidate_cost", "max_cost_increase", "cost_limit_usd"}) {
    old.erase(key);
  }
  for (nlohmann::json& c : old["cases"]) c.erase("gain");
  MEND_ASSERT_OK(WriteFileAtomically(fs, path, old.dump(2)));
  Result<AuditRecord> record = ReadAudit(fs, "/home", kTwoCasesId);
  ASSERT_TRUE(record.ok()) << record.status();
  EXPECT_FALSE(record->decision->costs.has_value());
  EXPECT_TRUE(record->decision->gains.empty());
  Result<AuditCheck> check = CheckRecordedDecision(*record);
  ASSERT_TRUE(check.ok());
  EXPECT_TRUE(check->matches) << check->mismatch;
  // What it does record is still compared.
  record->decision->cases[0].verdict = CaseVerdict::kSame;
  EXPECT_EQ(CheckRecordedDecision(*record)->mismatch,
            "cases[0].verdict: recorded same, recomputed better (case a)");
  // Some cases with a gain and some without is a damaged file.
  old["cases"][0]["gain"] = 3;
  MEND_ASSERT_OK(WriteFileAtomically(fs, path, old.dump(2)));
  EXPECT_THAT(ReadAudit(fs, "/home", kTwoCasesId),
              StatusIs(StatusCode::kDataLoss, ::testing::HasSubstr("decision.json")));
}

TEST(AuditTest, AnAttemptThatStoppedRecordsItsError) {
  MemoryFileSystem fs;
  Result<AuditFolder> folder = AuditFolder::Create(fs, "/home", kId);
  ASSERT_TRUE(folder.ok());
  MEND_ASSERT_OK(folder->WriteInputs(MakeAuditInputs("/agents/x", "", {}, {}, {3, 1, {}})));
  MEND_ASSERT_OK(folder->WriteError(InternalError("disk on fire")));
  Result<AuditRecord> record = ReadAudit(fs, "/home", kId);
  ASSERT_TRUE(record.ok()) << record.status();
  ASSERT_TRUE(record->error.has_value());
  EXPECT_EQ(*record->error, (RecordedError{"INTERNAL", "disk on fire"}));
  MEND_ASSERT_OK(WriteFileAtomically(fs, std::string("/home/improve/") + kId + "/error.json", "{"));
  EXPECT_THAT(ReadAudit(fs, "/home", kId),
              StatusIs(StatusCode::kDataLoss, ::testing::HasSubstr("error.json")));
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
