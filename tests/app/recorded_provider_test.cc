// A run continued by another process (recovery) talks to the provider it recorded with that
// provider's own key: the configured provider's key never goes to another provider, and a run
// whose provider this process has no key for is left to a process that has one, with a clear
// last error and no attempt charged.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "mend/app/daemon.h"
#include "mend/app/run_model.h"
#include "mend/app/runtime.h"
#include "mend/heal/recovery.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/fake_llm_server.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::FakeLlmServer;
using ::mend::testing::FakeResponse;
using ::mend::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr char kOpenAiKey[] = "sk-openai-ONLY-FOR-OPENAI-7301";
constexpr char kAnthropicKey[] = "sk-ant-ONLY-FOR-ANTHROPIC-5519";
constexpr char kTask[] = "Summarise the incident report.";

FakeResponse Text(std::string text) {
  FakeResponse response;
  response.text = std::move(text);
  return response;
}

FakeResponse Unavailable() {
  FakeResponse response;
  response.status = 503;
  response.error_message = "scripted outage";
  return response;
}

class RecordedProviderTest : public AgentHomeTest {
 protected:
  void SetUp() override {
    AgentHomeTest::SetUp();
    auto openai = FakeLlmServer::Start();
    MEND_ASSERT_OK(openai);
    openai_ = std::move(openai).value();
    openai_->RequireApiKey(kOpenAiKey);
    auto anthropic = FakeLlmServer::Start();
    MEND_ASSERT_OK(anthropic);
    anthropic_ = std::move(anthropic).value();
    anthropic_->RequireApiKey(kAnthropicKey);
  }
  void TearDown() override {
    daemons_.clear();
    runtimes_.clear();
    AgentHomeTest::TearDown();
  }

  Runtime& Open(std::map<std::string, std::string> flags) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = dir_ + "/home";
    sources.flags["provider.retries"] = "0";
    sources.flags["provider.connect_timeout"] = "100ms";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    EXPECT_THAT(config, IsOk());
    RuntimeOptions options;
    options.event_log = EventLog::kNone;
    auto runtime = OpenRuntime(*config, env_, std::move(options));
    EXPECT_THAT(runtime, IsOk());
    runtimes_.push_back(std::move(runtime).value());
    return *runtimes_.back();
  }

  // A process configured for Anthropic at `base_url`, as the one that started the run.
  Runtime& OpenAnthropic(const std::string& base_url) {
    return Open({{"provider.name", "anthropic"},
                 {"provider.base_url", base_url},
                 {"provider.model", "claude-test"},
                 {"provider.api_key", kAnthropicKey}});
  }

  // A process configured for OpenAI, with `more` flags (another provider's key, say).
  Runtime& OpenOpenAi(std::map<std::string, std::string> more = {}) {
    more["provider.name"] = "openai";
    more["provider.base_url"] = openai_->base_url();
    more["provider.model"] = "gpt-test";
    more["provider.api_key"] = kOpenAiKey;
    return Open(std::move(more));
  }

  // Starts a run on `runtime` that fails on a provider error, so that recovery takes it up.
  std::string FailedRun(Runtime& runtime) {
    auto agent = OpenAgent(runtime, agent_dir_);
    EXPECT_THAT(agent, IsOk());
    if (!agent.ok()) return "";
    auto result = (*agent)->Send(kTask);
    EXPECT_THAT(result, IsOk());
    if (!result.ok()) return "";
    EXPECT_EQ(result->status, store::RunStatus::kFailed);
    return result->run_id;
  }

  // One pass of the recovery loop, as `mend recover` runs it (its flags are for new runs only).
  heal::TickReport Tick(Runtime& runtime) {
    runtime.provider_flag_scope = ProviderFlagScope::kNewRunsOnly;
    auto daemon = Daemon::Create(runtime, DaemonOptions{});
    EXPECT_THAT(daemon, IsOk());
    if (!daemon.ok()) return {};
    daemons_.push_back(std::move(daemon).value());
    auto report = daemons_.back()->Tick();
    EXPECT_THAT(report, IsOk());
    return report.ok() ? *report : heal::TickReport{};
  }

  store::RunRecord RunOf(Runtime& runtime, const std::string& id) {
    auto run = runtime.store->GetRun(id);
    EXPECT_THAT(run, IsOk());
    return run.ok() ? *run : store::RunRecord{};
  }

  std::unique_ptr<FakeLlmServer> openai_, anthropic_;
  std::vector<std::unique_ptr<Runtime>> runtimes_;
  std::vector<std::unique_ptr<Daemon>> daemons_;
};

