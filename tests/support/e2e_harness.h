#pragma once

// The fixture every end-to-end test of the real `mend` and `fake_llm_server` executables builds
// on: a private temporary directory, a clean environment with a planted API key, `mend` run as a
// child process, the fake LLM server's lifecycle, children killed with SIGKILL, mend's one-line
// error contract, and a TearDown that fails the test when the planted key reached a file under a
// home `mend` was given.
//
// MEND_BINARY and FAKE_LLM_SERVER_BINARY (paths of the built executables) come with the library,
// child_process.h, temp_dir.h and the status matchers with this header.

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "tests/e2e/child_process.h"
#include "tests/e2e/temp_dir.h"
#include "tests/support/mend_command.h"
#include "tests/support/status_matchers.h"  // for the tests: MEND_ASSERT_OK and the rest

namespace mend::testing {

// The bound on a single wait of an end-to-end test, so a hang fails the test instead of blocking
// ctest; never a sleep.
inline constexpr std::chrono::seconds kBound(20);

// How one Mend() call runs; the defaults fit most calls.
struct MendCall {
  std::string home;                    // --home; empty: Home()
  std::vector<std::string> extra_env;  // appended to env_
  std::string cwd;                     // empty: the test runner's
  std::chrono::milliseconds timeout = kBound;
};

// The planted key of fixtures that do not name their own.
inline constexpr char kPlantedKey[] = "sk-e2e-harness-PLANTED-0451";

// What E2eTest::SetUp prepares besides the directory and the environment.
struct E2eSetup {
  // Planted in env_ as MEND_API_KEY; it must never be written to a file under a home.
  std::string secret = kPlantedKey;
  std::vector<std::string> extra_env;  // appended to env_
  // When not empty: the agent folder dir_/agent (WriteAgent) with this agent.toml.
  std::string agent_toml;
  std::string instructions;
};

class E2eTest : public ::testing::Test {
 protected:
  explicit E2eTest(E2eSetup setup = {}) : setup_(std::move(setup)) {}

  // dir_ (a fresh directory, mode 0700), env_ (CleanEnv with HOME=dir_, the planted key and the
  // setup's extra_env) and the setup's agent folder. A subclass's SetUp calls this first.
  void SetUp() override;
  // Kills (SIGKILL) and reaps every child Spawn() started and the fake server, then fails the test
  // when the planted key is in what a Mend() printed or in a file under a home it used. A
  // subclass's TearDown calls this last.
  void TearDown() override;

  // dir_/home: the --home of Mend() unless MendCall::home says otherwise.
  std::string Home() const { return dir_->File("home"); }
  const std::string& secret() const { return setup_.secret; }
  // Another secret the test hands to mend (an MCP server's header value, a proxy client's key or
  // token): TearDown looks for it as for the planted key, in what was printed and in every file
  // under a home.
  void PlantSecret(std::string value) { planted_.push_back(std::move(value)); }

  // A minimal agent folder dir_/`folder`: agent.toml and the instructions.md an agent folder must
  // have. Fails the test (fatally) when a file cannot be written.
  void WriteAgent(const std::string& folder, const std::string& agent_toml,
                  const std::string& instructions);

  // `mend --home <home> args...` (MendArgv) and the home noted for TearDown's look for the key.
  std::vector<std::string> MendCommand(const std::vector<std::string>& args,
                                       const std::string& home = "");
  // Runs `mend args...` with env_ to completion. Expects it to end by exit (not by a signal) and,
  // when it fails, to print one error line (ExpectOneErrorLine) unless expect_error_line_ is
  // false. Its output is kept for TearDown. An empty ChildOutput (exited false, code -1) when it
  // could not run.
  ChildOutput Mend(std::vector<std::string> args, const MendCall& call = {});
  // `mend --json args...`, expected to exit 0; its stdout parsed (discarded when it is not JSON,
  // null when mend could not run).
  nlohmann::json MendJson(std::vector<std::string> args, const MendCall& call = {});

