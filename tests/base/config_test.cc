#include "mend/base/config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <string>

#include "mend/base/file_system.h"
#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using testing::StatusIs;

constexpr char kHome[] = "/h/.mend";
constexpr char kConfigPath[] = "/h/.mend/config.toml";

class ConfigTest : public ::testing::Test {
 protected:
  ConfigTest() { sources_.user_home = "/h"; }

  void WriteConfig(const std::string& text) {
    MEND_ASSERT_OK(fs_.CreateDirs(kHome));
    MEND_ASSERT_OK(WriteFileAtomically(fs_, kConfigPath, text));
  }

  Result<Config> Load() { return LoadConfig(sources_, fs_); }

  MemoryFileSystem fs_;
  ConfigSources sources_;
};

TEST_F(ConfigTest, DefaultsWithoutAnySource) {
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetString("home"), kHome);
  EXPECT_EQ(config->GetString("provider.name"), "openai");
  EXPECT_EQ(config->GetDuration("provider.timeout"), std::chrono::minutes(2));
  EXPECT_EQ(config->GetInt("reflexion.queue.workers"), 2);
  EXPECT_DOUBLE_EQ(config->GetDouble("reflexion.queue.jitter"), 0.2);
  EXPECT_FALSE(config->GetBool("reflexion.on_low_quality"));
  EXPECT_EQ(config->GetString("reflexion.queue.base_dir"), "/h/.mend/reflexion");
  for (const ConfigValue& v : config->values()) {
    EXPECT_EQ(v.source, ConfigSource::kDefault) << v.key;
    EXPECT_EQ(v.origin, "default") << v.key;
  }
}

TEST_F(ConfigTest, EveryDefaultOfTheSchemaIsValid) {
  MEND_ASSERT_OK(Load());
  EXPECT_EQ(Load()->values().size(), DefaultConfigSchema().size());
}

TEST_F(ConfigTest, MemoryKeysHaveTheirDefaults) {
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_TRUE(config->GetBool("memory.enabled"));
  EXPECT_EQ(config->GetInt("memory.max_facts"), 5);
  EXPECT_EQ(config->GetInt("memory.budget_chars"), 4000);
  EXPECT_FALSE(config->GetBool("memory.hyde"));
  EXPECT_EQ(config->GetString("memory.embeddings.url"), "");
  EXPECT_EQ(config->GetString("memory.embeddings.model"), "text-embedding-3-small");
  EXPECT_EQ(config->GetString("memory.embeddings.api_key"), "");
}

TEST_F(ConfigTest, MemoryKeysComeFromTheEnvironmentAndTheKeyIsMasked) {
  sources_.env = {{"MEND_MEMORY_ENABLED", "false"},
                  {"MEND_MEMORY_MAX_FACTS", "7"},
                  {"MEND_MEMORY_HYDE", "on"},
                  {"MEND_EMBEDDINGS_URL", "http://user:pw@127.0.0.1:9/v1"},
                  {"MEND_EMBEDDINGS_API_KEY", "emb-secret-0123456789"}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_FALSE(config->GetBool("memory.enabled"));
  EXPECT_EQ(config->GetInt("memory.max_facts"), 7);
  EXPECT_TRUE(config->GetBool("memory.hyde"));
  EXPECT_EQ(DisplayValue(*config->Find("memory.embeddings.api_key")), "****6789");
  EXPECT_THAT(DisplayValue(*config->Find("memory.embeddings.url")), Not(HasSubstr("pw")));
}

TEST_F(ConfigTest, MemoryMaxFactsOutOfRangeIsRejected) {
  sources_.env = {{"MEND_MEMORY_MAX_FACTS", "51"}};
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument, HasSubstr("memory.max_facts")));
}

