// Which model a run records and continues with, and which missing settings are configuration
// errors (exit 2) before any run exists.
#include "mend/app/run_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "mend/app/recovery.h"
#include "mend/app/runtime.h"
#include "mend/heal/recovery.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::Not;

class RunModelTest : public AgentHomeTest {
 protected:
  // A runtime whose configuration comes from `flags` and `env` (the provider is built on demand).
  std::unique_ptr<Runtime> Open(std::map<std::string, std::string> flags,
                                std::map<std::string, std::string> env = {}) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = dir_ + "/home";
    sources.env = std::move(env);
    Result<Config> config = LoadConfig(sources, *env_.fs);
    EXPECT_THAT(config, IsOk());
    RuntimeOptions options;
    options.event_log = EventLog::kNone;
    auto runtime = OpenRuntime(config.value_or(Config({})), env_, std::move(options));
    EXPECT_THAT(runtime, IsOk());
    return runtime.ok() ? std::move(runtime).value() : nullptr;
  }

  static agent::RunOrigin Recorded(agent::RunModel model) {
    agent::RunOrigin origin;
    origin.model = std::move(model);
    return origin;
  }
};

TEST_F(RunModelTest, ANewRunTakesTheFolderModelUnlessAFlagNamesOne) {
  agent::AgentSpec spec;
  spec.model = "folder-model";
  auto from_env = Open({}, {{"MEND_PROVIDER", "openai"}, {"MEND_MODEL", "env-model"}});
  EXPECT_EQ(NewRunModel(*from_env, spec).model, "folder-model");
  auto from_flag = Open({{"provider.name", "openai"}, {"provider.model", "flag-model"}});
  EXPECT_EQ(NewRunModel(*from_flag, spec).model, "flag-model");
  EXPECT_EQ(NewRunModel(*from_flag, {}).provider, "openai");
}

TEST_F(RunModelTest, AResumedRunKeepsItsRecordedModelOverTheEnvironment) {
  auto runtime = Open({}, {{"MEND_PROVIDER", "anthropic"},
                           {"MEND_MODEL", "env-model"},
                           {"MEND_BASE_URL", "http://env:1"}});
  const agent::RunModel recorded{"openai", "http://run:2", "run-model", ""};
  EXPECT_EQ(RunModelFor(*runtime, {}, Recorded(recorded)), recorded);
}

TEST_F(RunModelTest, FlagsOverrideWhatTheRunRecorded) {
  const agent::RunModel recorded{"openai", "http://run:2", "run-model", ""};
  auto model_flag = Open({{"provider.model", "flag-model"}});
  EXPECT_EQ(RunModelFor(*model_flag, {}, Recorded(recorded)),
            (agent::RunModel{"openai", "http://run:2", "flag-model", ""}));
  auto url_flag = Open({{"provider.base_url", "http://flag:3"}});
  EXPECT_EQ(RunModelFor(*url_flag, {}, Recorded(recorded)).base_url, "http://flag:3");
  // Another provider: the recorded URL and model belonged to the old one.
  auto provider_flag = Open({{"provider.name", "anthropic"}}, {{"MEND_MODEL", "env-model"}});
  EXPECT_EQ(RunModelFor(*provider_flag, {}, Recorded(recorded)),
            (agent::RunModel{"anthropic", "", "env-model", ""}));
}

// `mend recover` and `mend serve`: their flags are defaults for new runs, and a run they continue
// keeps what it recorded, endpoint included, unless --override-recorded (kEveryRun).
TEST_F(RunModelTest, UnderNewRunsOnlyTheFlagsLeaveARecordedRunAlone) {
  const agent::RunModel recorded{"openai", "http://run:2", "run-model", ""};
  auto daemon = Open({{"provider.name", "anthropic"},
                      {"provider.model", "flag-model"},
                      {"provider.base_url", "http://flag:3"}});
  daemon->provider_flag_scope = ProviderFlagScope::kNewRunsOnly;
  EXPECT_EQ(RunModelFor(*daemon, {}, Recorded(recorded)), recorded);
  EXPECT_EQ(NewRunModel(*daemon, {}),
            (agent::RunModel{"anthropic", "http://flag:3", "flag-model", ""}));
  store::RunRecord run;
  run.id = "r1";
  run.metadata = R"({"model":{"name":"openai","base_url":"http://run:2","model":"run-model"}})";
  RuntimeRunDriver driver(*daemon);
  EXPECT_EQ(driver.EndpointFor(run), (heal::ProviderEndpoint{"openai", "http://run:2"}));

  daemon->provider_flag_scope = ProviderFlagScope::kEveryRun;
  EXPECT_EQ(RunModelFor(*daemon, {}, Recorded(recorded)).provider, "anthropic");
  EXPECT_EQ(driver.EndpointFor(run), (heal::ProviderEndpoint{"anthropic", "http://flag:3"}));
}

