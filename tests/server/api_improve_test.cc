// /api/v1/improve: recorded attempts listed and shown, proposals applied to or rejected for a
// real agent folder. Attempts are written the way an improve attempt writes them (audit folder,
// scores, decision, card, proposal), so no model is needed.
#include <gmock/gmock.h>

#include <chrono>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/improve/attempt_store.h"
#include "mend/improve/audit.h"
#include "mend/improve/gates.h"
#include "mend/improve/proposal.h"
#include "mend/improve/proposal_diff.h"
#include "mend/obs/events.h"
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
  // Each case's passing runs per arm and gain, and the cost figures, as decision.json holds them.
  EXPECT_EQ(shown.body["decision"]["cases"], (nlohmann::json{{{"id", "fix-1"},
                                                              {"held_out", false},
                                                              {"runs", 3},
                                                              {"before", 0},
                                                              {"after", 3},
                                                              {"verdict", "better"},
                                                              {"gain", 3}},
                                                             {{"id", "sum-2"},
                                                              {"held_out", true},
                                                              {"runs", 3},
                                                              {"before", 2},
                                                              {"after", 2},
                                                              {"verdict", "same"},
                                                              {"gain", 0}}}));
  const nlohmann::json& cost = shown.body["decision"]["cost"];
  EXPECT_DOUBLE_EQ(cost["before_per_success_usd"].get<double>(), 0.06 / 2);
  EXPECT_DOUBLE_EQ(cost["after_per_success_usd"].get<double>(), 0.06 / 5);
  EXPECT_DOUBLE_EQ(cost["limit_usd"].get<double>(), 0.06 / 2 * 1.5);
  EXPECT_EQ(cost["max_cost_increase"], 0.5);
  EXPECT_EQ(cost["before"]["runs"], 6);
  EXPECT_EQ(cost["before"]["passes"], 2);
  EXPECT_DOUBLE_EQ(cost["before"]["total_usd"].get<double>(), 0.06);
  EXPECT_EQ(cost["after"]["passes"], 5);
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

// The canary route takes the protections every state-changing request has: the token, a JSON body
// and a request from this server's own pages. Refused requests start nothing.
TEST_F(ImproveApiTest, ACanaryStartWithoutTheTokenOrAJsonBodyIsRefused) {
  ServerOptions options;
  options.token = "tok-123";
  StartServer({}, options);
  WriteAttempt(kId, /*improved=*/true);
  const std::string path = std::string("/api/v1/improve/") + kId + "/canary";
  const httplib::Headers token = {{"Authorization", "Bearer tok-123"}};
  const std::string body = R"({"percent": 100, "auto": false})";
  ExpectError(Post(path, {{"percent", 100}}), 401, "UNAUTHENTICATED");
  ExpectError(Post(path, {{"percent", 100}}, {{"Authorization", "Bearer wrong"}}), 401,
              "UNAUTHENTICATED");
  // A form post from another site: a simple request a browser sends without asking first.
  ExpectError(ToReply(client_->Post(path, token, body, "text/plain")), 403, "PERMISSION_DENIED");
  ExpectError(
      ToReply(client_->Post(path, token, "percent=100", "application/x-www-form-urlencoded")), 403,
      "PERMISSION_DENIED");
  httplib::Headers cross = token;
  cross.emplace("Origin", "https://evil.example");
  ExpectError(Post(path, {{"percent", 100}}, cross), 403, "PERMISSION_DENIED");
  httplib::Headers fetched = token;
  fetched.emplace("Sec-Fetch-Site", "cross-site");
  ExpectError(Post(path, {{"percent", 100}}, fetched), 403, "PERMISSION_DENIED");
  ExpectError(Get(path, token), 404, "NOT_FOUND");  // none of them started one

  Reply started = Post(path, {{"percent", 100}, {"auto", false}}, token);
  ASSERT_EQ(started.status, 201) << started.text;
  EXPECT_EQ(started.body["percent"], 100);
  EXPECT_EQ(started.body["auto"], false);
  ExpectError(Post(std::string("/api/v1/improve/") + kId + "/rollback"), 401, "UNAUTHENTICATED");
  EXPECT_EQ(Get(path, token).body["state"], "running");
}

