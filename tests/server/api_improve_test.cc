// /api/v1/improve: recorded attempts listed and shown, proposals applied to or rejected for a
// real agent folder. Attempts are written the way an improve attempt writes them (audit folder,
// scores, decision, card, proposal), so no model is needed.
#include <gmock/gmock.h>

#include <set>
#include <string>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/improve/audit.h"
#include "mend/improve/gates.h"
#include "mend/improve/proposal.h"
#include "mend/improve/proposal_diff.h"
#include "tests/server/server_fixture.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kId[] = "imp-20261202T101500-3fa2c1d0";
constexpr char kOlderId[] = "imp-20261201T090000-00000001";
constexpr char kUnknownId[] = "imp-20990101T000000-00000000";
constexpr char kOldInstructions[] = "Answer briefly.\n";
constexpr char kNewInstructions[] = "Answer briefly.\nRun the tests first.\n";
constexpr char kNewSkill[] = "Run `make test` before answering.\n";
constexpr char kCard[] = "improve: proposal\n  1 training case is better and none is worse\n";
constexpr char kSecret[] = "sk-test-never-shown-9393";

std::set<std::string> Keys(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items()) keys.insert(key);
  return keys;
}

std::vector<improve::ScoreRow> Rows(const std::string& id, bool held_out, const std::string& arm,
                                    std::string_view pattern) {
  std::vector<improve::ScoreRow> rows;
  int repeat = 0;
  for (char c : pattern) {
    rows.push_back({id, held_out, arm, repeat++, c == 'P', c == 'P' ? 1.0 : 0.0, 0.01});
  }
  return rows;
}

class ImproveApiTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    WriteAgent("fixer");
    agent_dir_ = agents_dir_ + "/fixer";
  }

  // Records a finished attempt on the agent: candidate-1 passes the training case it failed
  // (`improved`: a proposal) or passes exactly as often (no improvement, no proposal).
  void WriteAttempt(const std::string& id, bool improved) {
    FileSystem& fs = *env_.fs;
    auto folder = improve::AuditFolder::Create(fs, home_, id);
    MEND_ASSERT_OK(folder);
    std::vector<improve::Case> cases = {{"fix-1", "Fix the bug", "", {}, {}},
                                        {"sum-2", "Summarise the README", "", {}, {}}};
    improve::AuditOptions options{3, 2, improve::GateOptions{}};
    MEND_ASSERT_OK(folder->WriteInputs(
        improve::MakeAuditInputs(agent_dir_, kOldInstructions, {}, cases, options)));
    std::vector<improve::ScoreRow> rows;
    for (auto part :
         {Rows("fix-1", false, "baseline", "FFF"), Rows("sum-2", true, "baseline", "PPF"),
          Rows("fix-1", false, "candidate-1", improved ? "PPP" : "FFF"),
          Rows("sum-2", true, "candidate-1", "PPF")}) {
      rows.insert(rows.end(), part.begin(), part.end());
    }
    MEND_ASSERT_OK(folder->AppendScores(rows));
    auto scores = improve::CaseScoresFromRows(rows, 1);
    MEND_ASSERT_OK(scores);
    auto decision = improve::Decide(*scores, improve::GateOptions{});
    MEND_ASSERT_OK(decision);
    MEND_ASSERT_OK(folder->WriteDecision(1, *decision));
    MEND_ASSERT_OK(folder->WriteCard(improved ? kCard : "improve: no_improvement\n"));
    if (!improved) return;
    improve::AgentText base{kOldInstructions, {}};
    improve::AgentText after{kNewInstructions, {{"skills/tests.md", kNewSkill}}};
    MEND_ASSERT_OK(improve::WriteProposal(
        fs, home_, improve::MakeProposal(id, agent_dir_, base, after, clock_.Now())));
  }

  std::string AgentFile(const std::string& path) {
    Result<std::string> text = ReadFileToString(*env_.fs, agent_dir_ + "/" + path);
    return text.ok() ? *text : "<" + std::string(StatusCodeName(text.status().code())) + ">";
  }

  static std::string ExpectedDiff() {
    return improve::UnifiedDiff("instructions.md", kOldInstructions, kNewInstructions) +
           improve::UnifiedDiff("skills/tests.md", "", kNewSkill);
  }

  void ExpectError(const Reply& reply, int status, const std::string& code) {
    EXPECT_EQ(reply.status, status) << reply.text;
    EXPECT_EQ(reply.body["error"]["code"], code) << reply.text;
  }

  std::string agent_dir_;
  ManualClock clock_;
};

