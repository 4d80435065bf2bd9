#pragma once

// A fixture for runtime tests on the real filesystem (SQLite needs a disk): a fresh temporary
// directory holding a minimal agent folder at dir_/agent, removed after the test.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>

#include "mend/base/env.h"
#include "mend/base/file_system.h"
#include "tests/support/status_matchers.h"

namespace mend::app {

class AgentHomeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "mend-app-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    env_ = Env::Default();
    agent_dir_ = dir_ + "/agent";
    MEND_ASSERT_OK(env_.fs->CreateDirs(agent_dir_));
    MEND_ASSERT_OK(
        WriteFileAtomically(*env_.fs, agent_dir_ + "/agent.toml", "name = \"t\"\ntools = []\n"));
    MEND_ASSERT_OK(
        WriteFileAtomically(*env_.fs, agent_dir_ + "/instructions.md", "Answer briefly.\n"));
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_, agent_dir_;
  Env env_;
};

}  // namespace mend::app
