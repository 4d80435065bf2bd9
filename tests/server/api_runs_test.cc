// The runs route group, part one: starting a run, reading runs (detail, pages, filters, pending)
// and the agents a client may start; what a client gets for bad input.
#include <gmock/gmock.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "mend/store/checkpoint_store.h"
#include "tests/server/api_runs_fixture.h"

namespace mend::server {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;

std::vector<std::string> Ids(const nlohmann::json& page) {
  std::vector<std::string> ids;
  for (const auto& run : page["runs"]) ids.push_back(run["id"].get<std::string>());
  return ids;
}

TEST_F(RunsApiTest, AStartedRunExistsAtOnceAndCompletesInTheBackground) {
  WriteAgent("helper");
  StartServer({TextStep("hello there")});
  Reply started = StartRun("helper", "say hello", "r1");
  ASSERT_EQ(started.status, 202) << started.text;
  EXPECT_EQ(started.body, (nlohmann::json{{"run_id", "r1"}, {"status", "running"}}));
  // The record exists when the answer arrives, whatever the run has done since.
  EXPECT_EQ(Get("/api/v1/runs/r1").status, 200);

  nlohmann::json run = Settled("r1");
  EXPECT_EQ(run["id"], "r1");
  EXPECT_EQ(run["run_id"], "r1");
  EXPECT_EQ(run["status"], "completed");
  EXPECT_EQ(run["output"], "hello there");
  EXPECT_EQ(run["agent"], "helper");
  EXPECT_EQ(run["task"], "say hello");
  EXPECT_EQ(run["waiting"], nullptr);
  EXPECT_EQ(run["last_error"], nullptr);
  EXPECT_EQ(run["driven_here"], false);
  EXPECT_EQ(run["workspace"], dir_);
  EXPECT_EQ(run["provider"], "scripted");
  EXPECT_EQ(run["model"]["provider"], "scripted");
  EXPECT_EQ(run["steps"], 1);
  EXPECT_TRUE(run["usage"].contains("input_tokens"));
  EXPECT_TRUE(run["trace_id"].is_string() || run["trace_id"].is_null());
  ASSERT_EQ(run["transcript"].size(), 3u);
  EXPECT_EQ(run["transcript"][0]["role"], "system");
  EXPECT_EQ(run["transcript"][1]["role"], "user");
  EXPECT_EQ(run["transcript"][1]["content"], "say hello");
  EXPECT_EQ(run["transcript"][2]["role"], "assistant");
  EXPECT_EQ(run["transcript"][2]["content"], "hello there");
  ASSERT_EQ(run["checkpoints"].size(), 2u);
  EXPECT_EQ(run["checkpoints"][1]["step"], 2);
  EXPECT_EQ(run["checkpoints"][1]["message_count"], 3);
  EXPECT_TRUE(run["checkpoints"][1]["created_at"].is_string());
}

TEST_F(RunsApiTest, ARunWithoutAnIdGetsOne) {
  WriteAgent("helper");
  StartServer({TextStep("ok")});
  Reply started = StartRun("helper", "anything");
  ASSERT_EQ(started.status, 202) << started.text;
  const std::string id = started.body["run_id"].get<std::string>();
  EXPECT_THAT(id, MatchesRegex("run-[0-9a-f]{16}"));
  EXPECT_EQ(Settled(id)["status"], "completed");
  // The same id again is a conflict.
  Reply again = StartRun("helper", "anything", id);
  EXPECT_EQ(again.status, 409);
  EXPECT_EQ(again.body["error"]["code"], "ALREADY_EXISTS");
}

TEST_F(RunsApiTest, OnlyAgentFoldersByPlainNameAreStarted) {
  WriteAgent("helper");
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agents_dir_ + "/notes.txt", "not an agent"));
  MEND_ASSERT_OK(env_.fs->CreateDirs(dir_ + "/elsewhere"));
  StartServer({TextStep("ok")});
  for (const std::string name : {"../elsewhere", "..", ".", "a/b", "/etc", ".hidden", "x\ty"}) {
    Reply reply = StartRun(name, "t");
    EXPECT_EQ(reply.status, 400) << name << ": " << reply.text;
    EXPECT_EQ(reply.body["error"]["code"], "INVALID_ARGUMENT") << name;
  }
  for (const std::string name : {"nope", "notes.txt"}) {
    Reply reply = StartRun(name, "t");
    EXPECT_EQ(reply.status, 404) << name << ": " << reply.text;
    EXPECT_THAT(reply.body["error"]["message"].get<std::string>(), HasSubstr(name));
  }
  WriteAgent("broken", "limits = 3\n");
  Reply broken = StartRun("broken", "t");
  EXPECT_EQ(broken.status, 400) << broken.text;
  EXPECT_THAT(broken.body["error"]["message"].get<std::string>(), HasSubstr("agent.toml"));
  EXPECT_EQ(Post("/api/v1/runs", {{"agent", "helper"}}).status, 400);          // no task
  EXPECT_EQ(Post("/api/v1/runs", {{"task", "t"}}).status, 400);                // no agent
  EXPECT_EQ(Post("/api/v1/runs", {{"agent", 7}, {"task", "t"}}).status, 400);  // not a string
  EXPECT_EQ(StartRun("helper", "t", "a/b").status, 400);                       // bad id
  EXPECT_EQ(StartRun("helper", "t", std::string(129, 'x')).status, 400);       // id too long
  // Nothing was created by any of them.
  EXPECT_EQ(Get("/api/v1/runs").body["total"], 0);
}