TEST_F(ImproveApiTest, ListShowsEveryAttemptNewestFirst) {
  StartServer();
  EXPECT_EQ(Get("/api/v1/improve").body, (nlohmann::json{{"attempts", nlohmann::json::array()}}));
  WriteAttempt(kOlderId, /*improved=*/false);
  WriteAttempt(kId, /*improved=*/true);
  Reply list = Get("/api/v1/improve");
  ASSERT_EQ(list.status, 200) << list.text;
  const nlohmann::json& attempts = list.body["attempts"];
  ASSERT_EQ(attempts.size(), 2u);
  EXPECT_EQ(attempts[0], (nlohmann::json{{"attempt_id", kId},
                                         {"agent_dir", agent_dir_},
                                         {"outcome", "proposal"},
                                         {"gate", nullptr},
                                         {"proposal", "queued"},
                                         {"host", nullptr}}));  // one host: not shared
  EXPECT_EQ(attempts[1]["attempt_id"], kOlderId);
  EXPECT_EQ(attempts[1]["outcome"], "no_improvement");
  EXPECT_TRUE(attempts[1]["proposal"].is_null());
}

TEST_F(ImproveApiTest, MetricsCountRecordedAttemptsAndProposals) {
  StartServer();
  WriteAttempt(kOlderId, /*improved=*/false);
  WriteAttempt(kId, /*improved=*/true);
  auto scraped = client_->Get("/metrics");
  ASSERT_TRUE(scraped);
  EXPECT_THAT(scraped->body,
              ::testing::HasSubstr("mend_improve_attempts_recorded{outcome=\"proposal\"} 1\n"));
  EXPECT_THAT(scraped->body, ::testing::HasSubstr(
                                 "mend_improve_attempts_recorded{outcome=\"no_improvement\"} 1\n"));
  EXPECT_THAT(scraped->body, ::testing::HasSubstr("mend_improve_proposals{status=\"queued\"} 1\n"));
  EXPECT_THAT(scraped->body,
              ::testing::HasSubstr("mend_improve_proposals{status=\"applied\"} 0\n"));
}

TEST_F(ImproveApiTest, ShowHasTheDecisionTheCardAndTheDiff) {
  StartServer();
  WriteAttempt(kId, /*improved=*/true);
  Reply shown = Get(std::string("/api/v1/improve/") + kId);
  ASSERT_EQ(shown.status, 200) << shown.text;
  EXPECT_EQ(Keys(shown.body),
            (std::set<std::string>{"attempt_id", "agent_dir", "host", "audit_dir", "audit_here",
                                   "outcome", "gate", "cases", "editor_exchanges", "score_rows",
                                   "decision", "recomputed_matches", "recomputed_mismatch", "error",
                                   "card", "proposal", "diff", "changed_files"}));
  EXPECT_EQ(shown.body["attempt_id"], kId);
  EXPECT_TRUE(shown.body["host"].is_null());
  EXPECT_EQ(shown.body["audit_here"], true);
  EXPECT_EQ(shown.body["outcome"], "proposal");
  EXPECT_EQ(shown.body["cases"], 2);
  EXPECT_EQ(shown.body["score_rows"], 12);
  EXPECT_EQ(shown.body["decision"]["outcome"], "proposal");
  EXPECT_EQ(shown.body["decision"]["candidate"], 1);
  EXPECT_TRUE(shown.body["decision"]["gate"].is_null());
  EXPECT_EQ(shown.body["recomputed_matches"], true);
  EXPECT_TRUE(shown.body["recomputed_mismatch"].is_null());
  EXPECT_TRUE(shown.body["error"].is_null());
  EXPECT_EQ(shown.body["card"], kCard);
  EXPECT_EQ(shown.body["proposal"]["status"], "queued");
  EXPECT_EQ(shown.body["proposal"]["files"],
            (nlohmann::json{"instructions.md", "skills/tests.md"}));
  EXPECT_EQ(shown.body["diff"], ExpectedDiff());
  EXPECT_THAT(shown.body["diff"].get<std::string>(), HasSubstr("+Run the tests first.\n"));
  EXPECT_TRUE(shown.body["changed_files"].empty());
}

