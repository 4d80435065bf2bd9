#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>

#include "mend/base/file_system.h"
#include "tests/support/status_matchers.h"

namespace mend {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

class PosixFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = JoinPath(::testing::TempDir(), "mend_posix_fs_XXXXXX");
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string Path(std::string_view name) const { return JoinPath(dir_, name); }

  void Write(const std::string& path, std::string_view data,
             WriteMode mode = WriteMode::kTruncate) {
    auto file = fs_.OpenWritable(path, mode);
    MEND_ASSERT_OK(file);
    MEND_ASSERT_OK((*file)->Append(data));
    MEND_ASSERT_OK((*file)->Sync());
    MEND_ASSERT_OK((*file)->Close());
  }

  std::string Read(const std::string& path) {
    Result<std::string> r = ReadFileToString(fs_, path);
    return r.ok() ? *r : "<" + r.status().ToString() + ">";
  }

  PosixFileSystem fs_;
  std::string dir_;
};

TEST_F(PosixFileSystemTest, WriteThenReadRoundTrips) {
  Write(Path("a"), "hello");
  EXPECT_EQ(Read(Path("a")), "hello");
  Write(Path("a"), " world", WriteMode::kAppend);
  EXPECT_EQ(Read(Path("a")), "hello world");
  Write(Path("a"), "x", WriteMode::kTruncate);
  EXPECT_EQ(Read(Path("a")), "x");
}

TEST_F(PosixFileSystemTest, CreateExclusiveFailsOnExistingFile) {
  Write(Path("a"), "1");
  EXPECT_THAT(fs_.OpenWritable(Path("a"), WriteMode::kCreateExclusive),
              StatusIs(StatusCode::kAlreadyExists, HasSubstr(Path("a"))));
}