TEST_F(ConfigTest, FlagBeatsEnvBeatsFileBeatsDefault) {
  WriteConfig(
      "[provider]\n"
      "model = \"file-model\"\n"
      "timeout = \"40s\"\n"
      "connect_timeout = \"3s\"\n"
      "base_url = \"http://file\"\n");
  sources_.env = {
      {"MEND_MODEL", "env-model"}, {"MEND_TIMEOUT", "50s"}, {"MEND_BASE_URL", "http://env"}};
  sources_.flags = {{"provider.model", "flag-model"}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);

  const ConfigValue* model = config->Find("provider.model");
  EXPECT_EQ(model->text, "flag-model");
  EXPECT_EQ(model->source, ConfigSource::kFlag);
  EXPECT_EQ(model->origin, "flag --model");

  const ConfigValue* timeout = config->Find("provider.timeout");
  EXPECT_EQ(config->GetDuration("provider.timeout"), seconds(50));
  EXPECT_EQ(timeout->source, ConfigSource::kEnv);
  EXPECT_EQ(timeout->origin, "env MEND_TIMEOUT");

  const ConfigValue* connect = config->Find("provider.connect_timeout");
  EXPECT_EQ(config->GetDuration("provider.connect_timeout"), seconds(3));
  EXPECT_EQ(connect->source, ConfigSource::kFile);
  EXPECT_EQ(connect->origin, "config.toml:4");

  EXPECT_EQ(config->Find("provider.name")->source, ConfigSource::kDefault);
  EXPECT_EQ(config->GetString("provider.base_url"), "http://env");
}

TEST_F(ConfigTest, HomeFromFlagDecidesWhichConfigFileIsRead) {
  MEND_ASSERT_OK(fs_.CreateDirs("/other"));
  MEND_ASSERT_OK(WriteFileAtomically(fs_, "/other/config.toml", "[provider]\nmodel = \"m2\"\n"));
  sources_.env = {{"MEND_HOME", "/nowhere"}};
  sources_.flags = {{"home", "/other"}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetString("home"), "/other");
  EXPECT_EQ(config->Find("home")->origin, "flag --home");
  EXPECT_EQ(config->GetString("provider.model"), "m2");
  EXPECT_EQ(config->GetString("reflexion.queue.base_dir"), "/other/reflexion");
}

TEST_F(ConfigTest, MendConfigNamesTheFileElsewhere) {
  MEND_ASSERT_OK(fs_.CreateDirs("/etc/mend"));
  MEND_ASSERT_OK(fs_.CreateDirs("/var/lib/mend"));
  MEND_ASSERT_OK(
      WriteFileAtomically(fs_, "/etc/mend/config.toml", "[provider]\nmodel = \"etc-model\"\n"));
  MEND_ASSERT_OK(WriteFileAtomically(fs_, "/var/lib/mend/config.toml",
                                     "[provider]\nmodel = \"home-model\"\n"));
  sources_.env = {{"MEND_HOME", "/var/lib/mend"}, {"MEND_CONFIG", "/etc/mend/config.toml"}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetString("provider.model"), "etc-model");
  EXPECT_EQ(config->GetString("config"), "/etc/mend/config.toml");
  EXPECT_EQ(config->Find("config")->origin, "env MEND_CONFIG");

  // Without it, the home's file; the key shows where that is.
  sources_.env = {{"MEND_HOME", "/var/lib/mend"}};
  config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetString("provider.model"), "home-model");
  EXPECT_EQ(config->GetString("config"), "/var/lib/mend/config.toml");
  EXPECT_EQ(config->Find("config")->source, ConfigSource::kDefault);
}

TEST_F(ConfigTest, AFileNamedByMendConfigMustExist) {
  sources_.env = {{"MEND_HOME", "/h"}, {"MEND_CONFIG", "/etc/mend/missing.toml"}};
  EXPECT_THAT(Load(), StatusIs(StatusCode::kFailedPrecondition,
                               HasSubstr("/etc/mend/missing.toml named by MEND_CONFIG")));
}

TEST_F(ConfigTest, ConfigCannotBeSetInTheFile) {
  MEND_ASSERT_OK(fs_.CreateDirs("/h"));
  MEND_ASSERT_OK(WriteFileAtomically(fs_, "/h/config.toml", "config = \"/elsewhere.toml\"\n"));
  sources_.env = {{"MEND_HOME", "/h"}};
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument, HasSubstr("config")));
}

