// What a child started for an agent inherits: a scrubbed environment and resource limits.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "agent/command_tool.h"
#include "mend/agent/builtin_tools.h"
#include "mend/agent/tool_registry.h"
#include "mend/base/subprocess.h"
#include "tests/agent/tool_test_util.h"
#include "tests/support/orphan_watch.h"
#include "tests/support/status_matchers.h"

namespace mend::agent {
namespace {

using ::mend::agent::tool_testing::TempWorkspace;
using ::testing::ContainsRegex;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

// Fake secrets of this test; scripts/check_secrets also looks for them in test output.
constexpr char kMendKey[] = "sk-subprocess-MEND-KEY-6161";
constexpr char kOpenAiKey[] = "sk-subprocess-OPENAI-KEY-6262";
constexpr char kAnthropicKey[] = "sk-ant-subprocess-KEY-6363";
constexpr char kStorePassword[] = "sk-subprocess-STORE-PASSWORD-6464";
constexpr char kConfigKey[] = "sk-subprocess-CONFIG-KEY-6565";

std::vector<const char*> EnvArray(const std::vector<std::string>& entries) {
  std::vector<const char*> env;
  for (const std::string& e : entries) env.push_back(e.c_str());
  env.push_back(nullptr);
  return env;
}

TEST(ChildEnvironmentTest, PassesOnlyTheAllowlistAndDropsValuesCarryingSecrets) {
  const std::vector<std::string> parent = {
      "PATH=/usr/bin:/bin",
      "HOME=/home/alice",
      "LANG=C.UTF-8",
      "LC_ALL=C",
      "TZ=UTC",
      std::string("MEND_API_KEY=") + kMendKey,
      std::string("OPENAI_API_KEY=") + kOpenAiKey,
      std::string("ANTHROPIC_API_KEY=") + kAnthropicKey,
      std::string("MEND_STORE=postgres://mend:") + kStorePassword + "@db:5432/mend",
      "MEND_HOME=/home/alice/.mend",
      "MEND_LOG_LEVEL=debug",
      "GITHUB_TOKEN=ghp-0123456789abcdef",
      "EDITOR=vi",
      // Allowlisted names whose values carry a secret are dropped as well.
      std::string("TERM=xterm-") + kMendKey,
      std::string("TMPDIR=/tmp/") + kStorePassword,
      "NOT_AN_ASSIGNMENT",
  };
  const std::vector<const char*> env = EnvArray(parent);
  EXPECT_THAT(ChildEnvironment(env.data()),
              UnorderedElementsAre("PATH=/usr/bin:/bin", "HOME=/home/alice", "LANG=C.UTF-8",
                                   "LC_ALL=C", "TZ=UTC"));
  EXPECT_TRUE(ChildEnvironment(nullptr).empty());
}

TEST(ChildEnvironmentTest, SecretNamesAreRecognised) {
  for (const char* name :
       {"MEND_API_KEY", "MEND_EMBEDDINGS_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_API_KEY",
        "MEND_SERVE_TOKEN", "MEND_OTLP_HEADERS", "MEND_STORE", "MEND_BASE_URL",
        "AWS_SECRET_ACCESS_KEY", "db_password", "GITHUB_TOKEN", "Npm_Token"}) {
    EXPECT_TRUE(IsSecretVariableName(name)) << name;
  }
  for (const char* name : {"PATH", "HOME", "MEND_HOME", "LANG", "MONKEY", "KEYBOARD_LAYOUT"}) {
    EXPECT_FALSE(IsSecretVariableName(name)) << name;
  }
}

TEST(ChildEnvironmentTest, RegisteredSecretsAreDroppedByValue) {
  AddChildEnvironmentSecret(kConfigKey);
  AddChildEnvironmentSecret("short");  // too short to match safely: ignored
  const std::vector<std::string> parent = {std::string("HOME=/h/") + kConfigKey, "USER=short",
                                           "SHELL=/bin/sh"};
  const std::vector<const char*> env = EnvArray(parent);
  EXPECT_THAT(ChildEnvironment(env.data()), UnorderedElementsAre("USER=short", "SHELL=/bin/sh"));
}

// Sets variables in this process for the length of a test and restores them after.
class ScopedEnv {
 public:
  explicit ScopedEnv(std::map<std::string, std::string> vars) {
    for (const auto& [name, value] : vars) {
      const char* old = getenv(name.c_str());
      saved_[name] = old != nullptr ? std::optional<std::string>(old) : std::nullopt;
      setenv(name.c_str(), value.c_str(), 1);
    }
  }
  ~ScopedEnv() {
    for (const auto& [name, old] : saved_) {
      if (old) {
        setenv(name.c_str(), old->c_str(), 1);
      } else {
        unsetenv(name.c_str());
      }
    }
  }