TEST_F(RunsApiTest, WithoutAnAgentsFolderNothingCanBeStarted) {
  StartServer({TextStep("ok")}, ServerOptions{.agents_dir = dir_ + "/missing"});
  EXPECT_EQ(StartRun("helper", "t").status, 404);
  Reply agents = Get("/api/v1/agents");
  EXPECT_EQ(agents.status, 200) << agents.text;
  EXPECT_EQ(agents.body, (nlohmann::json{{"agents", nlohmann::json::array()}}));
}

TEST_F(RunsApiTest, AgentsAreTheAgentFoldersOfTheAgentsDir) {
  WriteAgent("alpha", "description = \"Answers questions.\"\n");
  WriteAgent("beta", "limits = 3\n");  // not a table: the folder does not load
  WriteAgent("gamma");
  MEND_ASSERT_OK(env_.fs->CreateDirs(agents_dir_ + "/empty"));
  MEND_ASSERT_OK(env_.fs->CreateDirs(agents_dir_ + "/.hidden"));
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agents_dir_ + "/.hidden/agent.toml", "name=\"h\""));
  MEND_ASSERT_OK(WriteFileAtomically(*env_.fs, agents_dir_ + "/readme.md", "agents"));
  StartServer();
  Reply reply = Get("/api/v1/agents");
  ASSERT_EQ(reply.status, 200) << reply.text;
  const nlohmann::json& agents = reply.body["agents"];
  ASSERT_EQ(agents.size(), 3u) << reply.text;
  EXPECT_EQ(agents[0], (nlohmann::json{{"name", "alpha"}, {"description", "Answers questions."}}));
  EXPECT_EQ(agents[1]["name"], "beta");
  EXPECT_THAT(agents[1]["error"].get<std::string>(), HasSubstr("limits"));
  EXPECT_EQ(agents[2], (nlohmann::json{{"name", "gamma"}}));
}

TEST_F(RunsApiTest, UnknownRunsAreNotFound) {
  WriteAgent("helper");
  StartServer();
  Reply show = Get("/api/v1/runs/nope");
  EXPECT_EQ(show.status, 404);
  EXPECT_EQ(show.body["error"]["code"], "NOT_FOUND");
  EXPECT_THAT(show.body["error"]["message"].get<std::string>(), HasSubstr("nope"));
  for (const char* action : {"resume", "approve", "deny", "fork"}) {
    EXPECT_EQ(Post(std::string("/api/v1/runs/nope/") + action).status, 404) << action;
  }
  EXPECT_EQ(Post("/api/v1/runs/nope/answer", {{"text", "x"}}).status, 404);
}

// Fills the store with `count` runs: created one second apart except that every fifth shares the
// previous one's instant, statuses cycling through all five, agents alternating.
std::vector<store::RunRecord> FillStore(store::CheckpointStore& store, int count) {
  const store::RunStatus kCycle[] = {store::RunStatus::kCompleted, store::RunStatus::kRunning,
                                     store::RunStatus::kFailed,    store::RunStatus::kCompleted,
                                     store::RunStatus::kWaiting,   store::RunStatus::kQuarantined};
  std::vector<store::RunRecord> runs;
  Time at = Time{} + std::chrono::hours(24 * 365 * 55);
  for (int i = 0; i < count; ++i) {
    if (i % 5 != 4) at += std::chrono::seconds(1);
    store::RunRecord run;
    run.id = "r" + std::to_string(i);
    run.agent = i % 2 == 0 ? "alpha" : "beta";
    run.agent_dir = "/nowhere/" + run.agent;
    run.task = "task " + run.id;
    run.created_at = at;
    EXPECT_TRUE(store.CreateRun(run).ok());
    run.status = kCycle[i % 6];
    if (run.status != store::RunStatus::kRunning) {
      store::RunUpdate update;
      update.status = run.status;
      if (run.status == store::RunStatus::kWaiting) update.waiting = "approval";
      EXPECT_TRUE(store.UpdateUnleased(run.id, update).ok());
    }
    runs.push_back(run);
  }
  std::sort(runs.begin(), runs.end(), [](const auto& a, const auto& b) {
    return std::tie(a.created_at, a.id) > std::tie(b.created_at, b.id);
  });
  return runs;
}

