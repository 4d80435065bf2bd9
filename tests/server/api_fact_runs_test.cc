// Lessons and runs linked both ways over a real server: GET /api/v1/runs/{id}/memory (what a run
// was given, with scores and outcome, and the lesson its failure produced) and the came_from and
// given_to of GET /api/v1/memory/{id}.
#include <gmock/gmock.h>

#include <chrono>
#include <string>

#include "mend/base/manual_clock.h"
#include "tests/server/server_fixture.h"

namespace mend::server {
namespace {

using ::testing::HasSubstr;

class FactRunsApiTest : public ServerTest {
 protected:
  void SetUp() override {
    ServerTest::SetUp();
    env_.clock = &clock_;
  }

  void MakeRun(const std::string& id) {
    store::RunRecord run;
    run.id = id;
    run.agent = "a";
    run.task = "task of " + id;
    MEND_ASSERT_OK(runtime_->store->CreateRun(run));
  }

  // A lesson learned from run `run_id`'s failure.
  std::string AddLesson(const std::string& content, const std::string& run_id) {
    memory::NewFact fact;
    fact.content = content;
    fact.category = "lesson";
    fact.source = "reflexion";
    fact.episode = memory::Episode{"deploy payments", "migration missing", clock_.Now(), run_id};
    auto added = runtime_->facts->Add(fact);
    EXPECT_TRUE(added.ok()) << added.status();
    return added.ok() ? added->id : "";
  }

  void ExpectError(const Reply& reply, int status, const std::string& message) {
    EXPECT_EQ(reply.status, status) << reply.text;
    EXPECT_THAT(reply.body["error"]["message"].get<std::string>(), HasSubstr(message));
  }

