// The proxy's options from the configuration (mend/app/proxy.h): the upstream and its kind from
// the provider when not set, the key, the client tokens and their scopes, bad values named.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <string>

#include "mend/app/proxy.h"
#include "mend/app/runtime.h"
#include "mend/base/config.h"
#include "mend/base/hash.h"
#include "tests/app/agent_home_test.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

class ProxyWiringTest : public AgentHomeTest {
 protected:
  std::unique_ptr<Runtime> Open(std::map<std::string, std::string> env) {
    ConfigSources sources;
    sources.flags["home"] = dir_ + "/home";
    sources.env = std::move(env);
    Result<Config> config = LoadConfig(sources, *env_.fs);
    EXPECT_THAT(config, IsOk());
    if (!config.ok()) return nullptr;
    RuntimeOptions options;
    options.event_log = EventLog::kNone;
    Result<std::unique_ptr<Runtime>> runtime = OpenRuntime(*config, env_, std::move(options));
    EXPECT_THAT(runtime, IsOk());
    return runtime.ok() ? std::move(runtime).value() : nullptr;
  }
};

TEST_F(ProxyWiringTest, TheUpstreamComesFromTheProviderInTheFormItsSdkTakes) {
  struct Case {
    std::map<std::string, std::string> env;
    std::string upstream;
    proxy::UpstreamKind kind;
  };
  const Case cases[] = {
      {{}, "https://api.openai.com/v1", proxy::UpstreamKind::kOpenAi},
      {{{"MEND_PROVIDER", "anthropic"}},
       "https://api.anthropic.com",
       proxy::UpstreamKind::kAnthropic},
      {{{"MEND_BASE_URL", "http://127.0.0.1:11434"}},
       "http://127.0.0.1:11434/v1",
       proxy::UpstreamKind::kOpenAi},
      {{{"MEND_BASE_URL", "http://127.0.0.1:11434/v1/"}},
       "http://127.0.0.1:11434/v1",
       proxy::UpstreamKind::kOpenAi},
      {{{"MEND_PROVIDER", "anthropic"}, {"MEND_BASE_URL", "http://10.0.0.2:8080/v1"}},
       "http://10.0.0.2:8080",
       proxy::UpstreamKind::kAnthropic},
      {{{"MEND_PROVIDER", "scripted"}}, "https://api.openai.com/v1", proxy::UpstreamKind::kOpenAi},
      {{{"MEND_PROXY_UPSTREAM", "https://openrouter.ai/api/v1"},
        {"MEND_PROXY_UPSTREAM_KIND", "openai"},
        {"MEND_PROVIDER", "anthropic"}},
       "https://openrouter.ai/api/v1",
       proxy::UpstreamKind::kOpenAi},
  };
  for (const Case& c : cases) {
    std::unique_ptr<Runtime> runtime = Open(c.env);
    ASSERT_NE(runtime, nullptr);
    Result<proxy::ProxyOptions> options = ProxyOptionsOf(*runtime);
    ASSERT_THAT(options, IsOk());
    EXPECT_EQ(options->upstream, c.upstream);
    EXPECT_EQ(options->upstream_kind, c.kind);
  }
}

TEST_F(ProxyWiringTest, KeysTokensAndScopes) {
  std::unique_ptr<Runtime> runtime =
      Open({{"MEND_API_KEY", "sk-provider"},
            {"MEND_PROXY_TOKEN", "single"},
            {"MEND_PROXY_TOKENS", "tok-a=team-a\ntok-b\n\ntok-a=elsewhere"},
            {"MEND_PROXY_STOP_AFTER", "4"},
            {"MEND_HEAL_PROGRESS_HINT_AFTER", "3"}});
  ASSERT_NE(runtime, nullptr);
  Result<proxy::ProxyOptions> options = ProxyOptionsOf(*runtime);
  ASSERT_THAT(options, IsOk());
  EXPECT_EQ(options->upstream_api_key, "sk-provider");
  ASSERT_EQ(options->tokens.size(), 3u);
  EXPECT_EQ(options->tokens[0].token, "single");
  EXPECT_EQ(options->tokens[0].workspace, "");
  EXPECT_EQ(options->tokens[1].workspace, "team-a");
  // A bare token is a scope of its own, never the default one.
  EXPECT_EQ(options->tokens[2].workspace, "proxy-" + Sha256Hex("tok-b").substr(0, 12));
  EXPECT_EQ(options->stop_after, 4);
  EXPECT_EQ(options->hint_after, 3);

  std::unique_ptr<Runtime> own =
      Open({{"MEND_API_KEY", "sk-provider"}, {"MEND_PROXY_UPSTREAM_API_KEY", "sk-upstream"}});
  EXPECT_EQ(ProxyOptionsOf(*own)->upstream_api_key, "sk-upstream");
}

TEST_F(ProxyWiringTest, BadValuesNameTheirKey) {
  std::unique_ptr<Runtime> kind = Open({{"MEND_PROXY_UPSTREAM_KIND", "gemini"}});
  EXPECT_THAT(ProxyOptionsOf(*kind),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("proxy.upstream_kind")));
  std::unique_ptr<Runtime> token = Open({{"MEND_PROXY_TOKENS", "=team"}});
  EXPECT_THAT(ProxyOptionsOf(*token),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("proxy.tokens")));
  std::unique_ptr<Runtime> pattern = Open({{"MEND_PROXY_FAILURE_PATTERNS", "(unclosed"}});
  EXPECT_THAT(OpenProxy(*pattern),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("proxy.failure_patterns")));
  std::unique_ptr<Runtime> url = Open({{"MEND_PROXY_UPSTREAM", "ftp://files"}});
  EXPECT_THAT(OpenProxy(*url), StatusIs(StatusCode::kInvalidArgument, HasSubstr("http")));
}

TEST_F(ProxyWiringTest, ServeMountsTheProxyOnlyWithAnUpstream) {
  EXPECT_FALSE(ServeMountsProxy(*Open({})));
  EXPECT_TRUE(ServeMountsProxy(*Open({{"MEND_PROXY_UPSTREAM", "http://127.0.0.1:1/v1"}})));
}

TEST_F(ProxyWiringTest, OpenProxyKeepsConversationsInTheHomesDatabase) {
  std::unique_ptr<Runtime> runtime = Open({});
  Result<std::unique_ptr<Proxy>> proxy = OpenProxy(*runtime);
  ASSERT_THAT(proxy, IsOk());
  EXPECT_TRUE(std::filesystem::exists(dir_ + "/home/mend.db"));
}

}  // namespace
}  // namespace mend::app