TEST_F(RunsApiTest, PagesOfRunsFollowTheCursorWithoutRepeatsOrGaps) {
  StartServer();
  const std::vector<store::RunRecord> runs = FillStore(*runtime_->store, 57);
  std::vector<std::string> expected;
  for (const auto& run : runs) expected.push_back(run.id);

  std::vector<std::string> listed;
  std::string path = "/api/v1/runs?limit=10";
  for (int page = 0; page < 10; ++page) {
    Reply reply = Get(path);
    ASSERT_EQ(reply.status, 200) << reply.text;
    EXPECT_EQ(reply.body["total"], 57);
    for (const std::string& id : Ids(reply.body)) listed.push_back(id);
    EXPECT_EQ(reply.body["more"], 57 - static_cast<int>(listed.size()));
    if (reply.body["next"].is_null()) break;
    path = "/api/v1/runs?limit=10&cursor=" + reply.body["next"].get<std::string>();
  }
  EXPECT_EQ(listed, expected);
  EXPECT_EQ(std::set<std::string>(listed.begin(), listed.end()).size(), 57u);

  Reply first = Get("/api/v1/runs?limit=1");
  const nlohmann::json& run = first.body["runs"][0];
  EXPECT_EQ(run["id"], expected[0]);
  for (const char* key : {"agent", "status", "step", "attempts", "quarantined", "waiting",
                          "created_at", "updated_at", "last_error", "model", "workspace"}) {
    EXPECT_TRUE(run.contains(key)) << key;
  }
  EXPECT_EQ(Get("/api/v1/runs").body["runs"].size(), 20u);  // the default page
}

TEST_F(RunsApiTest, PagesOfRunsFilterOnStatusAndAgent) {
  StartServer();
  const std::vector<store::RunRecord> runs = FillStore(*runtime_->store, 30);
  auto expect = [&](auto keep) {
    std::vector<std::string> ids;
    for (const auto& run : runs) {
      if (keep(run)) ids.push_back(run.id);
    }
    return ids;
  };
  using store::RunStatus;
  Reply completed = Get("/api/v1/runs?status=completed&limit=100");
  EXPECT_EQ(Ids(completed.body),
            expect([](const auto& r) { return r.status == RunStatus::kCompleted; }));
  EXPECT_EQ(completed.body["total"], 10);

  Reply two = Get("/api/v1/runs?status=failed,quarantined&status=waiting&limit=100");
  EXPECT_EQ(Ids(two.body), expect([](const auto& r) {
              return r.status == RunStatus::kFailed || r.status == RunStatus::kQuarantined ||
                     r.status == RunStatus::kWaiting;
            }));
  EXPECT_EQ(two.body["runs"][0]["quarantined"].is_boolean(), true);

  // A filtered page follows its cursor like an unfiltered one.
  std::vector<std::string> beta_done;
  std::string path = "/api/v1/runs?agent=beta&status=completed&limit=2";
  for (int page = 0; page < 10; ++page) {
    Reply reply = Get(path);
    ASSERT_EQ(reply.status, 200) << reply.text;
    for (const std::string& id : Ids(reply.body)) beta_done.push_back(id);
    if (reply.body["next"].is_null()) break;
    path = "/api/v1/runs?agent=beta&status=completed&limit=2&cursor=" +
           reply.body["next"].get<std::string>();
  }
  EXPECT_EQ(beta_done, expect([](const auto& r) {
              return r.agent == "beta" && r.status == RunStatus::kCompleted;
            }));

  for (const char* bad :
       {"/api/v1/runs?status=done", "/api/v1/runs?limit=0", "/api/v1/runs?limit=1001",
        "/api/v1/runs?limit=x", "/api/v1/runs?cursor=nonsense", "/api/v1/runs?status="}) {
    Reply reply = Get(bad);
    EXPECT_EQ(reply.status, 400) << bad << ": " << reply.text;
    EXPECT_EQ(reply.body["error"]["code"], "INVALID_ARGUMENT") << bad;
  }
}