// Records the events the runtime publishes.
class RecordingSink final : public obs::EventSink {
 public:
  Status Write(const obs::Event& event) override {
    std::lock_guard<std::mutex> lock(mu_);
    events_.push_back(nlohmann::json::parse(obs::EventToJson(event)));
    return OkStatus();
  }
  std::vector<nlohmann::json> Of(const std::string& type) {
    std::lock_guard<std::mutex> lock(mu_);
    std::vector<nlohmann::json> found;
    for (const nlohmann::json& e : events_) {
      if (e["type"] == type) found.push_back(e);
    }
    return found;
  }

 private:
  std::mutex mu_;
  std::vector<nlohmann::json> events_;
};

// POST /api/v1/improve: an attempt of an agent folder of serve.agents_dir, with the check and the
// cases of its [improve] table, run by the server in the background against the scripted model.
class ImproveJobApiTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    // The check waits for the test's `go` file (so a second start meets a running attempt), then
    // passes the runs that answered "good".
    WriteAgent("fixer",
               "[improve]\ncheck = [\"sh\", \"${AGENT_DIR}/check.sh\", \"${AGENT_DIR}\"]\n"
               "cases = \"cases.jsonl\"\ntimeout_seconds = 60\n");
    agent_dir_ = agents_dir_ + "/fixer";
    Write("check.sh",
          "i=0\nwhile [ ! -e \"$1/go\" ] && [ $i -lt 600 ]; do sleep 0.05; i=$((i+1)); done\n"
          "if grep -q '\"output\":\"good\"'; then echo '{\"pass\":true}'; "
          "else echo '{\"pass\":false}'; fi\n");
    Write("cases.jsonl", "{\"id\":\"a\",\"task\":\"one\"}\n{\"id\":\"b\",\"task\":\"two\"}\n");
    WriteAgent("plain");  // no [improve] table
    WriteAgent("checks-only", "[improve]\ncheck = [\"true\"]\n");
  }

  void Write(const std::string& path, const std::string& text) {
    MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agent_dir_ + "/" + path, text));
  }

  // The script of one attempt of 2 cases x 2 repeats with one candidate: the baseline answers
  // "bad", the editor proposes new instructions, the candidate answers "good".
  static std::vector<llm::ScriptedStep> Script() {
    std::vector<llm::ScriptedStep> steps;
    for (int i = 0; i < 4; ++i) steps.push_back({"bad"});
    steps.push_back(
        {"<file path=\"instructions.md\">\nAnswer good.\n</file>\n<rationale>\nsay good\n"
         "</rationale>\n"});
    for (int i = 0; i < 4; ++i) steps.push_back({"good"});
    return steps;
  }

  static nlohmann::json Body() {
    return {{"agent", "fixer"}, {"repeats", 2},           {"rounds", 1},
            {"candidates", 1},  {"held_out_fraction", 0}, {"seed", 1}};
  }

  void Start() {
    StartServer(Script());
    sink_ = std::make_shared<RecordingSink>();
    runtime_->events->Subscribe(sink_);
  }

  // The job once it is no longer running (30 s at most).
  Reply WaitForJob() {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
    Reply job = Get("/api/v1/improve/job");
    while (job.status == 200 && job.body["state"] == "running" &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      job = Get("/api/v1/improve/job");
    }
    return job;
  }

  void ExpectError(const Reply& reply, int status, const std::string& code,
                   const std::string& message = "") {
    EXPECT_EQ(reply.status, status) << reply.text;
    EXPECT_EQ(reply.body["error"]["code"], code) << reply.text;
    if (!message.empty()) {
      EXPECT_THAT(reply.body["error"]["message"].get<std::string>(), HasSubstr(message));
    }
  }

  std::string agent_dir_;
  std::shared_ptr<RecordingSink> sink_;
};