TEST_F(PosixFileSystemTest, MissingFilesAreNotFoundWithThePathInTheMessage) {
  EXPECT_THAT(fs_.OpenReadable(Path("none")),
              StatusIs(StatusCode::kNotFound, HasSubstr("open " + Path("none"))));
  EXPECT_THAT(fs_.OpenWritable(Path("no/dir"), WriteMode::kTruncate),
              StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(fs_.Unlink(Path("none")), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(fs_.Stat(Path("none")), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(fs_.List(Path("none")), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(fs_.SyncDir(Path("none")), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(fs_.Rename(Path("none"), Path("b")), StatusIs(StatusCode::kNotFound));
}

TEST_F(PosixFileSystemTest, ReadExactlyReturnsLargeRecordsWhole) {
  const std::string big(3 * 1024 * 1024 + 7, 'r');
  Write(Path("big"), big + "tail");
  auto file = fs_.OpenReadable(Path("big"));
  MEND_ASSERT_OK(file);
  std::string out;
  MEND_ASSERT_OK((*file)->ReadExactly(big.size(), &out));
  EXPECT_EQ(out, big);
  MEND_ASSERT_OK((*file)->ReadExactly(4, &out));
  EXPECT_EQ(out, "tail");
}

TEST_F(PosixFileSystemTest, ReadExactlyPastTheEndIsDataLoss) {
  Write(Path("short"), "abc");
  auto file = fs_.OpenReadable(Path("short"));
  MEND_ASSERT_OK(file);
  std::string out;
  EXPECT_THAT((*file)->ReadExactly(10, &out), StatusIs(StatusCode::kDataLoss));
}

TEST_F(PosixFileSystemTest, RenameReplacesTheTarget) {
  Write(Path("new"), "v2");
  Write(Path("cur"), "v1");
  MEND_ASSERT_OK(fs_.Rename(Path("new"), Path("cur")));
  MEND_ASSERT_OK(fs_.SyncDir(dir_));
  EXPECT_EQ(Read(Path("cur")), "v2");
  EXPECT_FALSE(fs_.Exists(Path("new")));
}

TEST_F(PosixFileSystemTest, UnlinkRemovesTheFile) {
  Write(Path("a"), "x");
  MEND_ASSERT_OK(fs_.Unlink(Path("a")));
  EXPECT_FALSE(fs_.Exists(Path("a")));
}

TEST_F(PosixFileSystemTest, ListReturnsSortedNamesWithoutDots) {
  Write(Path("b"), "");
  Write(Path("a"), "");
  MEND_ASSERT_OK(fs_.CreateDirs(Path("c")));
  auto names = fs_.List(dir_);
  MEND_ASSERT_OK(names);
  EXPECT_THAT(*names, ElementsAre("a", "b", "c"));
}

TEST_F(PosixFileSystemTest, CreateDirsMakesParentsAndIsIdempotent) {
  const std::string deep = Path("x/y/z");
  MEND_ASSERT_OK(fs_.CreateDirs(deep));
  MEND_ASSERT_OK(fs_.CreateDirs(deep));
  auto info = fs_.Stat(deep);
  MEND_ASSERT_OK(info);
  EXPECT_TRUE(info->is_directory);
  Write(Path("file"), "");
  EXPECT_THAT(fs_.CreateDirs(Path("file/sub")), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(fs_.CreateDirs(Path("file")), StatusIs(StatusCode::kFailedPrecondition));
}

TEST_F(PosixFileSystemTest, StatReportsSize) {
  Write(Path("a"), "12345");
  auto info = fs_.Stat(Path("a"));
  MEND_ASSERT_OK(info);
  EXPECT_EQ(info->size, 5u);
  EXPECT_FALSE(info->is_directory);
}

TEST_F(PosixFileSystemTest, ClosedFileRejectsOperations) {
  auto file = fs_.OpenWritable(Path("a"), WriteMode::kTruncate);
  MEND_ASSERT_OK(file);
  MEND_ASSERT_OK((*file)->Close());
  EXPECT_THAT((*file)->Append("x"), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT((*file)->Sync(), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT((*file)->Close(), StatusIs(StatusCode::kFailedPrecondition));
}

TEST_F(PosixFileSystemTest, SecondLockInTheSameProcessIsUnavailable) {
  auto lock = fs_.Lock(Path("LOCK"));
  MEND_ASSERT_OK(lock);
  EXPECT_TRUE(fs_.Exists(Path("LOCK")));
  EXPECT_THAT(fs_.Lock(Path("LOCK")), StatusIs(StatusCode::kUnavailable, HasSubstr("LOCK")));
  lock->reset();
  EXPECT_THAT(fs_.Lock(Path("LOCK")), IsOk());
}

TEST_F(PosixFileSystemTest, LockHeldByAnotherProcessIsUnavailable) {
  int locked[2];
  int release[2];
  ASSERT_EQ(::pipe(locked), 0);
  ASSERT_EQ(::pipe(release), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child takes the lock, reports it, and holds it until told to exit.
    auto lock = fs_.Lock(Path("LOCK"));
    const char ok = lock.ok() ? 'y' : 'n';
    char ignored;
    if (::write(locked[1], &ok, 1) != 1 || ::read(release[0], &ignored, 1) < 0) ::_exit(2);
    ::_exit(0);
  }
  char ok = 0;
  ASSERT_EQ(::read(locked[0], &ok, 1), 1);
  ASSERT_EQ(ok, 'y');
  EXPECT_THAT(fs_.Lock(Path("LOCK")), StatusIs(StatusCode::kUnavailable));
  ASSERT_EQ(::write(release[1], "x", 1), 1);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_THAT(fs_.Lock(Path("LOCK")), IsOk());  // The child's exit released it.
  for (int fd : {locked[0], locked[1], release[0], release[1]}) ::close(fd);
}

TEST_F(PosixFileSystemTest, WriteFileAtomicallyReplacesContentsAndLeavesNoTemporary) {
  MEND_ASSERT_OK(WriteFileAtomically(fs_, Path("state"), "one"));
  MEND_ASSERT_OK(WriteFileAtomically(fs_, Path("state"), "two"));
  EXPECT_EQ(Read(Path("state")), "two");
  auto names = fs_.List(dir_);
  MEND_ASSERT_OK(names);
  EXPECT_THAT(*names, ElementsAre("state"));
}

TEST_F(PosixFileSystemTest, NewFilesArePrivateToTheirUser) {
  Write(Path("a"), "secret");
  MEND_ASSERT_OK(WriteFileAtomically(fs_, Path("b"), "secret"));
  MEND_ASSERT_OK(fs_.Lock(Path("LOCK")));
  for (const char* name : {"a", "b", "LOCK"}) {
    EXPECT_EQ(std::filesystem::status(Path(name)).permissions(),
              std::filesystem::perms::owner_read | std::filesystem::perms::owner_write)
        << name;
  }
}

TEST_F(PosixFileSystemTest, NewDirectoriesArePrivateToTheirUser) {
  MEND_ASSERT_OK(fs_.CreateDirs(Path("x/y")));
  for (const char* name : {"x", "x/y"}) {
    EXPECT_EQ(std::filesystem::status(Path(name)).permissions(), std::filesystem::perms::owner_all)
        << name;
  }
}

TEST(PosixFileSystemDefaultTest, DefaultIsASingleton) {
  EXPECT_EQ(PosixFileSystem::Default(), PosixFileSystem::Default());
}

}  // namespace
}  // namespace mend
