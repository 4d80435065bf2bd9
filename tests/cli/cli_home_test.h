#pragma once

// A test fixture that runs the `mend` command line in process on a real temporary home (SQLite
// needs a disk), with a scripted model read from a file: a new invocation reads the script from
// its start, so a test writes the responses the next invocation should give.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "cli/cli.h"
#include "mend/base/file_system.h"
#include "tests/support/status_matchers.h"

namespace mend::cli {

// The keys of a JSON object, for checks of `--json` shapes.
inline std::set<std::string> JsonKeys(const nlohmann::json& object) {
  std::set<std::string> keys;
  for (auto it = object.begin(); it != object.end(); ++it) keys.insert(it.key());
  return keys;
}

class CliHomeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "mend-cli-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    home_ = dir_ + "/home";
    agent_ = dir_ + "/agent";
    script_ = dir_ + "/script.json";
    // A scripted error is an outage that lasts: the run's own retries of a transient error
    // (docs/runs.md, "Model errors") would take the script's next answer, so they are off here;
    // tests of the retries turn them on.
    env_ = {{"HOME", dir_}, {"MEND_PROVIDER_RETRIES", "0"}};
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  void Write(const std::string& path, const std::string& text) {
    MEND_ASSERT_OK(fs_.CreateDirs(DirName(path)));
    MEND_ASSERT_OK(WriteFileAtomically(fs_, path, text));
  }
  void Script(const std::string& json) { Write(script_, json); }

  // `mend --home <home> args...` with `stdin_text` as its input (not a terminal).
  int Mend(std::vector<std::string> args, const std::string& stdin_text = "") {
    return MendIn(home_, std::move(args), stdin_text);
  }
  int MendIn(const std::string& home, std::vector<std::string> args,
             const std::string& stdin_text = "") {
    args.insert(args.begin(), {"mend", "--home", home});
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::istringstream in(stdin_text);
    out_.str("");
    err_.str("");
    return RunCli(static_cast<int>(args.size()), argv.data(), env_, CliInput{&in, false}, out_,
                  err_, fs_);
  }
  // Commands that talk to the model get the scripted provider.
  int MendWithModel(std::vector<std::string> args, const std::string& stdin_text = "") {
    args.insert(args.end(), {"--provider", "scripted", "--script-file", script_});
    return Mend(std::move(args), stdin_text);
  }
  nlohmann::json Json() const { return nlohmann::json::parse(out_.str(), nullptr, false); }
  std::string out() const { return out_.str(); }
  std::string err() const { return err_.str(); }

  PosixFileSystem fs_;
  std::string dir_, home_, agent_, script_;
  std::map<std::string, std::string> env_;
  std::ostringstream out_, err_;
};

}  // namespace mend::cli