TEST_F(ConfigTest, MissingUserHomeIsFailedPreconditionUnlessHomeIsGiven) {
  sources_.user_home.clear();
  EXPECT_THAT(Load(), StatusIs(StatusCode::kFailedPrecondition, HasSubstr("MEND_HOME")));
  sources_.env = {{"MEND_HOME", "/x"}};
  MEND_EXPECT_OK(Load());
}

TEST_F(ConfigTest, UserHomeFallsBackToEnvHome) {
  sources_.user_home.clear();
  sources_.env = {{"HOME", "/u"}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetString("home"), "/u/.mend");
}

TEST_F(ConfigTest, InvalidEnvDurationNamesKeySourceAndRange) {
  sources_.env = {{"MEND_TIMEOUT", "abc"}};
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument,
                               "invalid value for provider.timeout from environment MEND_TIMEOUT: "
                               "\"abc\" (expected a duration between 1s and 1h, e.g. 30s)"));
}

TEST_F(ConfigTest, DurationOutOfRangeIsInvalid) {
  sources_.flags = {{"provider.timeout", "2h"}};
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument,
                               AllOf(HasSubstr("provider.timeout"), HasSubstr("flag --timeout"),
                                     HasSubstr("between 1s and 1h"))));
}

TEST_F(ConfigTest, InvalidEnumNamesChoices) {
  sources_.env = {{"MEND_PROVIDER", "gemini"}};
  EXPECT_THAT(
      Load(),
      StatusIs(StatusCode::kInvalidArgument,
               AllOf(HasSubstr("provider.name"), HasSubstr("environment MEND_PROVIDER"),
                     HasSubstr("\"gemini\""), HasSubstr("one of openai, anthropic or scripted"))));
}

TEST_F(ConfigTest, EnumIsCaseInsensitive) {
  sources_.env = {{"MEND_PROVIDER", "Anthropic"}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetString("provider.name"), "anthropic");
}

TEST_F(ConfigTest, InvalidIntNamesRange) {
  sources_.env = {{"MEND_QUALITY_REFLEXION_QUEUE_WORKERS", "0"}};
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument,
                               AllOf(HasSubstr("reflexion.queue.workers"),
                                     HasSubstr("MEND_QUALITY_REFLEXION_QUEUE_WORKERS"),
                                     HasSubstr("an integer between 1 and 64"))));
  sources_.env = {{"MEND_QUALITY_REFLEXION_QUEUE_WORKERS", "3x"}};
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument, HasSubstr("\"3x\"")));
}

TEST_F(ConfigTest, InvalidDoubleAndBoolNameWhatIsAccepted) {
  sources_.env = {{"MEND_QUALITY_REFLEXION_QUEUE_JITTER", "0.7"}};
  EXPECT_THAT(Load(),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("a number between 0 and 0.5")));
  sources_.env = {{"MEND_QUALITY_REFLEXION_ENABLED", "maybe"}};
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument,
                               AllOf(HasSubstr("reflexion.enabled"), HasSubstr("true or false"))));
}

TEST_F(ConfigTest, BoolAcceptsCommonSpellings) {
  sources_.env = {{"MEND_QUALITY_REFLEXION_ON_LOW_QUALITY", "YES"},
                  {"MEND_QUALITY_REFLEXION_ENABLED", "off"}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_TRUE(config->GetBool("reflexion.on_low_quality"));
  EXPECT_FALSE(config->GetBool("reflexion.enabled"));
}

TEST_F(ConfigTest, InvalidFileValueNamesFileAndLine) {
  WriteConfig("[reflexion.queue]\nworkers = 2\njitter = 0.9\n");
  EXPECT_THAT(Load(),
              StatusIs(StatusCode::kInvalidArgument,
                       "invalid value for reflexion.queue.jitter from "
                       "/h/.mend/config.toml:3: 0.9 (expected a number between 0 and 0.5)"));
}

TEST_F(ConfigTest, WrongTomlTypeIsInvalid) {
  WriteConfig("[provider]\ntimeout = 30\n");
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument,
                               AllOf(HasSubstr("provider.timeout"),
                                     HasSubstr("/h/.mend/config.toml:2"), HasSubstr("e.g. 30s"))));
  WriteConfig("[reflexion]\nenabled = \"yes\"\n");
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument, HasSubstr("true or false")));
}