TEST_F(ImproveApiTest, ShowNamesTheCostFigureTheEditedScoresNoLongerGive) {
  StartServer();
  WriteAttempt(kId, /*improved=*/true);
  // A cost changed after the fact: the outcome, the gate and every verdict stay what they were.
  const std::string path = home_ + "/improve/" + kId + "/scores.jsonl";
  std::string scores = *ReadFileToString(*env_.fs, path);
  const std::string row = R"("arm":"candidate-1","case_id":"fix-1","cost_usd":0.01)";
  ASSERT_NE(scores.find(row), std::string::npos) << scores;
  scores.replace(scores.find(row), row.size(),
                 R"("arm":"candidate-1","case_id":"fix-1","cost_usd":0.02)");
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, path, scores));
  Reply shown = Get(std::string("/api/v1/improve/") + kId);
  ASSERT_EQ(shown.status, 200) << shown.text;
  EXPECT_EQ(shown.body["decision"]["outcome"], "proposal");
  EXPECT_EQ(shown.body["recomputed_matches"], false);
  EXPECT_THAT(shown.body["recomputed_mismatch"].get<std::string>(),
              ::testing::StartsWith("candidate_cost.total_usd: recorded 0.06"));
}

TEST_F(ImproveApiTest, ShowOfAnAttemptThatStoppedOnAnError) {
  StartServer();
  auto folder = improve::AuditFolder::Create(*env_.fs, home_, kId);
  MEND_ASSERT_OK(folder);
  MEND_ASSERT_OK(folder->WriteInputs(
      improve::MakeAuditInputs(agent_dir_, kOldInstructions, {}, {}, {3, 2, {}})));
  MEND_ASSERT_OK(folder->WriteError(UnavailableError("the model is down")));
  Reply shown = Get(std::string("/api/v1/improve/") + kId);
  ASSERT_EQ(shown.status, 200) << shown.text;
  EXPECT_EQ(shown.body["outcome"], "failed");
  EXPECT_EQ(shown.body["error"],
            (nlohmann::json{{"code", "UNAVAILABLE"}, {"message", "the model is down"}}));
  EXPECT_TRUE(shown.body["decision"].is_null());
  EXPECT_TRUE(shown.body["recomputed_matches"].is_null());
  EXPECT_EQ(Get("/api/v1/improve").body["attempts"][0]["outcome"], "failed");
}

TEST_F(ImproveApiTest, ShowOfAnAttemptWithoutAProposal) {
  StartServer();
  WriteAttempt(kOlderId, /*improved=*/false);
  Reply shown = Get(std::string("/api/v1/improve/") + kOlderId);
  ASSERT_EQ(shown.status, 200) << shown.text;
  EXPECT_EQ(shown.body["decision"]["outcome"], "no_improvement");
  EXPECT_TRUE(shown.body["proposal"].is_null());
  EXPECT_EQ(shown.body["diff"], "");
  Reply apply = Post(std::string("/api/v1/improve/") + kOlderId + "/apply");
  ExpectError(apply, 404, "NOT_FOUND");
  EXPECT_THAT(apply.body["error"]["message"].get<std::string>(), HasSubstr("made no proposal"));
}