TEST_F(RunModelTest, ARunThatRecordedNothingGetsTheNewRunModel) {
  auto runtime = Open({}, {{"MEND_PROVIDER", "openai"}, {"MEND_MODEL", "env-model"}});
  EXPECT_EQ(RunModelFor(*runtime, {}, {}), NewRunModel(*runtime, {}));
}

TEST_F(RunModelTest, AMissingModelOrScriptIsAConfigurationError) {
  auto runtime = Open({});
  const Status no_model = CheckRunModel(*runtime, {"openai", "", "", ""});
  EXPECT_THAT(no_model, StatusIs(StatusCode::kInvalidArgument, HasSubstr("provider.model")));
  EXPECT_EQ(no_model.detail_code(), kConfigInvalidDetail);
  EXPECT_THAT(CheckRunModel(*runtime, {"anthropic", "", "", ""}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("MEND_MODEL")));
  EXPECT_THAT(CheckRunModel(*runtime, {"scripted", "", "", ""}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("provider.script_file")));
  EXPECT_THAT(CheckRunModel(*runtime, {"ollama", "", "m", ""}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("provider.name \"ollama\"")));
  MEND_EXPECT_OK(CheckRunModel(*runtime, {"openai", "", "gpt-x", ""}));
  // ProviderFor reports the same error before building anything.
  EXPECT_THAT(ProviderFor(*runtime, {"openai", "", "", ""}),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("provider.model")));
}

TEST_F(RunModelTest, ARecordedProviderOtherThanTheConfiguredOneIsBuiltAndKept) {
  auto runtime = Open({}, {{"MEND_PROVIDER", "openai"},
                           {"MEND_MODEL", "m"},
                           {"ANTHROPIC_API_KEY", "sk-ant-of-this-machine"}});
  Result<llm::LlmProvider*> configured = ProviderFor(*runtime, {"openai", "", "m", ""});
  ASSERT_THAT(configured, IsOk());
  EXPECT_EQ(*configured, runtime->provider.get());
  Result<llm::LlmProvider*> other = ProviderFor(*runtime, {"anthropic", "http://h:1", "c", ""});
  ASSERT_THAT(other, IsOk());
  EXPECT_NE(*other, runtime->provider.get());
  EXPECT_EQ((*other)->name(), "anthropic");
  EXPECT_EQ(*ProviderFor(*runtime, {"anthropic", "http://h:1", "d", ""}), *other);
}

TEST_F(RunModelTest, AnotherProviderAtAnotherHostWithoutItsOwnKeyIsNotConfigured) {
  auto runtime = Open({}, {{"MEND_PROVIDER", "openai"},
                           {"MEND_MODEL", "m"},
                           {"MEND_API_KEY", "sk-openai-secret-1234"}});

  Result<llm::LlmProvider*> other =
      ProviderFor(*runtime, {"anthropic", "https://api.anthropic.example", "c", ""});

  EXPECT_THAT(other, StatusIs(StatusCode::kFailedPrecondition, HasSubstr("ANTHROPIC_API_KEY")));
  EXPECT_EQ(other.status().detail_code(), heal::kProviderNotConfiguredDetail);
  EXPECT_THAT(other.status().message(), Not(HasSubstr("sk-openai-secret-1234")));
  // Its public endpoint too; a server on this machine needs no key.
  EXPECT_THAT(ProviderFor(*runtime, {"anthropic", "", "c", ""}),
              StatusIs(StatusCode::kFailedPrecondition, HasSubstr("its public endpoint")));
  EXPECT_THAT(ProviderFor(*runtime, {"anthropic", "http://127.0.0.1:9", "c", ""}), IsOk());
}

TEST_F(RunModelTest, AnotherProvidersKeyComesFromItsOwnVariableOrConfigKey) {
  auto from_env = Open({}, {{"MEND_PROVIDER", "anthropic"},
                            {"MEND_MODEL", "c"},
                            {"OPENAI_API_KEY", "sk-openai-of-this-machine"}});
  EXPECT_THAT(ProviderFor(*from_env, {"openai", "https://api.openai.example", "m", ""}), IsOk());
  auto from_flag = Open({{"provider.anthropic_api_key", "sk-ant-from-config"}},
                        {{"MEND_PROVIDER", "openai"}, {"MEND_MODEL", "m"}});
  EXPECT_THAT(ProviderFor(*from_flag, {"anthropic", "https://api.anthropic.example", "c", ""}),
              IsOk());
}

}  // namespace
}  // namespace mend::app
