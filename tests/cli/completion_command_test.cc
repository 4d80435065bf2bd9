// `mend completion` scripts complete the real command tree when a real bash (and zsh, where it is
// installed) runs them, and `mend manpages` writes a page per command that groff reads without a
// warning.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/wait.h>

#include <CLI/CLI.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "mend/base/memory_file_system.h"

namespace mend::cli {
namespace {

using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::Not;

// Runs `command` with /bin/sh; its stdout and exit status.
std::pair<std::string, int> Shell(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {"", -1};
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  return lines;
}

class CompletionTest : public ::testing::Test {
 protected:
  CompletionTest() : ctx_{env_, out_, err_, fs_, CliInput{}}, app_(MakeCliApp(ctx_)) {
    std::string pattern = (std::filesystem::temp_directory_path() / "mend-completion-XXXXXX");
    EXPECT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  ~CompletionTest() override { std::filesystem::remove_all(dir_); }

  std::string WriteScript(const std::string& shell) {
    const std::string path = dir_ + "/mend." + shell;
    std::ofstream(path) << CompletionScript(*app_, shell);
    return path;
  }

  // What bash's completion offers after `line` (the words typed; the last is being completed).
  std::vector<std::string> Bash(const std::string& line) {
    const std::string script = WriteScript("bash");
    const std::string driver = dir_ + "/drive.bash";
    std::ofstream(driver) << "source '" << script << "'\n"
                          << "cd '" << dir_ << "'\n"
                          << "read -ra COMP_WORDS <<< \"$1\"\n"
                          << "[[ $1 == *' ' ]] && COMP_WORDS+=('')\n"
                          << "COMP_CWORD=$((${#COMP_WORDS[@]} - 1))\n"
                          << "_mend\n"
                          << "(( ${#COMPREPLY[@]} == 0 )) || printf '%s\\n' \"${COMPREPLY[@]}\"\n";
    auto [out, status] = Shell("bash '" + driver + "' '" + line + "'");
    EXPECT_EQ(status, 0) << out;
    return Lines(out);
  }

  std::map<std::string, std::string> env_;
  std::ostringstream out_;
  std::ostringstream err_;
  MemoryFileSystem fs_;
  CliContext ctx_;
  std::unique_ptr<CLI::App> app_;
  std::string dir_;
};

TEST_F(CompletionTest, BashCompletesCommandsSubcommandsAndFlags) {
  EXPECT_THAT(Bash("mend me"), ::testing::ElementsAre("memory"));
  const std::vector<std::string> memory = Bash("mend memory s");
  EXPECT_THAT(memory, Contains("search"));
  EXPECT_THAT(memory, Contains("show"));
  EXPECT_THAT(memory, Not(Contains("add")));
  EXPECT_THAT(Bash("mend run --mo"), ::testing::ElementsAre("--model"));
  // Global options work after a command too.
  EXPECT_THAT(Bash("mend memory search --js"), ::testing::ElementsAre("--json"));
  // A flag of another command is not offered.
  EXPECT_THAT(Bash("mend pending --mo"), IsEmpty());
}

TEST_F(CompletionTest, BashCompletesFilesForPathsAndPositionals) {
  std::ofstream(dir_ + "/agent.toml") << "";
  // After a flag that takes a value, and for a command's positional argument, files.
  EXPECT_THAT(Bash("mend --home ag"), Contains("agent.toml"));
  EXPECT_THAT(Bash("mend run ag"), Contains("agent.toml"));
  // A command whose words are commands offers no files.
  EXPECT_THAT(Bash("mend ag"), IsEmpty());
}

TEST_F(CompletionTest, ZshCompletesTheSameTree) {
  if (Shell("command -v zsh").second != 0) GTEST_SKIP() << "zsh is not installed";
  const std::string script = WriteScript("zsh");
  // compadd and _files stand in for the completion system: they print what would be offered.
  const std::string driver = dir_ + "/drive.zsh";
  std::ofstream(driver) << "compadd() { shift; print -l -- \"$@\" }\n"
                        << "_files() { print -- FILES }\n"
                        << "words=(${=1}); [[ $1 == *' ' ]] && words+=('')\n"
                        << "CURRENT=${#words}\n"
                        << "source '" << script << "'\n";
  auto offered = [&](const std::string& line) {
    auto [out, status] = Shell("zsh -f '" + driver + "' '" + line + "'");
    EXPECT_EQ(status, 0) << out;
    return Lines(out);
  };
  EXPECT_THAT(offered("mend memory "), Contains("search"));
  EXPECT_THAT(offered("mend memory "), Not(Contains("FILES")));
  EXPECT_THAT(offered("mend run "), Contains("FILES"));
  EXPECT_THAT(offered("mend run "), Contains("--model"));
  EXPECT_THAT(offered("mend --home "), ::testing::ElementsAre("FILES"));
}

TEST(ManpagesTest, OnePagePerCommandThatGroffReadsWithoutWarnings) {
  std::string pattern = (std::filesystem::temp_directory_path() / "mend-man-XXXXXX");
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const std::string dir = pattern + "/man1";
  std::map<std::string, std::string> env;
  std::vector<std::string> args = {"mend", "manpages", dir};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  std::ostringstream out;
  std::ostringstream err;
  const int code = RunCli(static_cast<int>(argv.size()), argv.data(), env, out, err);
  ASSERT_EQ(code, 0) << err.str();
  EXPECT_THAT(out.str(), ::testing::HasSubstr("man pages to " + dir));
  for (const char* page : {"mend.1", "mend-run.1", "mend-memory-search.1", "mend-serve.1",
                           "mend-completion.1", "mend-improve-apply.1"}) {
    EXPECT_TRUE(std::filesystem::exists(dir + "/" + page)) << page;
  }
  std::ifstream run(dir + "/mend-run.1");
  std::stringstream text;
  text << run.rdbuf();
  EXPECT_THAT(text.str(), ::testing::HasSubstr(".SH OPTIONS"));
  EXPECT_THAT(text.str(), ::testing::HasSubstr("\\-\\-model"));
  if (Shell("command -v groff").second == 0) {
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      auto [warnings, status] =
          Shell("groff -man -Tutf8 -ww -z '" + entry.path().string() + "' 2>&1");
      EXPECT_EQ(status, 0) << entry.path();
      EXPECT_EQ(warnings, "") << entry.path();
    }
  }
  std::filesystem::remove_all(pattern);
}

}  // namespace
}  // namespace mend::cli
