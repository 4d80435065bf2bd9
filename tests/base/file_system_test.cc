#include "mend/base/file_system.h"

#include <gtest/gtest.h>

#include <cerrno>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;

TEST(PathTest, JoinPath) {
  EXPECT_EQ(JoinPath("a/b", "c"), "a/b/c");
  EXPECT_EQ(JoinPath("a/b/", "c"), "a/b/c");
  EXPECT_EQ(JoinPath("a", "/c"), "a/c");
  EXPECT_EQ(JoinPath("", "c"), "c");
  EXPECT_EQ(JoinPath("a", ""), "a");
  EXPECT_EQ(JoinPath("/", "c"), "/c");
}

TEST(PathTest, DirName) {
  EXPECT_EQ(DirName("a/b/c"), "a/b");
  EXPECT_EQ(DirName("a/b/c/"), "a/b");
  EXPECT_EQ(DirName("/c"), "/");
  EXPECT_EQ(DirName("c"), ".");
  EXPECT_EQ(DirName("/"), "/");
}

TEST(PathTest, BaseName) {
  EXPECT_EQ(BaseName("a/b/c"), "c");
  EXPECT_EQ(BaseName("a/b/"), "b");
  EXPECT_EQ(BaseName("c"), "c");
  EXPECT_EQ(BaseName("/"), "/");
}

TEST(PathTest, NormalizePath) {
  EXPECT_EQ(NormalizePath("/tmp/x/agents/notes/../../ws"), "/tmp/x/ws");
  EXPECT_EQ(NormalizePath("/tmp/x/ws/"), "/tmp/x/ws");
  EXPECT_EQ(NormalizePath("/tmp//x/./ws"), "/tmp/x/ws");
  EXPECT_EQ(NormalizePath("a/./b"), "a/b");
  EXPECT_EQ(NormalizePath("../a"), "../a");
  EXPECT_EQ(NormalizePath("a/../../b"), "../b");
  EXPECT_EQ(NormalizePath("/.."), "/");
  EXPECT_EQ(NormalizePath("/"), "/");
  EXPECT_EQ(NormalizePath("a/.."), ".");
  EXPECT_EQ(NormalizePath(""), "");
}

// Hands out at most one byte per Read, like a pipe or a slow disk.
class TrickleFile final : public ReadableFile {
 public:
  explicit TrickleFile(std::string data) : data_(std::move(data)) {}
  Status Read(size_t n, std::string* out) override {
    out->assign(data_, pos_, n == 0 ? 0 : 1);
    pos_ += out->size();
    return OkStatus();
  }

 private:
  std::string data_;
  size_t pos_ = 0;
};

TEST(ReadExactlyTest, LoopsOverShortReads) {
  TrickleFile file("abcdef");
  std::string out;
  MEND_ASSERT_OK(file.ReadExactly(4, &out));
  EXPECT_EQ(out, "abcd");
  EXPECT_THAT(file.ReadExactly(4, &out), StatusIs(StatusCode::kDataLoss));
}

TEST(ReadExactlyTest, ZeroBytesIsOk) {
  TrickleFile file("");
  std::string out = "stale";
  MEND_ASSERT_OK(file.ReadExactly(0, &out));
  EXPECT_EQ(out, "");
}

TEST(ReadFileToStringTest, ReadsFilesLargerThanOneChunk) {
  MemoryFileSystem fs;
  const std::string big(200 * 1024 + 3, 'x');
  MEND_ASSERT_OK(WriteFileAtomically(fs, "/big", big));
  auto got = ReadFileToString(fs, "/big");
  MEND_ASSERT_OK(got);
  EXPECT_EQ(*got, big);
  EXPECT_THAT(ReadFileToString(fs, "/none"), StatusIs(StatusCode::kNotFound));
}

TEST(WriteFileAtomicallyTest, SurvivesAPowerCut) {
  MemoryFileSystem fs;
  MEND_ASSERT_OK(fs.CreateDirs("/d"));
  MEND_ASSERT_OK(WriteFileAtomically(fs, "/d/state", "v1"));
  fs.CutPower();
  auto got = ReadFileToString(fs, "/d/state");
  MEND_ASSERT_OK(got);
  EXPECT_EQ(*got, "v1");
}

TEST(WriteFileAtomicallyTest, AFailedSyncLeavesTheOldContentsAndNoTemporary) {
  MemoryFileSystem memory;
  FaultInjectionFileSystem fs(&memory);
  MEND_ASSERT_OK(fs.CreateDirs("/d"));
  MEND_ASSERT_OK(WriteFileAtomically(fs, "/d/state", "v1"));
  fs.FailNext(FsOp::kSync, EIO);
  EXPECT_THAT(WriteFileAtomically(fs, "/d/state", "v2"), StatusIs(StatusCode::kInternal));
  auto got = ReadFileToString(fs, "/d/state");
  MEND_ASSERT_OK(got);
  EXPECT_EQ(*got, "v1");
  auto names = fs.List("/d");
  MEND_ASSERT_OK(names);
  EXPECT_THAT(*names, ElementsAre("state"));
}

}  // namespace
}  // namespace mend