TEST_F(RunsApiTest, PendingListsUnfinishedRunsInThePendingShape) {
  StartServer();
  const std::vector<store::RunRecord> runs = FillStore(*runtime_->store, 12);
  std::vector<std::string> unfinished;
  for (const auto& run : runs) {
    if (run.status != store::RunStatus::kCompleted) unfinished.push_back(run.id);
  }
  Reply page = Get("/api/v1/pending?limit=5");
  ASSERT_EQ(page.status, 200) << page.text;
  EXPECT_EQ(page.body["total"], static_cast<int>(unfinished.size()));
  EXPECT_EQ(Ids(page.body), std::vector<std::string>(unfinished.begin(), unfinished.begin() + 5));
  const nlohmann::json& run = page.body["runs"][0];
  for (const char* key : {"id", "agent", "status", "step", "attempts", "quarantined",
                          "next_attempt_at", "waiting", "last_error", "agent_changed"}) {
    EXPECT_TRUE(run.contains(key)) << key;
  }
  Reply rest = Get("/api/v1/pending?limit=5&cursor=" + page.body["next"].get<std::string>());
  ASSERT_EQ(unfinished.size(), 8u);
  EXPECT_EQ(Ids(rest.body), std::vector<std::string>(unfinished.begin() + 5, unfinished.end()));
  EXPECT_EQ(rest.body["next"], nullptr);
  Reply waiting = Get("/api/v1/pending?status=waiting&agent=alpha");
  for (const auto& r : waiting.body["runs"]) {
    EXPECT_EQ(r["status"], "waiting");
    EXPECT_EQ(r["waiting"], "approval");
    EXPECT_EQ(r["agent"], "alpha");
  }
  Reply completed = Get("/api/v1/pending?status=completed");
  EXPECT_EQ(completed.status, 400);
  EXPECT_THAT(completed.body["error"]["message"].get<std::string>(), HasSubstr("pending"));
}

// A `running` run that no process drives is interrupted in every run shape of the API; the
// stored status stays `running`.
TEST_F(RunsApiTest, RunsWhoseProcessIsGoneAreShownInterrupted) {
  StartServer();
  store::CheckpointStore& store = *runtime_->store;
  for (const char* id : {"killed", "elsewhere", "fork"}) {
    store::RunRecord r;
    r.id = id;
    r.agent = "helper";
    MEND_ASSERT_OK(store.CreateRun(r));
  }
  // A holder on this host whose process does not exist (pids never reach 2^30 on Linux).
  store::LeaseHolder gone = runtime_->holder;
  gone.id = "mend-dead@" + gone.host;
  gone.pid = int64_t{1} << 30;
  MEND_ASSERT_OK(store.Claim("killed", gone, std::chrono::minutes(5)).status());
  // A live holder on another machine.
  const store::LeaseHolder other{"replica-b", "host-b", "boot-b", 77};
  MEND_ASSERT_OK(store.Claim("elsewhere", other, std::chrono::minutes(5)).status());

  for (const char* path : {"/api/v1/runs", "/api/v1/pending"}) {
    Reply page = Get(path);
    ASSERT_EQ(page.status, 200) << page.text;
    std::map<std::string, nlohmann::json> by_id;
    for (const auto& run : page.body["runs"]) by_id[run["id"].get<std::string>()] = run;
    ASSERT_EQ(by_id.size(), 3u) << path;
    EXPECT_EQ(by_id["killed"]["status"], "running") << path;
    EXPECT_EQ(by_id["killed"]["interrupted"], true) << path;
    EXPECT_EQ(by_id["killed"]["interruption"]["reason"], "process_gone") << path;
    EXPECT_EQ(by_id["killed"]["interruption"]["holder"], gone.id) << path;
    EXPECT_TRUE(by_id["killed"]["interruption"]["lease_expires_at"].is_string()) << path;
    EXPECT_EQ(by_id["elsewhere"]["interrupted"], false) << path;
    EXPECT_EQ(by_id["elsewhere"]["interruption"], nullptr) << path;
    EXPECT_EQ(by_id["fork"]["interrupted"], false) << path;  // never claimed: not started
  }
  Reply detail = Get("/api/v1/runs/killed");
  ASSERT_EQ(detail.status, 200) << detail.text;
  EXPECT_EQ(detail.body["status"], "running");
  EXPECT_EQ(detail.body["interrupted"], true);
  EXPECT_EQ(detail.body["interruption"]["reason"], "process_gone");
  EXPECT_EQ(Get("/api/v1/runs/elsewhere").body["interrupted"], false);
}

}  // namespace
}  // namespace mend::server