 private:
  std::map<std::string, std::optional<std::string>> saved_;
};

class SubprocessIsolationTest : public ::testing::Test {
 protected:
  SubprocessIsolationTest()
      : keys_({{"MEND_API_KEY", kMendKey},
               {"OPENAI_API_KEY", kOpenAiKey},
               {"ANTHROPIC_API_KEY", kAnthropicKey},
               {"MEND_STORE", std::string("postgres://mend:") + kStorePassword + "@db/mend"},
               {"MEND_SERVE_TOKEN", "sk-subprocess-SERVE-TOKEN-6666"}}),
        ctx_(ws_.Context()) {
    MEND_EXPECT_OK(RegisterBuiltinTools(registry_, {"run_command"}));
  }
  std::string RunCommand(const std::string& command) {
    const ToolResult r =
        registry_.Invoke("run_command", R"({"command":")" + command + R"("})", ctx_);
    EXPECT_FALSE(r.is_error) << r.content;
    return r.content;
  }
  void ExpectNoSecret(const std::string& output) {
    for (const char* secret : {kMendKey, kOpenAiKey, kAnthropicKey, kStorePassword,
                               "sk-subprocess-SERVE-TOKEN-6666", "MEND_", "API_KEY"}) {
      EXPECT_THAT(output, Not(HasSubstr(secret)));
    }
  }

