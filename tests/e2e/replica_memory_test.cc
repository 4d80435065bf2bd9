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

#include "tests/e2e/child_process.h"
#include "tests/e2e/scratch_database.h"
#include "tests/e2e/temp_dir.h"
#include "tests/support/status_matchers.h"

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

class ReplicaMemoryTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string server = PostgresServerUrl();
    if (server.empty())
      GTEST_SKIP() << "MEND_TEST_POSTGRES_URL is not set (see scripts/with_postgres)";
    auto dir = ScopedTempDir::Create();
    MEND_ASSERT_OK(dir);
    dir_ = std::move(*dir);
    auto db = ScratchDatabase::Create(server, "mend_memory_replicas");
    MEND_ASSERT_OK(db);
    db_ = std::move(*db);
    std::error_code error;
    std::filesystem::create_directories(dir_->File("agent"), error);
    ASSERT_FALSE(error) << error.message();
    MEND_ASSERT_OK(dir_->WriteFile("agent/agent.toml", "name = \"gateway\"\ntools = []\n"));
    MEND_ASSERT_OK(dir_->WriteFile("agent/instructions.md", "Operate the billing gateway.\n"));
    auto script = dir_->WriteFile("script.json", kScript);
    MEND_ASSERT_OK(script);
    auto fallback = dir_->WriteFile("default.json", kDefault);
    MEND_ASSERT_OK(fallback);
    auto started = StartFakeServer(
        FAKE_LLM_SERVER_BINARY,
        {"--script", *script, "--default", *fallback, "--api-key", kKey, "--log", LogPath()},
        kBound);
    MEND_ASSERT_OK(started);
    server_ = std::move(started->process);
    base_url_ = "http://127.0.0.1:" + std::to_string(started->port);
  }

  std::string LogPath() const { return dir_->File("requests.jsonl"); }

  // `mend --home home-<replica> --json ARGS` with the shared store; exit status 0 expected unless
  // `expect_code` says otherwise.
  nlohmann::json Mend(const std::string& replica, std::vector<std::string> args,
                      std::vector<std::string> extra_env = {}, int expect_code = 0) {
    std::vector<std::string> argv = {MEND_BINARY, "--home", dir_->File("home-" + replica),
                                     "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<std::string> env = {"PATH=/usr/bin:/bin",
                                    "HOME=" + dir_->path(),
                                    "MEND_STORE=" + db_.url(),
                                    "MEND_PROVIDER=openai",
                                    "MEND_MODEL=gpt-4o-mini",
                                    "MEND_BASE_URL=" + base_url_,
                                    std::string("MEND_API_KEY=") + kKey};
    env.insert(env.end(), extra_env.begin(), extra_env.end());
    auto result = RunProcess(argv, env, kBound);
    EXPECT_THAT(result, IsOk());
    if (!result.ok()) return nullptr;
    EXPECT_TRUE(result->status.exited && result->status.code == expect_code)
        << replica << " " << args[0] << ": " << result->err;
    EXPECT_THAT(result->out + result->err, Not(HasSubstr(kKey)));
    return nlohmann::json::parse(result->out, nullptr, false);
  }

  // The system prompt of every chat request the fake server received, in order.
  std::vector<std::string> SystemPrompts() const {
    std::vector<std::string> prompts;
    auto log = ReadWholeFile(LogPath());
    if (!log.ok()) return prompts;
    std::istringstream lines(*log);
    std::string line;
    while (std::getline(lines, line)) {
      nlohmann::json request = nlohmann::json::parse(line, nullptr, false);
      if (!request.is_object()) continue;
      nlohmann::json body = request.value("body", nlohmann::json());
      if (body.is_string()) body = nlohmann::json::parse(body.get<std::string>(), nullptr, false);
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

  std::unique_ptr<ScopedTempDir> dir_;
  ScratchDatabase db_;
  std::unique_ptr<ChildProcess> server_;
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