TEST_F(ConfigTest, FileValuesOfEveryTypeAreRead) {
  WriteConfig(
      "[reflexion]\non_low_quality = true\n"
      "[reflexion.queue]\nworkers = 4\njitter = 0\nmax_delay = \"1m30s\"\n"
      "[log]\nlevel = \"debug\"\n");
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_TRUE(config->GetBool("reflexion.on_low_quality"));
  EXPECT_EQ(config->GetInt("reflexion.queue.workers"), 4);
  EXPECT_DOUBLE_EQ(config->GetDouble("reflexion.queue.jitter"), 0.0);
  EXPECT_EQ(config->GetDuration("reflexion.queue.max_delay"), seconds(90));
  EXPECT_EQ(config->Find("reflexion.queue.max_delay")->text, "1m30s");
  EXPECT_EQ(config->GetString("log.level"), "debug");
  EXPECT_EQ(config->Find("log.level")->origin, "config.toml:8");
}

TEST_F(ConfigTest, ListKeysComeAsTomlArraysOrLinesAndShowAsJsonArrays) {
  WriteConfig("[proxy]\nfailure_patterns = [\"HTTP 5\\\\d\\\\d\", \"OOM, killed\"]\n");
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetList("proxy.failure_patterns"),
            (std::vector<std::string>{"HTTP 5\\d\\d", "OOM, killed"}));
  EXPECT_EQ(DisplayValue(*config->Find("proxy.failure_patterns")),
            R"(["HTTP 5\\d\\d","OOM, killed"])");
  sources_.env = {{"MEND_PROXY_FAILURE_PATTERNS", "a\n\nb"}};
  config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetList("proxy.failure_patterns"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(config->GetList("proxy.tokens").empty());
}

TEST_F(ConfigTest, AListMustHoldStrings) {
  WriteConfig("[proxy]\nfailure_patterns = [\"a\", 3]\n");
  EXPECT_THAT(Load(),
              StatusIs(StatusCode::kInvalidArgument, AllOf(HasSubstr("proxy.failure_patterns"),
                                                           HasSubstr("/h/.mend/config.toml:2"))));
  WriteConfig("[proxy]\nupstream = [\"http://a\"]\n");
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument, HasSubstr("proxy.upstream")));
}

TEST_F(ConfigTest, ProxyTokensAreSecretsInEveryList) {
  sources_.env = {{"MEND_PROXY_TOKENS", "tok-aaaaaaaaaaaaaaaa=team\ntok-bbbbbbbbbbbbbbbbbb"}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_THAT(DisplayValue(*config->Find("proxy.tokens")), Not(HasSubstr("tok-")));
}

TEST_F(ConfigTest, MalformedTomlReportsLineAndColumn) {
  WriteConfig("[provider]\nmodel = \"a\"\ntimeout = \"30s\n");
  EXPECT_THAT(Load(),
              StatusIs(StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("malformed TOML"), HasSubstr("/h/.mend/config.toml:3:"))));
}

TEST_F(ConfigTest, UnknownTomlKeyIsAnErrorWithAHint) {
  WriteConfig("[provider]\nmodle = \"x\"\n");
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument,
                               "unknown key provider.modle in /h/.mend/config.toml:2 "
                               "(did you mean provider.model?)"));
  WriteConfig("colour = \"blue\"\n");
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument,
                               AllOf(HasSubstr("unknown key colour"), Not(HasSubstr("mean")))));
}

TEST_F(ConfigTest, HomeCannotBeSetInTheFile) {
  WriteConfig("home = \"/elsewhere\"\n");
  EXPECT_THAT(Load(), StatusIs(StatusCode::kInvalidArgument,
                               AllOf(HasSubstr("home cannot be set"), HasSubstr("config.toml:1"))));
}

