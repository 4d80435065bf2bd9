#include "tests/support/e2e_harness.h"

#include <gmock/gmock.h>
#include <signal.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <regex>
#include <sstream>
#include <system_error>

#include "tests/support/status_matchers.h"

namespace mend::testing {

using ::testing::AllOf;
using ::testing::EndsWith;
using ::testing::StartsWith;

void E2eTest::SetUp() {
  auto dir = ScopedTempDir::Create();
  MEND_ASSERT_OK(dir);
  dir_ = std::move(*dir);
  // mkdtemp makes it 0700 already; said here because the test's homes inherit nothing wider.
  ASSERT_EQ(::chmod(dir_->path().c_str(), 0700), 0);
  env_ = CleanEnv(dir_->path(), {"MEND_API_KEY=" + setup_.secret});
  env_.insert(env_.end(), setup_.extra_env.begin(), setup_.extra_env.end());
  if (!setup_.agent_toml.empty()) {
    ASSERT_NO_FATAL_FAILURE(WriteAgent("agent", setup_.agent_toml, setup_.instructions));
  }
}

void E2eTest::TearDown() {
  // A home is looked at once nothing writes to it any more.
  children_.clear();
  server_.reset();
  // Never the text itself in the message: it holds the key, and test logs are kept.
  EXPECT_EQ(captured_.find(setup_.secret), std::string::npos) << "the planted key was printed";
  for (size_t i = 0; i < planted_.size(); ++i) {
    EXPECT_EQ(captured_.find(planted_[i]), std::string::npos)
        << "planted secret " << i << " was printed";
  }
  for (const std::string& home : homes_) {
    std::vector<std::string> found;
    for (const std::string& file : FilesContaining(home, setup_.secret)) {
      if (key_written_by_test_.count(file) == 0) found.push_back(file);
    }
    EXPECT_THAT(found, ::testing::IsEmpty()) << "the planted key is in these files under " << home;
    for (size_t i = 0; i < planted_.size(); ++i) {
      EXPECT_THAT(FilesContaining(home, planted_[i]), ::testing::IsEmpty())
          << "planted secret " << i << " is in these files under " << home;
    }
  }
}

void E2eTest::WriteAgent(const std::string& folder, const std::string& agent_toml,
                         const std::string& instructions) {
  std::error_code error;
  std::filesystem::create_directories(dir_->File(folder), error);
  ASSERT_FALSE(error) << error.message();
  MEND_ASSERT_OK(dir_->WriteFile(folder + "/agent.toml", agent_toml));
  MEND_ASSERT_OK(dir_->WriteFile(folder + "/instructions.md", instructions));
}

std::vector<std::string> E2eTest::MendCommand(const std::vector<std::string>& args,
                                              const std::string& home) {
  const std::string used = home.empty() ? Home() : home;
  homes_.insert(used);
  return MendArgv(MEND_BINARY, used, args);
}

ChildOutput E2eTest::Mend(std::vector<std::string> args, const MendCall& call) {
  std::vector<std::string> env = env_;
  env.insert(env.end(), call.extra_env.begin(), call.extra_env.end());
  auto result = RunProcess(MendCommand(args, call.home), env, call.timeout, call.cwd);
  EXPECT_THAT(result, IsOk());
  if (!result.ok()) return {};
  captured_ += result->out + result->err;
  EXPECT_TRUE(result->status.exited) << "killed by signal " << result->status.signal;
  if (expect_error_line_ && result->status.exited && result->status.code != 0) {
    ExpectOneErrorLine(*result);
  }
  return *std::move(result);
}

nlohmann::json E2eTest::MendJson(std::vector<std::string> args, const MendCall& call) {
  args.insert(args.begin(), "--json");
  const ChildOutput result = Mend(std::move(args), call);
  if (!result.status.exited && result.status.code == -1 && result.status.signal == 0) {
    return nullptr;
  }
  EXPECT_TRUE(result.status.exited && result.status.code == 0)
      << "exit " << result.status.code << " signal " << result.status.signal << ": " << result.err;
  return nlohmann::json::parse(result.out, nullptr, false);
}

void E2eTest::ExpectOneErrorLine(const ChildOutput& r) {
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_THAT(r.err, AllOf(StartsWith("mend: "), EndsWith("\n")));
}

ChildProcess* E2eTest::Spawn(const std::vector<std::string>& argv,
                             const std::vector<std::string>* env) {
  auto child = ChildProcess::Spawn(argv, env == nullptr ? env_ : *env);
  EXPECT_THAT(child, IsOk());
  if (!child.ok()) return nullptr;
  children_.push_back(std::move(*child));
  return children_.back().get();
}

E2eTest::Listening E2eTest::StartListening(const std::vector<std::string>& args) {
  Listening listening;
  auto child = ChildProcess::Spawn(MendCommand(args), env_);
  EXPECT_THAT(child, IsOk());
  if (!child.ok()) return listening;
  listening.process = std::move(*child);
  auto line = listening.process->ReadStdoutLine(kBound);
  EXPECT_THAT(line, IsOk());
  if (!line.ok()) return listening;
  std::smatch match;
  const std::regex pattern("listening on https?://127\\.0\\.0\\.1:([0-9]+)/[a-z]*");
  EXPECT_TRUE(std::regex_match(*line, match, pattern)) << *line;
  if (!match.empty()) listening.port = std::stoi(match[1].str());
  return listening;
}

Result<ChildOutput> E2eTest::FinishListening(Listening& listening, int signal,
                                             std::chrono::milliseconds timeout) {
  if (listening.process == nullptr) return FailedPreconditionError("nothing was started");
  MEND_RETURN_IF_ERROR(listening.process->Kill(signal));
  Result<ChildOutput> output = listening.process->Finish(timeout);
  listening.process.reset();
  if (output.ok()) captured_ += output->out + output->err;
  return output;
}

Result<ChildOutput> E2eTest::KillHard(ChildProcess& child) {
  MEND_RETURN_IF_ERROR(child.Kill(SIGKILL));
  MEND_ASSIGN_OR_RETURN(ChildOutput output, child.Finish(kBound));
  captured_ += output.out + output.err;
  return output;
}

std::vector<nlohmann::json> E2eTest::ReadJsonLines(const std::string& path, IfMissing if_missing) {
  std::vector<nlohmann::json> lines;
  auto text = ReadWholeFile(path);
  if (if_missing == IfMissing::kFail) {
    EXPECT_THAT(text, IsOk());
  }
  if (!text.ok()) return lines;
  captured_ += *text;
  std::istringstream in(*text);
  for (std::string line; std::getline(in, line);) {
    lines.push_back(nlohmann::json::parse(line, nullptr, false));
    EXPECT_FALSE(lines.back().is_discarded()) << path << ": " << line;
  }
  return lines;
}

std::vector<nlohmann::json> E2eTest::LoggedBodies(const std::string& path) {
  std::vector<nlohmann::json> bodies;
  for (const nlohmann::json& request : ReadJsonLines(path)) {
    const nlohmann::json& body =
        request.is_object() ? request.value("body", nlohmann::json("{}")) : nlohmann::json("{}");
    bodies.push_back(
        body.is_string() ? nlohmann::json::parse(body.get<std::string>(), nullptr, false) : body);
    EXPECT_FALSE(bodies.back().is_discarded()) << "a request body is not JSON: " << body;
  }
  return bodies;
}

std::string E2eTest::WriteTestFile(const std::string& name, const std::string& contents) {
  auto path = dir_->WriteFile(name, contents);
  EXPECT_THAT(path, IsOk());
  return path.value_or("");
}

void E2eTest::StartFakeLlm(const std::vector<std::string>& args) {
  auto server = StartAnotherFakeLlm(args);
  MEND_ASSERT_OK(server);
  server_ = std::move(server->process);
  port_ = server->port;
}

Result<FakeServerProcess> E2eTest::StartAnotherFakeLlm(const std::vector<std::string>& args) {
  return StartFakeServer(FAKE_LLM_SERVER_BINARY, args, kBound);
}

Result<ChildOutput> E2eTest::StopFakeLlm(int signal) {
  MEND_RETURN_IF_ERROR(server_->Kill(signal));
  MEND_ASSIGN_OR_RETURN(ChildOutput output, server_->Finish(kBound));
  captured_ += output.out + output.err;
  return output;
}

std::vector<std::string> E2eTest::OnServer(std::vector<std::string> args) const {
  for (std::string& flag : OpenAiFlags()) args.push_back(std::move(flag));
  return args;
}

std::vector<std::string> E2eTest::OpenAiFlags(const std::string& model) const {
  return {"--provider", "openai", "--model", model, "--base-url", ServerUrl()};
}

}  // namespace mend::testing
