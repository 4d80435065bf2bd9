// Replicas that learn together (docs/operations.md): three `mend` homes, as three hosts, share one
// PostgreSQL database through MEND_STORE. A run that fails on replica A leaves a lesson; the next
// similar task on B and on C receives it in its prompt; a fact added on C is found on A; and a
// replica with memory.local keeps its memory to itself.
//
// Needs a server: MEND_TEST_POSTGRES_URL (scripts/with_postgres); skipped without one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "tests/e2e/postgres_e2e_test.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kKey[] = "sk-replica-memory-KEY-4242";
constexpr std::chrono::seconds kBound(30);
constexpr char kTask[] = "Rotate the TLS certificate of the billing gateway.";
constexpr char kSimilarTask[] = "Rotate the TLS certificate of the billing gateway again.";
constexpr char kCorrection[] = "Refer to the certificate by its file path instead of pasting it";

// Replica A's run fails at once; its lesson worker gets the lesson; every later request (the runs
// on B and C) is answered "done".
constexpr char kScript[] = R"([
  {"status": 400, "error_type": "context_length_exceeded",
   "error_message": "the certificate bundle pasted into the prompt is too long"},
  {"text": "<situation>Rotating the TLS certificate of the billing gateway</situation>\n<mistake>Pasted the whole certificate bundle into the prompt</mistake>\n<correction>Refer to the certificate by its file path instead of pasting it</correction>\n<tags>tls, certificate, billing-gateway</tags>"}
])";
constexpr char kDefault[] = R"({"text": "done"})";

class ReplicaMemoryTest : public PostgresE2eTest {
 protected:
  ReplicaMemoryTest()
      : PostgresE2eTest("mend_memory_replicas",
                        {.secret = kKey,
                         .agent_toml = "name = \"gateway\"\ntools = []\n",
                         .instructions = "Operate the billing gateway.\n"}) {}

  void SetUpWithDatabase() override {
    ASSERT_NO_FATAL_FAILURE(StartFakeLlm({"--script", WriteTestFile("script.json", kScript),
                                          "--default", WriteTestFile("default.json", kDefault),
                                          "--api-key", kKey, "--log", LogPath()}));
    base_url_ = ServerUrl();
    env_.insert(env_.end(), {"MEND_STORE=" + db_.url(), "MEND_PROVIDER=openai",
                             "MEND_MODEL=gpt-4o-mini", "MEND_BASE_URL=" + base_url_});
  }

  std::string LogPath() const { return dir_->File("requests.jsonl"); }

  // `mend --home home-<replica> --json ARGS` with the shared store; exit status 0 expected unless
  // `expect_code` says otherwise.
  nlohmann::json Mend(const std::string& replica, std::vector<std::string> args,
                      std::vector<std::string> extra_env = {}, int expect_code = 0) {
    const std::string what = replica + " " + args[0];
    args.insert(args.begin(), "--json");
    const ChildOutput result = E2eTest::Mend(
        std::move(args),
        {.home = dir_->File("home-" + replica), .extra_env = extra_env, .timeout = kBound});
    EXPECT_TRUE(result.status.exited && result.status.code == expect_code)
        << what << ": " << result.err;
    EXPECT_THAT(result.out + result.err, Not(HasSubstr(kKey)));
    return nlohmann::json::parse(result.out, nullptr, false);
  }

  // The system prompt of every chat request the fake server received, in order.
  std::vector<std::string> SystemPrompts() {
    std::vector<std::string> prompts;
    for (const nlohmann::json& body : LoggedBodies(LogPath())) {
      std::string system;
      if (body.is_object() && body.contains("messages")) {
        for (const nlohmann::json& m : body["messages"]) {
          if (m.value("role", "") == "system" && m["content"].is_string()) {
            system += m["content"].get<std::string>();
          }
        }
      }
      prompts.push_back(system);
    }
    return prompts;
  }

  std::string base_url_;
};

TEST_F(ReplicaMemoryTest, ALessonLearnedOnOneReplicaReachesTheNextSimilarTaskOnEveryOther) {
  // Replica A: the run fails; the process waits for its lesson before it exits.
  const nlohmann::json failed = Mend("a", {"run", dir_->File("agent"), kTask}, {}, 1);
  EXPECT_EQ(failed["status"], "failed") << failed;

  // B and C see it in what their next run would get, and their runs get it.
  for (const std::string replica : {"b", "c"}) {
    const nlohmann::json recall = Mend(replica, {"memory", "recall", kSimilarTask});
    ASSERT_EQ(recall["facts"].size(), 1u) << replica << ": " << recall;
    EXPECT_EQ(recall["facts"][0]["category"], "lesson");
    EXPECT_THAT(recall["section"].get<std::string>(), HasSubstr(kCorrection));
    const nlohmann::json run = Mend(replica, {"run", dir_->File("agent"), kSimilarTask});
    EXPECT_EQ(run["status"], "completed") << run;
  }
  const std::vector<std::string> prompts = SystemPrompts();
  ASSERT_EQ(prompts.size(), 4u);  // A's run, A's lesson, B's run, C's run
  EXPECT_THAT(prompts[0], Not(HasSubstr(kCorrection)));
  EXPECT_THAT(prompts[2], HasSubstr(kCorrection));
  EXPECT_THAT(prompts[3], HasSubstr(kCorrection));

  // One lesson, stored once, seen from the replica that learned it too.
  const nlohmann::json listed = Mend("a", {"memory", "list"});
  ASSERT_TRUE(listed.contains("facts")) << listed;
  EXPECT_EQ(listed["facts"].size(), 1u) << listed;
}

TEST_F(ReplicaMemoryTest, FactsAddedAnywhereAreFoundEverywhereUnlessMemoryIsLocal) {
  const nlohmann::json added =
      Mend("c", {"memory", "add", "The staging database is rebuilt every Sunday at 02:00 UTC",
                 "--tags", "staging,database"});
  ASSERT_TRUE(added.is_object()) << added;
  const nlohmann::json found = Mend("a", {"memory", "search", "when is staging database rebuilt"});
  ASSERT_EQ(found["results"].size(), 1u) << found;
  EXPECT_THAT(found["results"][0]["content"].get<std::string>(), HasSubstr("every Sunday"));

  // memory.local keeps B's memory in its own mend.db: it neither sees C's fact nor shares its own.
  const std::vector<std::string> local = {"MEND_MEMORY_LOCAL=true"};
  const nlohmann::json alone =
      Mend("b", {"memory", "search", "when is staging database rebuilt"}, local);
  EXPECT_EQ(alone["results"].size(), 0u) << alone;
  Mend("b", {"memory", "add", "Only replica B knows this: the cache warms at boot"}, local);
  const nlohmann::json shared = Mend("a", {"memory", "search", "cache warms at boot"});
  EXPECT_EQ(shared["results"].size(), 0u) << shared;
  const nlohmann::json own = Mend("b", {"memory", "search", "cache warms at boot"}, local);
  EXPECT_EQ(own["results"].size(), 1u) << own;
}

}  // namespace
}  // namespace mend::testing
