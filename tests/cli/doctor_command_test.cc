// `mend doctor` on a real home and the fake OpenAI-compatible server: a healthy home passes every
// check; a wrong key, an endpoint that is not there, a corrupt config.toml, a schema from a newer
// mend and a broken agent folder each fail their check with a fix (exit 1); dead letters, corrupt
// lesson records and a home others can read are warnings (exit 0). Nothing it reads is changed,
// and the key is never printed.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "mend/agent/agent_spec.h"
#include "mend/lessonq/job.h"
#include "mend/lessonq/wal_dir.h"
#include "tests/cli/cli_home_test.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::cli {
namespace {

using ::mend::testing::FakeLlmServer;
using ::mend::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

constexpr char kKey[] = "sk-doctor-test-0123456789";

void Sql(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sql;
  sqlite3_close(db);
}

class DoctorCommandTest : public CliHomeTest {
 protected:
  void SetUp() override {
    CliHomeTest::SetUp();
    auto server = FakeLlmServer::Start();
    ASSERT_THAT(server, IsOk());
    server_ = std::move(server).value();
    server_->RequireApiKey(kKey);
    env_["MEND_PROVIDER"] = "openai";
    env_["MEND_MODEL"] = "fake-model";
    env_["MEND_BASE_URL"] = server_->base_url();
    env_["MEND_API_KEY"] = kKey;
    // A home as the first commands leave it: created, with its stores at this build's schemas.
    ASSERT_EQ(Mend({"migrate"}), 0) << err();
  }

  // `mend doctor args... --json`, by check name.
  std::map<std::string, nlohmann::json> Checks(std::vector<std::string> args, int* code) {
    args.insert(args.begin(), "doctor");
    args.push_back("--json");
    *code = Mend(args);
    std::map<std::string, nlohmann::json> checks;
    const nlohmann::json json = Json();
    EXPECT_EQ(JsonKeys(json), (std::set<std::string>{"ok", "checks"})) << out();
    for (const nlohmann::json& check : json.value("checks", nlohmann::json::array())) {
      EXPECT_EQ(JsonKeys(check), (std::set<std::string>{"name", "status", "detail", "fix"}));
      checks[check.value("name", "")] = check;
    }
    EXPECT_EQ(json.value("ok", false), *code == 0);
    EXPECT_THAT(out(), Not(HasSubstr(kKey)));
    EXPECT_THAT(err(), Not(HasSubstr(kKey)));
    return checks;
  }

