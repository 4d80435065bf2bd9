// A full disk, for real: the home and the agent folder live on a tmpfs of 8 MiB mounted for the
// test (skipped where the test may not mount one). A run whose tool fills the disk stops at its
// last checkpoint with an error that says so and what to do, loses nothing, and resumes once there
// is space; memory and the lesson queue refuse writes clearly while the disk is full and work
// again afterwards (docs/reliability.md, "A full disk").
#include <fcntl.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "mend/obs/span_store.h"
#include "tests/obs/span_test_util.h"
#include "tests/support/e2e_harness.h"

namespace mend::testing {
namespace {

using ::testing::HasSubstr;

constexpr char kKey[] = "sk-disk-full-KEY-7070";

// The tool fills the disk once (a second call, after the test freed space, only answers).
constexpr char kFillTool[] = R"(name = "fill_disk"
description = "Fills the disk."
requires_approval = false
command = ["/bin/sh", "-c", "if [ -e filled ]; then echo again; exit 0; fi; : > filled; i=0; while dd if=/dev/zero of=fill$i bs=64k count=8 2>/dev/null; do i=$((i+1)); done; echo full"]
)";

constexpr char kScript[] = R"([
  {"tool_calls": [{"id": "c1", "name": "fill_disk", "arguments": {}}]},
  {"text": "done"}
])";

class DiskFullE2eTest : public E2eTest {
 protected:
  DiskFullE2eTest() : E2eTest({.secret = kKey}) {}

  void SetUp() override {
    ASSERT_NO_FATAL_FAILURE(E2eTest::SetUp());
    disk_ = dir_->File("disk");
    std::error_code error;
    std::filesystem::create_directories(disk_, error);
    ASSERT_FALSE(error) << error.message();
    if (::mount("tmpfs", disk_.c_str(), "tmpfs", MS_NOSUID | MS_NODEV, "size=8m,mode=0700") != 0) {
      GTEST_SKIP() << "mounting a tmpfs needs root (CAP_SYS_ADMIN): " << std::strerror(errno);
    }
    mounted_ = true;
    ASSERT_NO_FATAL_FAILURE(WriteAgent("disk/agent",
                                       "name = \"filler\"\ntools = [\"fill_disk\"]\n"
                                       "workspace = \"workspace\"\n",
                                       "Fill the disk, then answer.\n"));
    std::filesystem::create_directories(disk_ + "/agent/workspace", error);
    std::filesystem::create_directories(disk_ + "/agent/tools", error);
    ASSERT_FALSE(error) << error.message();
    MEND_ASSERT_OK(dir_->WriteFile("disk/agent/tools/fill_disk.toml", kFillTool));
  }

  void TearDown() override {
    E2eTest::TearDown();
    if (mounted_) ::umount2(disk_.c_str(), MNT_DETACH);
  }

  MendCall OnDisk() const { return MendCall{.home = disk_ + "/home"}; }

  // Writes a file on the tmpfs until the disk refuses more; the bytes written.
  size_t FillDisk() {
    const std::string path = disk_ + "/filler";
    const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    EXPECT_GE(fd, 0);
    const std::string block(64 << 10, 'x');
    size_t written = 0;
    for (;;) {
      const ssize_t n = ::write(fd, block.data(), block.size());
      if (n <= 0) break;
      written += static_cast<size_t>(n);
    }
    EXPECT_EQ(errno, ENOSPC);
    ::close(fd);
    return written;
  }
  void FreeDisk() {
    std::error_code error;
    std::filesystem::remove(disk_ + "/filler", error);
    for (const auto& entry : std::filesystem::directory_iterator(disk_ + "/agent/workspace")) {
      if (entry.path().filename().string().rfind("fill", 0) == 0 &&
          entry.path().filename() != "filled") {
        std::filesystem::remove(entry.path(), error);
      }
    }
  }

  std::vector<std::string> Run(std::vector<std::string> args) { return OnServer(std::move(args)); }

  std::string disk_;
  bool mounted_ = false;
};

