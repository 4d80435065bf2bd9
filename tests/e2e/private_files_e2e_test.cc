// Everything mend writes may hold secrets or personal data: after `mend demo` (which runs agents,
// checkpoints, writes events, lesson records, lessons and memory) and `mend memory export`, every
// file under the home is readable by its user only, and every directory is 0700.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

namespace fs = std::filesystem;

class PrivateFilesE2eTest : public E2eTest {};

TEST_F(PrivateFilesE2eTest, EverythingUnderTheHomeIsPrivate) {
  const std::string home = Home();
  const std::vector<std::string>& env = env_;
  auto demo = RunProcess(MendCommand({"demo"}), env, std::chrono::seconds(60));
  MEND_ASSERT_OK(demo);
  ASSERT_EQ(demo->status.code, 0) << demo->err;
  auto exported = RunProcess(MendCommand({"memory", "export", home + "/x.json"}), env,
                             std::chrono::seconds(20));
  MEND_ASSERT_OK(exported);
  ASSERT_EQ(exported->status.code, 0) << exported->err;

  std::vector<std::string> open;
  size_t files = 0;
  const auto mode = [](const fs::path& p) { return fs::status(p).permissions() & fs::perms::all; };
  if (mode(home) != fs::perms::owner_all) open.push_back(home);
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(home)) {
    if (entry.is_directory()) {
      if (mode(entry.path()) != fs::perms::owner_all) open.push_back(entry.path().string());
    } else if (entry.is_regular_file()) {
      ++files;
      const fs::perms perms = mode(entry.path());
      if ((perms & (fs::perms::group_all | fs::perms::others_all)) != fs::perms::none) {
        open.push_back(entry.path().string());
      }
    }
  }
  EXPECT_GE(files, 5u);  // mend.db, events.jsonl, LESSONS.md, the export, the demo's agent
  EXPECT_THAT(open, ::testing::IsEmpty());
}

}  // namespace
}  // namespace mend::testing