TEST_F(ConfigTest, ApiKeyFallsBackToTheProvidersVariable) {
  sources_.env = {{"OPENAI_API_KEY", "sk-openai-0123456789"},
                  {"ANTHROPIC_API_KEY", "sk-ant-0123456789"}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetString("provider.api_key"), "sk-openai-0123456789");
  EXPECT_EQ(config->Find("provider.api_key")->origin, "env OPENAI_API_KEY");

  sources_.env["MEND_PROVIDER"] = "anthropic";
  config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetString("provider.api_key"), "sk-ant-0123456789");
  EXPECT_EQ(config->Find("provider.api_key")->origin, "env ANTHROPIC_API_KEY");

  sources_.env["MEND_API_KEY"] = "sk-mend";
  config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetString("provider.api_key"), "sk-mend");
  EXPECT_EQ(config->Find("provider.api_key")->origin, "env MEND_API_KEY");
}

TEST_F(ConfigTest, ApiKeyFromFileWhenNoVariableIsSet) {
  WriteConfig("[provider]\nname = \"scripted\"\napi_key = \"k-file\"\n");
  sources_.env = {{"OPENAI_API_KEY", "sk-openai"}};  // not consulted for the scripted provider
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->GetString("provider.api_key"), "k-file");
  EXPECT_EQ(config->Find("provider.api_key")->source, ConfigSource::kFile);
}

TEST_F(ConfigTest, SecretsAreMaskedInRenderingAndErrors) {
  EXPECT_EQ(MaskSecret(""), "");
  EXPECT_EQ(MaskSecret("short"), "****");
  EXPECT_EQ(MaskSecret("sk-abcdefghijklmnopqrstuvwxyz1234"), "****1234");

  sources_.env = {{"MEND_API_KEY", "sk-abcdefghijklmnopqrstuvwxyz1234"},
                  {"MEND_BASE_URL", "https://bob:hunter2@llm.example/v1"}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(DisplayValue(*config->Find("provider.api_key")), "****1234");
  EXPECT_EQ(DisplayValue(*config->Find("provider.base_url")), "https://****@llm.example/v1");
  EXPECT_EQ(DisplayValue(*config->Find("provider.model")), "");

  WriteConfig("[provider]\napi_key = 1234567890123456789\n");
  Result<Config> bad = Load();
  EXPECT_THAT(bad, StatusIs(StatusCode::kInvalidArgument, HasSubstr("provider.api_key")));
  EXPECT_THAT(std::string(bad.status().message()), Not(HasSubstr("1234567890123456789")));
}

TEST_F(ConfigTest, EmptyEnvironmentVariableCountsAsUnset) {
  sources_.env = {{"MEND_MODEL", ""}};
  Result<Config> config = Load();
  MEND_ASSERT_OK(config);
  EXPECT_EQ(config->Find("provider.model")->source, ConfigSource::kDefault);
}

TEST_F(ConfigTest, CustomSchemaWithoutHomeReadsNoFile) {
  ConfigKeySpec spec;
  spec.name = "x.ratio";
  spec.type = ConfigType::kDouble;
  spec.default_value = "1";
  spec.double_max = 2;
  spec.env_var = "X_RATIO";
  sources_.env = {{"X_RATIO", "1.5"}};
  Result<Config> config = LoadConfig(sources_, fs_, {spec});
  MEND_ASSERT_OK(config);
  EXPECT_DOUBLE_EQ(config->GetDouble("x.ratio"), 1.5);
  EXPECT_EQ(config->Find("nope"), nullptr);
}

TEST(ConfigSourceTest, Names) {
  EXPECT_EQ(ConfigSourceName(ConfigSource::kDefault), "default");
  EXPECT_EQ(ConfigSourceName(ConfigSource::kFile), "file");
  EXPECT_EQ(ConfigSourceName(ConfigSource::kEnv), "env");
  EXPECT_EQ(ConfigSourceName(ConfigSource::kFlag), "flag");
}

}  // namespace
}  // namespace mend