  std::string WriteDeadLetter() {
    lessonq::Job job;
    job.request = {"deploy the service", "tried once", "ERROR: boom", "error"};
    job.id = lessonq::JobIdFor(job.request);
    job.attempts = 5;
    job.last_error = "no lesson block";
    job.enqueued_at = job.next_attempt_at = Time(std::chrono::seconds(1'700'000'000));
    auto dlq = lessonq::WalDir::Open(fs_, home_ + "/reflexion/dlq");
    EXPECT_THAT(dlq, IsOk());
    if (dlq.ok()) {
      EXPECT_THAT((*dlq)->Append(job), IsOk());
    }
    return job.id;
  }

  std::unique_ptr<FakeLlmServer> server_;
};

TEST_F(DoctorCommandTest, AHealthyHomeAndFolderPassEveryCheck) {
  ASSERT_EQ(Mend({"init", agent_, "--template", "empty"}), 0) << err();
  int code = -1;
  const auto checks = Checks({agent_}, &code);
  EXPECT_EQ(code, 0) << out();
  std::vector<std::string> names;
  for (const auto& [name, check] : checks) {
    names.push_back(name);
    EXPECT_EQ(check["status"], "ok") << check.dump();
    EXPECT_EQ(check["fix"], "") << check.dump();
  }
  EXPECT_THAT(names,
              ::testing::UnorderedElementsAre(
                  "config", "home", "runs schema", "memory schema", "traces schema", "lesson queue",
                  "provider", "api key", "endpoint", "agent", "instructions", "agent programs"));
  EXPECT_EQ(checks.at("api key")["detail"], "present (env MEND_API_KEY)");
  EXPECT_EQ(checks.at("endpoint")["detail"], server_->base_url() + "/v1/models answered 200");
  EXPECT_EQ(checks.at("provider")["detail"],
            "openai at " + server_->base_url() + ", model fake-model (env MEND_MODEL)");
  // The probe sent the key the way the provider does.
  ASSERT_EQ(server_->request_count(), 1u);
  EXPECT_EQ(server_->requests()[0].method, "GET");
  EXPECT_EQ(server_->requests()[0].Header("Authorization"), std::string("Bearer ") + kKey);

  ASSERT_EQ(Mend({"doctor", agent_}), 0) << out() << err();
  EXPECT_THAT(out(), StartsWith("ok    config          " + home_ + "/config.toml is not there"));
  EXPECT_THAT(out(), HasSubstr("\nok    agent programs  1 program found\n12 ok, 0 warn, 0 FAIL\n"));
  EXPECT_THAT(out(), Not(HasSubstr(kKey)));
}

TEST_F(DoctorCommandTest, AWrongKeyFailsWithAFix) {
  env_["MEND_API_KEY"] = "sk-not-the-right-key-000000";
  int code = -1;
  const auto checks = Checks({}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(err(), "mend: doctor: 1 check failed\n");
  const nlohmann::json& endpoint = checks.at("endpoint");
  EXPECT_EQ(endpoint["status"], "fail");
  EXPECT_EQ(endpoint["detail"], server_->base_url() + "/v1/models answered 401: key rejected");
  EXPECT_THAT(endpoint["fix"].get<std::string>(), HasSubstr("MEND_API_KEY or OPENAI_API_KEY"));
  EXPECT_EQ(checks.at("api key")["status"], "ok");
  EXPECT_THAT(out(), Not(HasSubstr("sk-not-the-right-key")));
}

TEST_F(DoctorCommandTest, AnthropicIsAskedWithItsOwnHeaders) {
  env_["MEND_PROVIDER"] = "anthropic";
  int code = -1;
  const auto checks = Checks({}, &code);
  EXPECT_EQ(code, 0) << out();
  EXPECT_EQ(checks.at("endpoint")["detail"], server_->base_url() + "/v1/models answered 200");
  ASSERT_EQ(server_->request_count(), 1u);
  const auto request = server_->requests()[0];
  EXPECT_EQ(request.Header("x-api-key"), kKey);
  EXPECT_EQ(request.Header("anthropic-version"), "2023-06-01");
  EXPECT_EQ(request.Header("Authorization"), "");
}

TEST_F(DoctorCommandTest, AnEndpointThatIsNotThereFails) {
  std::string closed;
  {
    auto gone = FakeLlmServer::Start();
    ASSERT_THAT(gone, IsOk());
    closed = (*gone)->base_url();
  }  // stopped: nothing listens on its port any more
  env_["MEND_BASE_URL"] = closed;
  int code = -1;
  const auto checks = Checks({}, &code);
  EXPECT_EQ(code, 1);
  const nlohmann::json& endpoint = checks.at("endpoint");
  EXPECT_EQ(endpoint["status"], "fail");
  EXPECT_THAT(endpoint["detail"].get<std::string>(),
              StartsWith("unreachable: GET " + closed + "/v1/models: "));
  EXPECT_THAT(endpoint["fix"].get<std::string>(), HasSubstr("provider.base_url (" + closed + ")"));
}

TEST_F(DoctorCommandTest, OfflineAsksNoEndpoint) {
  int code = -1;
  const auto checks = Checks({"--offline"}, &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(checks.at("endpoint")["detail"], "not checked (--offline)");
  EXPECT_EQ(server_->request_count(), 0u);
}

TEST_F(DoctorCommandTest, ACorruptConfigFileFailsNamingFileAndLine) {
  Write(home_ + "/config.toml", "[log]\nlevel = \"info\"\nthis is not toml\n");
  int code = -1;
  const auto checks = Checks({"--offline"}, &code);
  EXPECT_EQ(code, 1);
  const nlohmann::json& config = checks.at("config");
  EXPECT_EQ(config["status"], "fail");
  EXPECT_THAT(config["detail"].get<std::string>(), HasSubstr(home_ + "/config.toml:3:"));
  EXPECT_THAT(config["fix"].get<std::string>(), HasSubstr("docs/configuration.md"));
}

TEST_F(DoctorCommandTest, AConfigFileOthersMayReadIsAWarning) {
  Write(home_ + "/config.toml", "[provider]\ntimeout = \"90s\"\n");
  ASSERT_EQ(::chmod((home_ + "/config.toml").c_str(), 0644), 0);
  int code = -1;
  const auto checks = Checks({"--offline"}, &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(checks.at("config")["status"], "warn");
  EXPECT_EQ(checks.at("config")["fix"], "chmod 600 " + home_ + "/config.toml: it may hold keys");
}

TEST_F(DoctorCommandTest, ASchemaFromANewerMendFails) {
  Sql(home_ + "/mend.db", "UPDATE meta SET value = '99' WHERE key = 'store.schema_version'");
  int code = -1;
  const auto checks = Checks({"--offline"}, &code);
  EXPECT_EQ(code, 1);
  const nlohmann::json& runs = checks.at("runs schema");
  EXPECT_EQ(runs["status"], "fail");
  EXPECT_THAT(runs["detail"].get<std::string>(),
              StartsWith(home_ + "/mend.db: version 99, written by a newer mend"));
  EXPECT_THAT(runs["fix"].get<std::string>(), StartsWith("upgrade mend"));
  EXPECT_EQ(checks.at("memory schema")["status"], "ok");
}

TEST_F(DoctorCommandTest, ADatabaseThatIsNoDatabaseFailsNamingTheFile) {
  ASSERT_EQ(::unlink((home_ + "/observe.db").c_str()), 0);
  Write(home_ + "/observe.db", std::string(4096, 'x'));
  int code = -1;
  const auto checks = Checks({"--offline"}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(checks.at("traces schema")["status"], "fail");
  EXPECT_THAT(checks.at("traces schema")["detail"].get<std::string>(),
              StartsWith(home_ + "/observe.db: "));
}

TEST_F(DoctorCommandTest, AnOlderSchemaAsksForMigrate) {
  Sql(home_ + "/observe.db", "UPDATE meta SET value = '1' WHERE key = 'schema_version'");
  int code = -1;
  const auto checks = Checks({"--offline"}, &code);
  EXPECT_EQ(code, 0);
  EXPECT_EQ(checks.at("traces schema")["status"], "warn");
  EXPECT_EQ(checks.at("traces schema")["fix"], "run `mend migrate`");
}

TEST_F(DoctorCommandTest, DeadLettersAndCorruptRecordsWarnAndStayWhereTheyAre) {
  WriteDeadLetter();
  const std::string corrupt = home_ + "/reflexion/wal/0123456789abcdef.wal";
  Write(corrupt, "LSN1 torn");
  // As a running `mend serve` would: the owner lock is held while the doctor reads the queue.
  auto lock = fs_.Lock(home_ + "/reflexion/owner.lock");
  ASSERT_THAT(lock, IsOk());

  int code = -1;
  const auto checks = Checks({"--offline"}, &code);
  EXPECT_EQ(code, 0);
  const nlohmann::json& queue = checks.at("lesson queue");
  EXPECT_EQ(queue["status"], "warn");
  EXPECT_EQ(queue["detail"],
            home_ + "/reflexion: 0 jobs pending, 1 dead-lettered, 1 corrupt record");
  EXPECT_THAT(queue["fix"].get<std::string>(), StartsWith("`mend reflect failed` shows why"));
  EXPECT_TRUE(fs_.Exists(corrupt));
  ASSERT_EQ(Mend({"reflect", "failed", "--json"}), 0) << err();
  EXPECT_EQ(Json()["dlq"].size(), 1u);
}

TEST_F(DoctorCommandTest, ABrokenAgentFolderFailsWithTheLoadersMessage) {
  Write(agent_ + "/agent.toml", "name = \"notes\"\ntools = [\"read_file\"]\nmodle = \"x\"\n");
  Write(agent_ + "/instructions.md", "Take notes.\n");
  const Status loaded = agent::LoadAgentFolder(fs_, agent_).status();
  ASSERT_EQ(loaded.code(), StatusCode::kInvalidArgument);
  int code = -1;
  const auto checks = Checks({agent_, "--offline"}, &code);
  EXPECT_EQ(code, 1);
  const nlohmann::json& agent = checks.at("agent");
  EXPECT_EQ(agent["status"], "fail");
  EXPECT_EQ(agent["detail"], std::string(loaded.message()));
  EXPECT_THAT(agent["detail"].get<std::string>(), HasSubstr("agent.toml:3"));
  EXPECT_THAT(agent["fix"].get<std::string>(), HasSubstr("docs/agent_folder.md"));
  EXPECT_FALSE(checks.contains("instructions"));
}

TEST_F(DoctorCommandTest, AToolScriptThatCannotRunFails) {
  ASSERT_EQ(Mend({"init", agent_, "--template", "research"}), 0) << err();
  ASSERT_EQ(::chmod((agent_ + "/tools/search.sh").c_str(), 0600), 0);
  int code = -1;
  const auto checks = Checks({agent_, "--offline"}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(checks.at("agent programs")["detail"],
            "tools/search.toml: " + agent_ + "/tools/search.sh is not an executable file");
}

TEST_F(DoctorCommandTest, NoModelFailsUnlessTheAgentNamesOne) {
  env_.erase("MEND_MODEL");
  int code = -1;
  auto checks = Checks({"--offline"}, &code);
  EXPECT_EQ(code, 1);
  EXPECT_EQ(checks.at("provider")["status"], "fail");
  EXPECT_THAT(checks.at("provider")["fix"].get<std::string>(), StartsWith("set MEND_MODEL"));

  Write(agent_ + "/agent.toml", "name = \"notes\"\nmodel = \"fake-model-large\"\ntools = []\n");
  Write(agent_ + "/instructions.md", "Take notes.\n");
  checks = Checks({agent_, "--offline"}, &code);
  EXPECT_EQ(code, 0) << out();
  EXPECT_EQ(checks.at("provider")["detail"],
            "openai at " + server_->base_url() + ", model fake-model-large (agent.toml)");
}

TEST_F(DoctorCommandTest, AHomeOthersCanReadIsAWarningWithItsFix) {
  ASSERT_EQ(::chmod(home_.c_str(), 0755), 0);
  ASSERT_EQ(Mend({"doctor", "--offline"}), 0) << err();
  // Names are padded to the longest, "memory schema"; a fix goes under the detail.
  EXPECT_THAT(out(), HasSubstr("\nwarn  home           " + home_ +
                               ": group or others have access (mode 0755)\n" +
                               std::string(21, ' ') + "fix: chmod 700 " + home_ +
                               ": runs, lessons and traces may hold secrets\n"));
  EXPECT_THAT(out(), HasSubstr("\n8 ok, 1 warn, 0 FAIL\n"));
  EXPECT_EQ(err(), "");
}

}  // namespace
}  // namespace mend::cli