  ScopedEnv keys_;
  TempWorkspace ws_;
  ToolRegistry registry_;
  ToolContext ctx_;
};

TEST_F(SubprocessIsolationTest, RunCommandCannotSeeTheKeys) {
  const std::string env = RunCommand("env");
  ExpectNoSecret(env);
  EXPECT_THAT(env, HasSubstr("PATH="));  // the allowlist does pass
  EXPECT_EQ(RunCommand("echo \\\"[$MEND_API_KEY][$OPENAI_API_KEY][$MEND_STORE]\\\""),
            "[][][]\n[exit code: 0]");
  ExpectNoSecret(RunCommand("cat /proc/$$/environ | tr '\\\\0' '\\\\n'"));
}

TEST_F(SubprocessIsolationTest, CommandToolsAndChecksCannotSeeTheKeys) {
  TempWorkspace agent_dir;
  CommandToolSpec spec;
  spec.spec.name = "env_tool";
  spec.spec.description = "prints its environment";
  spec.spec.parameters = R"({"type":"object","properties":{}})";
  spec.command = {"/usr/bin/env"};
  spec.path = "tools/env_tool.toml";
  MEND_ASSERT_OK(registry_.Register(MakeCommandTool(spec, agent_dir.path())));
  const ToolResult r = registry_.Invoke("env_tool", "{}", ctx_);
  EXPECT_FALSE(r.is_error) << r.content;
  EXPECT_THAT(r.content, HasSubstr("HOME="));
  ExpectNoSecret(r.content);
}

// The scrubbed environment would not help if a child could read its parent's original one — the
// environment the process was started with, where a key given to mend stays — in
// /proc/<ppid>/environ. A forked copy of this test makes itself undumpable as mend's main() does
// and checks that its child can no longer read that file (without the call it can: the first run
// shows the test is real).
TEST_F(SubprocessIsolationTest, ChildCannotReadTheParentsEnvironmentInProc) {
  if (geteuid() == 0) GTEST_SKIP() << "root reads every /proc/<pid>/environ (CAP_SYS_PTRACE)";
  const auto parent_environ_readable = [&](bool undumpable) {
    const pid_t pid = fork();
    if (pid == 0) {
      if (undumpable && !MakeProcessUndumpable().ok()) _exit(3);
      SubprocessOptions options;
      options.argv = {"/bin/sh", "-c", "cat /proc/$PPID/environ >/dev/null 2>&1 && echo readable"};
      options.cwd = ws_.path();
      Result<SubprocessResult> r = RunSubprocess(options);
      if (!r.ok()) _exit(4);
      _exit(r->stdout_data == "readable\n" ? 1 : 0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(parent_environ_readable(false), 1);
  EXPECT_EQ(parent_environ_readable(true), 0);
}

TEST_F(SubprocessIsolationTest, LimitsAreSetBeforeTheChildRuns) {
  ctx_.timeout = std::chrono::seconds(10);
  // ulimit -t is the shell's own soft CPU limit: set before exec, not after the start.
  EXPECT_EQ(RunCommand("ulimit -t"), "60\n[exit code: 0]");
  const std::string limits = RunCommand("cat /proc/self/limits");
  EXPECT_THAT(limits, ContainsRegex("Max cpu time +60 +65 +seconds"));
  EXPECT_THAT(limits, ContainsRegex("Max file size +4294967296 +4294967296 +bytes"));
  EXPECT_THAT(limits, ContainsRegex("Max core file size +0 +0 +bytes"));
  // Sanitizer builds leave the data limit out (their shadow memory exceeds it).
  const PreparedLimits prepared = PrepareLimits(ChildLimits{}, ctx_.timeout);
  const bool data_limited =
      std::any_of(prepared.items, prepared.items + prepared.count,
                  [](const auto& item) { return item.resource == RLIMIT_DATA; });
  if (data_limited) {
    EXPECT_THAT(limits, ContainsRegex("Max data size +8589934592 +8589934592 +bytes"));
  }
  // A long timeout gives a proportionally longer CPU allowance.
  ctx_.timeout = std::chrono::minutes(5);
  EXPECT_EQ(RunCommand("ulimit -t"), "600\n[exit code: 0]");
}

TEST_F(SubprocessIsolationTest, CpuLimitEndsABusyChildBeforeItsTimeout) {
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", "while :; do :; done"};
  options.cwd = ws_.path();
  options.timeout = std::chrono::seconds(30);
  options.limits.cpu_seconds = 1;
  Result<SubprocessResult> r = RunSubprocess(options);
  MEND_ASSERT_OK(r.status());
  EXPECT_FALSE(r->timed_out);
  EXPECT_EQ(r->term_signal, SIGXCPU);
}

TEST_F(SubprocessIsolationTest, FileSizeLimitStopsARunawayWriter) {
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", "head -c 200000 /dev/zero > big; echo exit=$?"};
  options.cwd = ws_.path();
  options.limits.file_size_bytes = 65536;
  Result<SubprocessResult> r = RunSubprocess(options);
  MEND_ASSERT_OK(r.status());
  EXPECT_THAT(r->stdout_data, Not(HasSubstr("exit=0")));
  EXPECT_EQ(std::filesystem::file_size(ws_.Abs("big")), 65536u);
}

// A process stands in for `mend run` and is killed with SIGKILL while its tool call runs: the
// tool's process must die with it, or `mend recover` would run the call a second time while the
// first still runs.
TEST_F(SubprocessIsolationTest, AChildDiesWhenTheProcessThatStartedItIsKilled) {
  const mend::testing::ChildFate fate = mend::testing::KillParentAndWatchChild(ws_.Abs("pid"), [&] {
    SubprocessOptions options;
    options.argv = {"/bin/sh", "-c", "echo $$ > pid; exec sleep 600"};
    options.cwd = ws_.path();
    options.timeout = std::chrono::minutes(10);
    (void)RunSubprocess(options);
  });
  if (fate == mend::testing::ChildFate::kUnsupported) GTEST_SKIP() << "pidfd_open needs Linux 5.3";
  EXPECT_EQ(fate, mend::testing::ChildFate::kEnded)
      << "the tool's process outlived the process that started it";
}

// The same with a tool that started a process of its own and left it sleeping: the whole process
// group dies with the stand-in, grandchildren included.
TEST_F(SubprocessIsolationTest, AGrandchildDiesWhenTheProcessThatStartedTheToolIsKilled) {
  const std::string fifo = ws_.Abs("pid");
  const mend::testing::ChildFate fate = mend::testing::KillParentAndWatchChild(fifo, [&] {
    SubprocessOptions options;
    options.argv = {"/bin/sh", "-c", mend::testing::SleepingGrandchildCommand(fifo)};
    options.cwd = ws_.path();
    options.timeout = std::chrono::minutes(10);
    (void)RunSubprocess(options);
  });
  if (fate == mend::testing::ChildFate::kUnsupported) GTEST_SKIP() << "pidfd_open needs Linux 5.3";
  EXPECT_EQ(fate, mend::testing::ChildFate::kEnded)
      << "a process the tool started outlived the process that started the tool";
}

// A child to talk to (an MCP server) that started a process of its own: both die with the
// process that spawned the child.
TEST_F(SubprocessIsolationTest, AGrandchildOfASpawnedChildDiesWhenItsStarterIsKilled) {
  const std::string fifo = ws_.Abs("pid");
  const mend::testing::ChildFate fate = mend::testing::KillParentAndWatchChild(fifo, [&] {
    SpawnOptions options;
    options.argv = {"/bin/sh", "-c", mend::testing::SleepingGrandchildCommand(fifo)};
    options.cwd = ws_.path();
    Result<SpawnedChild> child = SpawnChild(options);
    if (child.ok()) waitpid(child->pid, nullptr, 0);  // the spawning thread lives as long
  });
  if (fate == mend::testing::ChildFate::kUnsupported) GTEST_SKIP() << "pidfd_open needs Linux 5.3";
  EXPECT_EQ(fate, mend::testing::ChildFate::kEnded)
      << "a process the spawned child started outlived the process that spawned it";
}

// A timeout kills the whole group, and the caller finds the command reaped and exited as killed.
TEST_F(SubprocessIsolationTest, ATimeoutEndsTheToolAndWhatItStarted) {
  const std::string fifo = ws_.Abs("pid");
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  pid_t grandchild = 0;
  std::thread reader([&] { std::ifstream(fifo) >> grandchild; });
  SubprocessOptions options;
  options.argv = {"/bin/sh", "-c", mend::testing::SleepingGrandchildCommand(fifo)};
  options.cwd = ws_.path();
  options.timeout = std::chrono::milliseconds(500);
  Result<SubprocessResult> r = RunSubprocess(options);
  reader.join();
  MEND_ASSERT_OK(r.status());
  EXPECT_TRUE(r->timed_out);
  EXPECT_EQ(r->term_signal, SIGKILL);
  ASSERT_GT(grandchild, 0);
  EXPECT_TRUE(mend::testing::EndsWithin30s(grandchild)) << "the grandchild outlived the timeout";
}

// The command's exit code and signal reach the caller unchanged through the group's guard.
TEST_F(SubprocessIsolationTest, TheCommandsExitCodeAndSignalReachTheCaller) {
  SubprocessOptions options;
  options.cwd = ws_.path();
  options.argv = {"/bin/sh", "-c", "exit 7"};
  Result<SubprocessResult> exited = RunSubprocess(options);
  MEND_ASSERT_OK(exited.status());
  EXPECT_EQ(exited->exit_code, 7);
  EXPECT_EQ(exited->term_signal, 0);
  options.argv = {"/bin/sh", "-c", "kill -TERM $$"};
  Result<SubprocessResult> killed = RunSubprocess(options);
  MEND_ASSERT_OK(killed.status());
  EXPECT_EQ(killed->term_signal, SIGTERM);
}

}  // namespace
}  // namespace mend::agent