TEST_F(RecordedProviderTest, ARecoveredRunIsSentWithTheKeyOfTheProviderItRecorded) {
  anthropic_->Enqueue(Unavailable());
  const std::string id = FailedRun(OpenAnthropic(anthropic_->base_url()));
  ASSERT_FALSE(id.empty());
  anthropic_->Enqueue(Text("The report says the disk filled up."));
  // A daemon configured for OpenAI, which also holds an Anthropic key.
  Runtime& daemon = OpenOpenAi({{"provider.anthropic_api_key", kAnthropicKey}});

  heal::TickReport report = Tick(daemon);

  EXPECT_THAT(report.completed, ::testing::ElementsAre(id));
  EXPECT_EQ(RunOf(daemon, id).status, store::RunStatus::kCompleted);
  // Both Anthropic requests carried the Anthropic key (the server refuses any other with 401),
  // and the OpenAI endpoint was never asked.
  ASSERT_EQ(anthropic_->requests().size(), 2u);
  EXPECT_EQ(anthropic_->requests()[1].Header("x-api-key"), kAnthropicKey);
  EXPECT_THAT(openai_->requests(), IsEmpty());
}

TEST_F(RecordedProviderTest, TheConfiguredKeyNeverGoesToAnotherProvider) {
  anthropic_->Enqueue(Unavailable());
  const std::string id = FailedRun(OpenAnthropic(anthropic_->base_url()));
  ASSERT_FALSE(id.empty());
  anthropic_->Enqueue(Text("unused"));
  // A daemon configured for OpenAI only. The run's endpoint is on this machine, where a server
  // may need no key: it is asked without one, never with the OpenAI key.
  Runtime& daemon = OpenOpenAi();

  Tick(daemon);

  ASSERT_EQ(anthropic_->requests().size(), 2u);
  EXPECT_EQ(anthropic_->requests()[1].Header("x-api-key"), "");
  EXPECT_THAT(anthropic_->requests()[1].Header("authorization"), Not(HasSubstr(kOpenAiKey)));
  EXPECT_THAT(openai_->requests(), IsEmpty());
}

TEST_F(RecordedProviderTest, ARunOfAProviderNotConfiguredHereIsLeftWithAClearLastError) {
  // Recorded at a host that is not this machine (unreachable: the run fails on connecting).
  const std::string remote = "http://192.0.2.1:9";
  const std::string id = FailedRun(OpenAnthropic(remote));
  ASSERT_FALSE(id.empty());
  Runtime& daemon = OpenOpenAi();
  const store::RunRecord before = RunOf(daemon, id);

  heal::TickReport report = Tick(daemon);

  EXPECT_EQ(report.skipped.unconfigured, 1);
  EXPECT_THAT(report.resumed, IsEmpty());
  const store::RunRecord after = RunOf(daemon, id);
  EXPECT_EQ(after.status, store::RunStatus::kFailed);
  EXPECT_EQ(after.attempts, before.attempts);
  EXPECT_EQ(after.epoch, before.epoch);  // never claimed
  ASSERT_TRUE(after.last_error.has_value());
  EXPECT_EQ(after.last_error->code, heal::kProviderNotConfiguredDetail);
  EXPECT_TRUE(after.last_error->retryable);
  EXPECT_THAT(after.last_error->message, HasSubstr("anthropic at " + remote));
  EXPECT_THAT(after.last_error->message, HasSubstr("ANTHROPIC_API_KEY"));
  EXPECT_THAT(after.last_error->message, Not(HasSubstr(kOpenAiKey)));
  EXPECT_THAT(openai_->requests(), IsEmpty());

  // The next pass says the same and writes nothing again.
  EXPECT_EQ(Tick(daemon).skipped.unconfigured, 1);
  EXPECT_EQ(RunOf(daemon, id).updated_at, after.updated_at);

  // A process that has the key takes the run up (and finds the host still unreachable).
  Runtime& keyed = OpenOpenAi({{"provider.anthropic_api_key", kAnthropicKey}});
  heal::TickReport taken = Tick(keyed);
  EXPECT_EQ(taken.skipped.unconfigured, 0);
  EXPECT_THAT(taken.resumed, ::testing::ElementsAre(id));
  EXPECT_NE(RunOf(keyed, id).last_error->code, heal::kProviderNotConfiguredDetail);
}

}  // namespace
}  // namespace mend::app