TEST_F(ImproveJobApiTest, AnAttemptRunsInTheBackgroundOneAtATime) {
  Start();
  ExpectError(Get("/api/v1/improve/job"), 404, "NOT_FOUND", "no improve attempt was started");
  Reply started = Post("/api/v1/improve", Body());
  ASSERT_EQ(started.status, 202) << started.text;
  EXPECT_EQ(started.body["job"], 1);
  EXPECT_EQ(started.body["agent"], "fixer");
  EXPECT_EQ(started.body["agent_dir"], agent_dir_);
  EXPECT_EQ(started.body["state"], "running");
  EXPECT_FALSE(started.body["started_at"].get<std::string>().empty());
  for (const char* unset : {"finished_at", "outcome", "gate", "proposal", "error"}) {
    EXPECT_TRUE(started.body[unset].is_null()) << unset;
  }

  // The baseline's checks wait for `go`: a second attempt is refused meanwhile, whatever agent.
  ExpectError(Post("/api/v1/improve", Body()), 409, "FAILED_PRECONDITION",
              "an improve attempt is already running on this server (job 1, agent fixer");
  ExpectError(Post("/api/v1/improve", {{"agent", "plain"}}), 400, "INVALID_ARGUMENT");
  Reply running = Get("/api/v1/improve/job");
  ASSERT_EQ(running.status, 200) << running.text;
  EXPECT_EQ(running.body["state"], "running");
  EXPECT_EQ(running.body["job"], 1);

  Write("go", "");
  Reply done = WaitForJob();
  ASSERT_EQ(done.status, 200) << done.text;
  ASSERT_EQ(done.body["state"], "succeeded") << done.text;
  EXPECT_TRUE(done.body["error"].is_null());
  EXPECT_EQ(done.body["outcome"], "proposal");
  EXPECT_TRUE(done.body["gate"].is_null());
  EXPECT_EQ(done.body["proposal"], "queued");
  EXPECT_FALSE(done.body["finished_at"].is_null());
  const std::string attempt_id = done.body["attempt_id"].get<std::string>();
  EXPECT_TRUE(improve::IsValidAttemptId(attempt_id)) << attempt_id;
  // The last progress line: the candidate's runs.
  EXPECT_THAT(done.body["progress"].get<std::string>(), HasSubstr("improve: candidate 4/4 runs"));

  Reply list = Get("/api/v1/improve");
  ASSERT_EQ(list.body["attempts"].size(), 1u) << list.text;
  EXPECT_EQ(list.body["attempts"][0]["attempt_id"], attempt_id);
  EXPECT_EQ(list.body["attempts"][0]["outcome"], "proposal");
  EXPECT_EQ(list.body["attempts"][0]["proposal"], "queued");
  Reply shown = Get("/api/v1/improve/" + attempt_id);
  EXPECT_EQ(shown.body["decision"]["cases"][0]["before"], 0);
  EXPECT_EQ(shown.body["decision"]["cases"][0]["after"], 2);
  EXPECT_THAT(shown.body["diff"].get<std::string>(), HasSubstr("+Answer good.\n"));
  // Manual mode: the folder keeps its instructions until a person applies the proposal.
  EXPECT_EQ(*ReadFileToString(*env_.fs, agent_dir_ + "/instructions.md"), "Answer briefly.\n");

  // The UI follows the job on the event bus.
  ASSERT_EQ(sink_->Of("improve.started").size(), 1u);
  EXPECT_EQ(sink_->Of("improve.started")[0]["agent"], "fixer");
  ASSERT_EQ(sink_->Of("improve.attempt").size(), 1u);
  EXPECT_EQ(sink_->Of("improve.attempt")[0]["attempt"], attempt_id);
  std::vector<nlohmann::json> progress = sink_->Of("improve.progress");
  ASSERT_GE(progress.size(), 8u);  // one line per run at least
  EXPECT_EQ(progress[0]["job"], 1);
  EXPECT_EQ(progress[0]["attempt"], attempt_id);
  EXPECT_THAT(progress[0]["line"].get<std::string>(), HasSubstr("improve: baseline 1/4 runs"));
  std::vector<nlohmann::json> finished = sink_->Of("improve.finished");
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0]["state"], "succeeded");
  EXPECT_EQ(finished[0]["attempt"], attempt_id);
  EXPECT_EQ(finished[0]["outcome"], "proposal");
  EXPECT_EQ(finished[0]["proposal"], "queued");
}