  ManualClock clock_{std::chrono::sys_days{std::chrono::year{2026} / 3 / 1}};
};

TEST_F(FactRunsApiTest, ARunShowsWhatItWasGivenAndTheLessonItProduced) {
  StartServer();
  MakeRun("run-fail");
  MakeRun("run-later");
  const std::string lesson = AddLesson("LESSON: run the <b>migrations</b> first", "run-fail");
  auto other = runtime_->facts->Add({"Use the cluster named blue-7", "project"});
  ASSERT_TRUE(other.ok());
  MEND_ASSERT_OK(
      runtime_->facts->RecordInjection("run-later", {{lesson, 2.5}, {other->id, std::nullopt}}));

  Reply pending = Get("/api/v1/runs/run-later/memory");
  ASSERT_EQ(pending.status, 200) << pending.text;
  EXPECT_EQ(pending.body["run_id"], "run-later");
  ASSERT_EQ(pending.body["given"].size(), 2u);
  const nlohmann::json& first = pending.body["given"][0];
  EXPECT_EQ(first["fact_id"], lesson);
  EXPECT_EQ(first["category"], "lesson");
  EXPECT_EQ(first["content"], "LESSON: run the <b>migrations</b> first");
  EXPECT_EQ(first["score"], 2.5);
  EXPECT_EQ(first["outcome"], "pending");
  EXPECT_EQ(first["at"], "2026-03-01T00:00:00Z");
  EXPECT_TRUE(pending.body["given"][1]["score"].is_null());
  EXPECT_EQ(pending.body["lessons"], nlohmann::json::array());

  MEND_ASSERT_OK(runtime_->facts->RecordOutcome("run-later", /*completed=*/true));
  Reply done = Get("/api/v1/runs/run-later/memory");
  EXPECT_EQ(done.body["given"][0]["outcome"], "helped");
  EXPECT_EQ(done.body["given"][0]["helped"], 1);
  EXPECT_EQ(done.body["given"][0]["hurt"], 0);

  Reply failed = Get("/api/v1/runs/run-fail/memory");
  ASSERT_EQ(failed.status, 200) << failed.text;
  EXPECT_EQ(failed.body["given"], nlohmann::json::array());
  ASSERT_EQ(failed.body["lessons"].size(), 1u);
  EXPECT_EQ(failed.body["lessons"][0]["fact_id"], lesson);
  EXPECT_EQ(failed.body["lessons"][0]["category"], "lesson");
}

TEST_F(FactRunsApiTest, ARemovedFactIsStillListedWithoutItsText) {
  StartServer();
  MakeRun("run-1");
  auto fact = runtime_->facts->Add({"Release notes live in CHANGELOG.md"});
  ASSERT_TRUE(fact.ok());
  MEND_ASSERT_OK(runtime_->facts->RecordInjection("run-1", {{fact->id, 0.5}}));
  MEND_ASSERT_OK(runtime_->facts->Remove(fact->id));
  Reply reply = Get("/api/v1/runs/run-1/memory");
  ASSERT_EQ(reply.status, 200) << reply.text;
  ASSERT_EQ(reply.body["given"].size(), 1u);
  EXPECT_EQ(reply.body["given"][0]["fact_id"], fact->id);
  EXPECT_TRUE(reply.body["given"][0]["content"].is_null());
  EXPECT_TRUE(reply.body["given"][0]["helped"].is_null());
}

TEST_F(FactRunsApiTest, AnUnknownRunIsNotFound) {
  StartServer();
  ExpectError(Get("/api/v1/runs/no-such-run/memory"), 404, "no run named no-such-run");
}

TEST_F(FactRunsApiTest, AFactShowsTheRunItCameFromAndTheRunsItWasGivenTo) {
  StartServer();
  const std::string lesson = AddLesson("LESSON: run the migrations first", "run-fail");
  MEND_ASSERT_OK(runtime_->facts->RecordInjection("run-a", {{lesson, 1.25}}));
  MEND_ASSERT_OK(runtime_->facts->RecordOutcome("run-a", /*completed=*/false));
  clock_.Advance(std::chrono::seconds(1));
  MEND_ASSERT_OK(runtime_->facts->RecordInjection("run-b", {lesson}));

  Reply fact = Get("/api/v1/memory/" + lesson);
  ASSERT_EQ(fact.status, 200) << fact.text;
  EXPECT_EQ(fact.body["came_from"], nlohmann::json::array({"run-fail"}));
  EXPECT_EQ(fact.body["provenance"][0]["run_id"], "run-fail");
  const nlohmann::json& given = fact.body["given_to"];
  ASSERT_EQ(given.size(), 2u);
  EXPECT_EQ(given[0], (nlohmann::json{{"run_id", "run-b"},
                                      {"at", "2026-03-01T00:00:01Z"},
                                      {"score", nullptr},
                                      {"outcome", "pending"}}));
  EXPECT_EQ(given[1], (nlohmann::json{{"run_id", "run-a"},
                                      {"at", "2026-03-01T00:00:00Z"},
                                      {"score", 1.25},
                                      {"outcome", "hurt"}}));
  Reply bounded = Get("/api/v1/memory/" + lesson + "?given_limit=1");
  ASSERT_EQ(bounded.status, 200) << bounded.text;
  ASSERT_EQ(bounded.body["given_to"].size(), 1u);
  EXPECT_EQ(bounded.body["given_to"][0]["run_id"], "run-b");

  // A fact written by hand came from no run.
  auto typed = runtime_->facts->Add({"Use the cluster named blue-7", "project"});
  ASSERT_TRUE(typed.ok());
  Reply plain = Get("/api/v1/memory/" + typed->id);
  EXPECT_EQ(plain.body["came_from"], nlohmann::json::array());
  EXPECT_EQ(plain.body["given_to"], nlohmann::json::array());
}

TEST_F(FactRunsApiTest, ABadGivenLimitIsRefusedNamingIt) {
  StartServer();
  const std::string lesson = AddLesson("LESSON: run the migrations first", "run-fail");
  ExpectError(Get("/api/v1/memory/" + lesson + "?given_limit=0"), 400, "given_limit");
  ExpectError(Get("/api/v1/memory/" + lesson + "?given_limit=x"), 400, "given_limit");
  ExpectError(Get("/api/v1/memory/" + lesson + "?given_limit=1001"), 400, "given_limit");
}

}  // namespace
}  // namespace mend::server