TEST_F(ImproveApiTest, ApplyWritesTheProposalIntoTheAgentFolder) {
  StartServer();
  WriteAttempt(kId, /*improved=*/true);
  const std::string toml = AgentFile("agent.toml");
  Reply applied = Post(std::string("/api/v1/improve/") + kId + "/apply");
  ASSERT_EQ(applied.status, 200) << applied.text;
  EXPECT_EQ(Keys(applied.body), (std::set<std::string>{"attempt_id", "proposal"}));
  EXPECT_EQ(applied.body["attempt_id"], kId);
  EXPECT_EQ(applied.body["proposal"]["status"], "applied");
  EXPECT_FALSE(applied.body["proposal"]["decided_at"].get<std::string>().empty());
  EXPECT_EQ(AgentFile("instructions.md"), kNewInstructions);
  EXPECT_EQ(AgentFile("skills/tests.md"), kNewSkill);
  EXPECT_EQ(AgentFile("agent.toml"), toml);
  EXPECT_EQ(*ReadFileToString(*env_.fs, home_ + "/improve/" + kId + "/backup/instructions.md"),
            kOldInstructions);

  // Show still diffs against the text the attempt started from (now the backup).
  Reply shown = Get(std::string("/api/v1/improve/") + kId);
  EXPECT_EQ(shown.body["proposal"]["status"], "applied");
  EXPECT_EQ(shown.body["diff"], ExpectedDiff());
  EXPECT_TRUE(shown.body["changed_files"].empty());
  EXPECT_EQ(Get("/api/v1/improve").body["attempts"][0]["proposal"], "applied");

  ExpectError(Post(std::string("/api/v1/improve/") + kId + "/apply"), 409, "FAILED_PRECONDITION");
  ExpectError(Post(std::string("/api/v1/improve/") + kId + "/reject"), 409, "FAILED_PRECONDITION");
}

TEST_F(ImproveApiTest, RejectLeavesTheAgentFolderAlone) {
  StartServer();
  WriteAttempt(kId, /*improved=*/true);
  Reply rejected =
      Post(std::string("/api/v1/improve/") + kId + "/reject", {{"reason", "too long"}});
  ASSERT_EQ(rejected.status, 200) << rejected.text;
  EXPECT_EQ(rejected.body["proposal"]["status"], "rejected");
  EXPECT_EQ(rejected.body["proposal"]["note"], "too long");
  EXPECT_EQ(AgentFile("instructions.md"), kOldInstructions);
  EXPECT_EQ(AgentFile("skills/tests.md"), "<NOT_FOUND>");
  ExpectError(Post(std::string("/api/v1/improve/") + kId + "/apply"), 409, "FAILED_PRECONDITION");
  EXPECT_EQ(AgentFile("instructions.md"), kOldInstructions);
}

TEST_F(ImproveApiTest, RejectWithoutAReasonSaysItWasByHand) {
  StartServer();
  WriteAttempt(kId, /*improved=*/true);
  ExpectError(Post(std::string("/api/v1/improve/") + kId + "/reject", {{"reason", 5}}), 400,
              "INVALID_ARGUMENT");
  Reply rejected = Post(std::string("/api/v1/improve/") + kId + "/reject");
  ASSERT_EQ(rejected.status, 200) << rejected.text;
  EXPECT_EQ(rejected.body["proposal"]["note"], "rejected by hand");
}

TEST_F(ImproveApiTest, ApplyRefusesAFileEditedSinceTheAttemptStarted) {
  StartServer();
  WriteAttempt(kId, /*improved=*/true);
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agent_dir_ + "/instructions.md", "Edited.\n"));
  Reply shown = Get(std::string("/api/v1/improve/") + kId);
  EXPECT_EQ(shown.body["changed_files"], (nlohmann::json{"instructions.md"}));
  EXPECT_THAT(shown.body["diff"].get<std::string>(), HasSubstr("-Edited.\n"));

  Reply applied = Post(std::string("/api/v1/improve/") + kId + "/apply");
  ExpectError(applied, 409, "FAILED_PRECONDITION");
  EXPECT_THAT(applied.body["error"]["message"].get<std::string>(),
              HasSubstr("instructions.md changed"));
  EXPECT_EQ(AgentFile("instructions.md"), "Edited.\n");
  EXPECT_EQ(AgentFile("skills/tests.md"), "<NOT_FOUND>");
  EXPECT_EQ(Get(std::string("/api/v1/improve/") + kId).body["proposal"]["status"], "queued");
}