TEST_F(ImproveJobApiTest, RequestsThatCannotStartAnAttemptAreRefused) {
  Start();
  ExpectError(Post("/api/v1/improve", nlohmann::json::object()), 400, "INVALID_ARGUMENT", "agent");
  // Only a plain name of a folder in serve.agents_dir, as POST /api/v1/runs takes it.
  ExpectError(Post("/api/v1/improve", {{"agent", "../fixer"}}), 400, "INVALID_ARGUMENT",
              "agent must be the name of a folder in serve.agents_dir");
  ExpectError(Post("/api/v1/improve", {{"agent", "nobody"}}), 404, "NOT_FOUND",
              "no agent named nobody");
  ExpectError(Post("/api/v1/improve", {{"agent", "plain"}}), 400, "INVALID_ARGUMENT",
              "has no check command for improve: add `check = [");
  ExpectError(Post("/api/v1/improve", {{"agent", "checks-only"}}), 400, "INVALID_ARGUMENT",
              "has no cases for improve: add `cases = ");
  // A request never carries a command or a file of its own.
  ExpectError(Post("/api/v1/improve", {{"agent", "fixer"}, {"check", {"sh", "-c", "id"}}}), 400,
              "INVALID_ARGUMENT", "a request cannot give the check");
  ExpectError(Post("/api/v1/improve", {{"agent", "fixer"}, {"cases", "/etc/passwd"}}), 400,
              "INVALID_ARGUMENT", "a request cannot give the cases");
  ExpectError(Post("/api/v1/improve", {{"agent", "fixer"}, {"repeat", 3}}), 400, "INVALID_ARGUMENT",
              "unknown body field repeat");
  struct Bad {
    const char* field;
    nlohmann::json value;
    const char* message;
  };
  for (const Bad& bad : std::vector<Bad>{
           {"repeats", 1, "repeats must be between 2 and 100"},
           {"repeats", 101, "repeats must be between 2 and 100"},
           {"repeats", "3", "repeats must be an integer"},
           {"repeats", 2.5, "repeats must be an integer"},
           {"repeats", 1e12, "repeats must be an integer"},
           {"rounds", 0, "rounds must be between 1 and 20"},
           {"candidates", 21, "candidates must be between 1 and 20"},
           {"held_out_fraction", 1, "held_out_fraction must be at least 0 and below 1"},
           {"held_out_fraction", -0.1, "held_out_fraction must be at least 0 and below 1"},
           {"held_out_fraction", "half", "held_out_fraction must be a number"},
           {"seed", -1, "seed must be an integer >= 0"},
           {"seed", 1.5, "seed must be an integer >= 0"},
       }) {
    nlohmann::json body = Body();
    body[bad.field] = bad.value;
    ExpectError(Post("/api/v1/improve", body), 400, "INVALID_ARGUMENT", bad.message);
  }
  Write("cases.jsonl", "{\"task\": 3}\n");
  ExpectError(Post("/api/v1/improve", Body()), 400, "INVALID_ARGUMENT", "cases.jsonl: line 1");
  MEND_ASSERT_OK(env_.fs->Unlink(agent_dir_ + "/cases.jsonl"));
  ExpectError(Post("/api/v1/improve", Body()), 400, "INVALID_ARGUMENT",
              "agent fixer: the [improve] table's cases file");
  // None of them started anything.
  ExpectError(Get("/api/v1/improve/job"), 404, "NOT_FOUND");
  EXPECT_TRUE(Get("/api/v1/improve").body["attempts"].empty());
}

// A server that stops asks its attempt to stop as it asks its runs: the attempt ends CANCELLED
// and is recorded as failed.
TEST_F(ImproveJobApiTest, StoppingTheServerStopsTheAttempt) {
  Start();
  Reply started = Post("/api/v1/improve", Body());
  ASSERT_EQ(started.status, 202) << started.text;
  int still_running = -1;
  std::thread stopper([&] { still_running = server_->Stop(); });
  // Stop tells the attempt before it stops listening: once the server no longer answers, the
  // attempt has been told.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (client_->Get("/healthz") && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  Write("go", "");  // the baseline's checks end; no candidate is evaluated
  stopper.join();
  EXPECT_EQ(still_running, 0);
  std::vector<nlohmann::json> finished = sink_->Of("improve.finished");
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0]["state"], "failed");
  EXPECT_EQ(finished[0]["code"], "CANCELLED");
  auto attempts = runtime_->Attempts();
  MEND_ASSERT_OK(attempts);
  auto list = (*attempts)->List();
  MEND_ASSERT_OK(list);
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].outcome, "failed");
  EXPECT_EQ(*ReadFileToString(*env_.fs, agent_dir_ + "/instructions.md"), "Answer briefly.\n");
}

}  // namespace
}  // namespace mend::server