  // mend's error contract: exactly one line on stderr, starting with "mend: ".
  static void ExpectOneErrorLine(const ChildOutput& r);

  // Starts a child with env_ (`env` when given) that TearDown kills. The caller does not own it.
  ChildProcess* Spawn(const std::vector<std::string>& argv,
                      const std::vector<std::string>* env = nullptr);
  // A long-lived `mend` (serve, proxy) and the loopback port it printed.
  struct Listening {
    std::unique_ptr<ChildProcess> process;
    int port = 0;
  };
  // Starts `mend args...` (MendCommand, env_) and reads its first line, which must be
  // "listening on http://127.0.0.1:<port>/" (a path may follow); a non-fatal failure and port 0
  // otherwise. The caller owns the child (what it printed goes to TearDown's look for the key
  // when the caller finishes it through FinishListening).
  Listening StartListening(const std::vector<std::string>& args);
  // Sends `signal` and waits for the child to end; what it printed (kept for TearDown).
  Result<ChildOutput> FinishListening(Listening& listening, int signal,
                                      std::chrono::milliseconds timeout = kBound);

  // SIGKILL for `child`, reaped at once; what it printed (kept for TearDown's look for the key).
  Result<ChildOutput> KillHard(ChildProcess& child);

  // The lines of the JSON Lines file at `path` (a fake server's --log, the home's events.jsonl),
  // parsed; a line that is not JSON fails the test. A file that cannot be read fails it too under
  // kFail, and has no lines under kEmpty. The text is kept for TearDown's look for the key.
  enum class IfMissing { kFail, kEmpty };
  std::vector<nlohmann::json> ReadJsonLines(const std::string& path,
                                            IfMissing if_missing = IfMissing::kFail);
  // The bodies of the requests a fake server logged to `path`, parsed, in arrival order.
  std::vector<nlohmann::json> LoggedBodies(const std::string& path);

  // Writes `contents` to dir_/`name` and returns its path (a non-fatal failure and "" otherwise).
  std::string WriteTestFile(const std::string& name, const std::string& contents);
  // Starts fake_llm_server with `args` (after --port 0); sets server_ and port_ (fatal failure
  // otherwise).
  void StartFakeLlm(const std::vector<std::string>& args);
  // The same for a second or third server the fixture holds itself.
  Result<FakeServerProcess> StartAnotherFakeLlm(const std::vector<std::string>& args);
  // Stops server_ with `signal`; what it printed.
  Result<ChildOutput> StopFakeLlm(int signal);
  // `--api-key <secret>`: the fake server accepts only the planted key.
  std::vector<std::string> ApiKeyFlags() const { return {"--api-key", setup_.secret}; }
  // The loopback URL of server_.
  std::string ServerUrl() const { return LoopbackUrl(port_); }
  // --provider openai --model `model` --base-url ServerUrl().
  std::vector<std::string> OpenAiFlags(const std::string& model = "gpt-4o-mini") const;
  // `args` followed by OpenAiFlags(): a command on server_'s model.
  std::vector<std::string> OnServer(std::vector<std::string> args) const;

  std::unique_ptr<ScopedTempDir> dir_;
  std::vector<std::string> env_;
  std::unique_ptr<ChildProcess> server_;  // the fake LLM server of StartFakeLlm
  int port_ = 0;
  std::string captured_;  // what the children printed, for the look for the key
  // False in a fixture whose failing commands print more than one line, with the reason there.
  bool expect_error_line_ = true;
  // Files the test itself writes the planted key into (a config file that holds it, say), which
  // TearDown's look for the key skips; every other file under the home is looked at.
  std::set<std::string> key_written_by_test_;

 private:
  E2eSetup setup_;
  std::vector<std::string> planted_;  // PlantSecret
  std::set<std::string> homes_;
  std::vector<std::unique_ptr<ChildProcess>> children_;
};

}  // namespace mend::testing