TEST_F(ImproveApiTest, UnknownAttemptsAreNotFoundAndBadIdsAreRefused) {
  StartServer();
  WriteAttempt(kId, /*improved=*/true);
  const std::string unknown = std::string("/api/v1/improve/") + kUnknownId;
  ExpectError(Get(unknown), 404, "NOT_FOUND");
  ExpectError(Post(unknown + "/apply"), 404, "NOT_FOUND");
  ExpectError(Post(unknown + "/reject"), 404, "NOT_FOUND");
  for (const std::string& bad : {std::string("nope"), std::string(".."),
                                 std::string("..%2F..%2Fetc"), std::string(kId) + "%2F..",
                                 std::string("imp-20261202T101500-3FA2C1D0"), std::string("a/b")}) {
    ExpectError(Get("/api/v1/improve/" + bad), 400, "INVALID_ARGUMENT");
    ExpectError(Post("/api/v1/improve/" + bad + "/apply"), 400, "INVALID_ARGUMENT");
    ExpectError(Post("/api/v1/improve/" + bad + "/reject"), 400, "INVALID_ARGUMENT");
  }
  EXPECT_EQ(AgentFile("instructions.md"), kOldInstructions);
}

TEST_F(ImproveApiTest, NoAnswerCarriesASecret) {
  StartServer({}, {}, {{"provider.api_key", kSecret}});
  WriteAttempt(kId, /*improved=*/true);
  std::vector<Reply> replies = {
      Get("/api/v1/improve"),
      Get(std::string("/api/v1/improve/") + kId),
      Post(std::string("/api/v1/improve/") + kId + "/apply"),
      Post(std::string("/api/v1/improve/") + kId + "/reject"),
      Get("/api/v1/improve/nope"),
  };
  for (const Reply& reply : replies) {
    EXPECT_NE(reply.status, 0);
    EXPECT_THAT(reply.text, Not(HasSubstr(kSecret)));
  }
}

// A canary from the API: started (201) on a share of new runs without touching the folder, shown,
// refusing `apply` and a second canary while it runs, then promoted as `apply` would write it.
TEST_F(ImproveApiTest, ACanaryIsStartedShownAndPromoted) {
  StartServer();
  WriteAttempt(kId, /*improved=*/true);
  const std::string base = std::string("/api/v1/improve/") + kId;
  ExpectError(Post(base + "/canary", {{"percent", "ten"}}), 400, "INVALID_ARGUMENT");
  ExpectError(Post(base + "/canary", {{"percent", 0}}), 400, "INVALID_ARGUMENT");
  ExpectError(Post(base + "/canary", {{"percent", 10}, {"auto", "yes"}}), 400, "INVALID_ARGUMENT");
  Reply started = Post(base + "/canary", {{"percent", 25}, {"auto", false}});
  ASSERT_EQ(started.status, 201) << started.text;
  EXPECT_EQ(started.body["state"], "running");
  EXPECT_EQ(started.body["percent"], 25);
  EXPECT_EQ(started.body["arms"][0]["arm"], "baseline");
  EXPECT_EQ(started.body["arms"][1]["arm"], kId);
  EXPECT_EQ(started.body["recommendation"]["verdict"], "continue");
  EXPECT_EQ(AgentFile("instructions.md"), kOldInstructions);
  auto scraped = client_->Get("/metrics");
  ASSERT_TRUE(scraped);
  EXPECT_THAT(scraped->body, HasSubstr("mend_canaries{state=\"running\"} 1\n"));
  EXPECT_THAT(
      scraped->body,
      HasSubstr("mend_canary_runs{agent=\"fixer\",arm=\"proposal\",outcome=\"success\"} 0\n"));
  Reply shown = Get(base + "/canary");
  ASSERT_EQ(shown.status, 200) << shown.text;
  EXPECT_EQ(shown.body["proposal"], kId);
  ExpectError(Post(base + "/canary", {{"percent", 25}}), 409, "ALREADY_EXISTS");
  ExpectError(Post(base + "/apply"), 409, "FAILED_PRECONDITION");
  Reply promoted = Post(base + "/promote");
  ASSERT_EQ(promoted.status, 200) << promoted.text;
  EXPECT_EQ(promoted.body["state"], "promoted");
  EXPECT_EQ(promoted.body["verdict"], "promote_manual");
  EXPECT_EQ(AgentFile("instructions.md"), kNewInstructions);
  EXPECT_EQ(AgentFile("skills/tests.md"), kNewSkill);
  ExpectError(Post(base + "/rollback"), 409, "FAILED_PRECONDITION");
  ExpectError(Get(std::string("/api/v1/improve/") + kUnknownId + "/canary"), 404, "NOT_FOUND");
}

}  // namespace
}  // namespace mend::server