TEST_F(DiskFullE2eTest, ARunStopsAtItsLastCheckpointAndResumesOnceThereIsSpace) {
  ASSERT_NO_FATAL_FAILURE(
      StartFakeLlm({"--script", WriteTestFile("script.json", kScript), "--api-key", kKey}));
  ChildOutput failed = Mend(Run({"run", disk_ + "/agent", "fill the disk"}), OnDisk());
  ASSERT_TRUE(failed.status.exited);
  EXPECT_NE(failed.status.code, 0);
  EXPECT_THAT(failed.err, HasSubstr("is full"));
  EXPECT_THAT(failed.err, HasSubstr("stopped at checkpoint"));
  EXPECT_THAT(failed.err, HasSubstr("mend resume run-"));
  const size_t at = failed.err.find("mend resume run-");
  ASSERT_NE(at, std::string::npos);
  const std::string run_id = failed.err.substr(at + 12, 20);

  // Nothing acknowledged is lost: the run and its tool call are in the store, readable while the
  // disk is still full.
  nlohmann::json shown = MendJson({"show", run_id}, OnDisk());
  ASSERT_TRUE(shown.is_object()) << shown;
  EXPECT_NE(shown.value("status", ""), "completed");

  FreeDisk();
  nlohmann::json resumed = MendJson(Run({"resume", run_id}), OnDisk());
  ASSERT_TRUE(resumed.is_object()) << resumed;
  EXPECT_EQ(resumed.value("status", ""), "completed");
  EXPECT_EQ(resumed.value("output", ""), "done");
}

TEST_F(DiskFullE2eTest, MemoryAndTheLessonQueueRefuseClearlyAndLoseNothing) {
  ASSERT_TRUE(Mend({"memory", "add", "the deploy window is Tuesday"}, OnDisk()).status.code == 0);
  ASSERT_GT(FillDisk(), 0u);

  ChildOutput fact = Mend({"memory", "add", std::string(60 << 10, 'f')}, OnDisk());
  EXPECT_NE(fact.status.code, 0);
  EXPECT_THAT(fact.err, HasSubstr("full"));
  ChildOutput lesson = Mend({"reflect", "enqueue", "--task", "deploy", "--trigger", "error",
                             "--outcome", std::string(60 << 10, 'e')},
                            OnDisk());
  EXPECT_NE(lesson.status.code, 0);
  EXPECT_THAT(lesson.err, ::testing::AnyOf(HasSubstr("full"), HasSubstr("space")));

  FreeDisk();
  EXPECT_EQ(Mend({"memory", "add", "the release freeze starts Friday"}, OnDisk()).status.code, 0);
  nlohmann::json facts = MendJson({"memory", "list"}, OnDisk());
  const std::string listed = facts.dump();
  EXPECT_THAT(listed, HasSubstr("the deploy window is Tuesday"));
  EXPECT_THAT(listed, HasSubstr("the release freeze starts Friday"));
}

// observe.db on the full disk: a write of spans fails whole with the disk named, and the spans
// written before stay; once there is space the same spans are written.
TEST_F(DiskFullE2eTest, ATraceWriteOnAFullDiskFailsWholeAndSucceedsOnceThereIsSpace) {
  Result<std::unique_ptr<obs::SpanStore>> store =
      obs::SpanStore::Open(disk_ + "/home/observe.db", "");
  ASSERT_TRUE(store.ok()) << store.status();
  MEND_ASSERT_OK((*store)->Write({obs::testing::MakeSpan(1, 1, 0, "run before", "run-a", 0, 1)}));
  ASSERT_GT(FillDisk(), 0u);
  std::vector<obs::SpanData> spans;
  for (int i = 0; i < 200; ++i) {
    obs::SpanData span = obs::testing::MakeSpan(2, i + 1, 0, "run during", "run-b", 0, 1);
    span.attributes.push_back({"payload", std::string(2048, 'p')});
    spans.push_back(std::move(span));
  }
  const Status refused = (*store)->Write(spans);
  EXPECT_THAT(refused, StatusIs(StatusCode::kResourceExhausted, HasSubstr("is full")));
  obs::TraceQuery query;
  Result<obs::TracePage> page = (*store)->ListTraces(query);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->total, 1);

  FreeDisk();
  MEND_EXPECT_OK((*store)->Write(spans));
  page = (*store)->ListTraces(query);
  ASSERT_TRUE(page.ok()) << page.status();
  EXPECT_EQ(page->total, 2);
}

}  // namespace
}  // namespace mend::testing
