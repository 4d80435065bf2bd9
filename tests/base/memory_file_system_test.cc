#include "mend/base/memory_file_system.h"

#include <gtest/gtest.h>

#include "tests/support/status_matchers.h"

namespace mend {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;

enum class Durability { kSync, kNoSync };

void Write(FileSystem& fs, const std::string& path, std::string_view data, Durability d,
           WriteMode mode = WriteMode::kTruncate) {
  auto file = fs.OpenWritable(path, mode);
  MEND_ASSERT_OK(file);
  MEND_ASSERT_OK((*file)->Append(data));
  if (d == Durability::kSync) {
    MEND_ASSERT_OK((*file)->Sync());
  }
  MEND_ASSERT_OK((*file)->Close());
}

std::string Contents(FileSystem& fs, const std::string& path) {
  Result<std::string> r = ReadFileToString(fs, path);
  return r.ok() ? *r : "<" + r.status().ToString() + ">";
}

// The entries of `dir`; a failure to list is reported and yields no names.
std::vector<std::string> Names(FileSystem& fs, const std::string& dir) {
  Result<std::vector<std::string>> r = fs.List(dir);
  EXPECT_THAT(r, IsOk());
  return r.ok() ? *r : std::vector<std::string>{};
}

class MemoryFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override { MEND_ASSERT_OK(fs_.CreateDirs("/q")); }
  MemoryFileSystem fs_;
};

TEST_F(MemoryFileSystemTest, UnsyncedWritesAreVisibleBeforeAPowerCut) {
  Write(fs_, "/q/a", "hello", Durability::kNoSync);
  EXPECT_EQ(Contents(fs_, "/q/a"), "hello");
  EXPECT_EQ(fs_.Stat("/q/a")->size, 5u);
}

TEST_F(MemoryFileSystemTest, SyncedFileInSyncedDirectorySurvivesCutPower) {
  Write(fs_, "/q/a", "hello", Durability::kSync);
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  fs_.CutPower();
  EXPECT_EQ(Contents(fs_, "/q/a"), "hello");
}

TEST_F(MemoryFileSystemTest, CutPowerDropsBytesWrittenAfterTheLastSync) {
  Write(fs_, "/q/a", "abc", Durability::kSync);
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  Write(fs_, "/q/a", "def", Durability::kNoSync, WriteMode::kAppend);
  EXPECT_EQ(Contents(fs_, "/q/a"), "abcdef");
  fs_.CutPower();
  EXPECT_EQ(Contents(fs_, "/q/a"), "abc");
}

TEST_F(MemoryFileSystemTest, SyncedFileWhoseDirectoryWasNeverSyncedDisappears) {
  Write(fs_, "/q/a", "hello", Durability::kSync);
  fs_.CutPower();
  EXPECT_THAT(fs_.Stat("/q/a"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(Names(fs_, "/q"), ::testing::IsEmpty());
}

TEST_F(MemoryFileSystemTest, EntrySyncedBeforeAnyDataSyncSurvivesEmpty) {
  Write(fs_, "/q/a", "hello", Durability::kNoSync);
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  fs_.CutPower();
  EXPECT_EQ(Contents(fs_, "/q/a"), "");
}

TEST_F(MemoryFileSystemTest, RenameNotFollowedBySyncDirIsUndone) {
  Write(fs_, "/q/old", "synced", Durability::kSync);
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  MEND_ASSERT_OK(fs_.Rename("/q/old", "/q/new"));
  EXPECT_THAT(Names(fs_, "/q"), ElementsAre("new"));
  fs_.CutPower();
  EXPECT_EQ(Contents(fs_, "/q/old"), "synced");
  EXPECT_THAT(fs_.Stat("/q/new"), StatusIs(StatusCode::kNotFound));
}

TEST_F(MemoryFileSystemTest, RenameOverATargetWithoutSyncDirBringsTheOldTargetBack) {
  Write(fs_, "/q/data", "v1", Durability::kSync);
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  Write(fs_, "/q/data.tmp", "v2", Durability::kSync);
  MEND_ASSERT_OK(fs_.Rename("/q/data.tmp", "/q/data"));
  EXPECT_EQ(Contents(fs_, "/q/data"), "v2");
  fs_.CutPower();
  EXPECT_EQ(Contents(fs_, "/q/data"), "v1");
  // The temporary was never made durable either.
  EXPECT_THAT(Names(fs_, "/q"), ElementsAre("data"));
}

TEST_F(MemoryFileSystemTest, RenameFollowedBySyncDirSurvives) {
  Write(fs_, "/q/data", "v1", Durability::kSync);
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  Write(fs_, "/q/data.tmp", "v2", Durability::kSync);
  MEND_ASSERT_OK(fs_.Rename("/q/data.tmp", "/q/data"));
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  fs_.CutPower();
  EXPECT_EQ(Contents(fs_, "/q/data"), "v2");
  EXPECT_THAT(Names(fs_, "/q"), ElementsAre("data"));
}

TEST_F(MemoryFileSystemTest, RenamedFileWithUnsyncedDataKeepsOnlySyncedBytes) {
  Write(fs_, "/q/a", "abc", Durability::kSync);
  Write(fs_, "/q/a", "def", Durability::kNoSync, WriteMode::kAppend);
  MEND_ASSERT_OK(fs_.Rename("/q/a", "/q/b"));
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  fs_.CutPower();
  EXPECT_EQ(Contents(fs_, "/q/b"), "abc");
}

TEST_F(MemoryFileSystemTest, UnlinkNotFollowedBySyncDirComesBack) {
  Write(fs_, "/q/a", "keep", Durability::kSync);
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  MEND_ASSERT_OK(fs_.Unlink("/q/a"));
  EXPECT_FALSE(fs_.Exists("/q/a"));
  fs_.CutPower();
  EXPECT_EQ(Contents(fs_, "/q/a"), "keep");
}

TEST_F(MemoryFileSystemTest, UnlinkFollowedBySyncDirIsDurable) {
  Write(fs_, "/q/a", "gone", Durability::kSync);
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  MEND_ASSERT_OK(fs_.Unlink("/q/a"));
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  fs_.CutPower();
  EXPECT_FALSE(fs_.Exists("/q/a"));
}

TEST_F(MemoryFileSystemTest, SyncDirOnlyCoversItsOwnDirectory) {
  MEND_ASSERT_OK(fs_.CreateDirs("/q/sub"));
  Write(fs_, "/q/sub/a", "x", Durability::kSync);
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  fs_.CutPower();
  EXPECT_TRUE(fs_.Exists("/q/sub"));  // Directories are durable once created.
  EXPECT_FALSE(fs_.Exists("/q/sub/a"));
}

TEST_F(MemoryFileSystemTest, DropUnsyncedDataKeepsDirectoryEntries) {
  Write(fs_, "/q/a", "abc", Durability::kSync);
  Write(fs_, "/q/a", "def", Durability::kNoSync, WriteMode::kAppend);
  Write(fs_, "/q/b", "new", Durability::kNoSync);
  fs_.DropUnsyncedData();
  EXPECT_EQ(Contents(fs_, "/q/a"), "abc");
  EXPECT_EQ(Contents(fs_, "/q/b"), "");
}

TEST_F(MemoryFileSystemTest, CutPowerInvalidatesOpenFiles) {
  Write(fs_, "/q/a", "abc", Durability::kSync);
  MEND_ASSERT_OK(fs_.SyncDir("/q"));
  auto writer = fs_.OpenWritable("/q/a", WriteMode::kAppend);
  auto reader = fs_.OpenReadable("/q/a");
  MEND_ASSERT_OK(writer);
  MEND_ASSERT_OK(reader);
  fs_.CutPower();
  std::string out;
  EXPECT_THAT((*writer)->Append("x"), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT((*writer)->Sync(), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT((*reader)->Read(10, &out), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_EQ(Contents(fs_, "/q/a"), "abc");
}

TEST_F(MemoryFileSystemTest, LockIsExclusiveAndReleasedOnDestruction) {
  auto lock = fs_.Lock("/q/LOCK");
  MEND_ASSERT_OK(lock);
  EXPECT_TRUE(fs_.Exists("/q/LOCK"));
  EXPECT_THAT(fs_.Lock("/q/LOCK"), StatusIs(StatusCode::kUnavailable));
  lock->reset();
  EXPECT_THAT(fs_.Lock("/q/LOCK"), IsOk());
}

TEST_F(MemoryFileSystemTest, CutPowerReleasesLocks) {
  auto lock = fs_.Lock("/q/LOCK");
  MEND_ASSERT_OK(lock);
  fs_.CutPower();
  auto again = fs_.Lock("/q/LOCK");
  MEND_ASSERT_OK(again);
  lock->reset();  // The stale lock must not release the new holder's lock.
  EXPECT_THAT(fs_.Lock("/q/LOCK"), StatusIs(StatusCode::kUnavailable));
}

TEST_F(MemoryFileSystemTest, ListReturnsSortedDirectChildren) {
  MEND_ASSERT_OK(fs_.CreateDirs("/q/sub/deep"));
  Write(fs_, "/q/b", "", Durability::kNoSync);
  Write(fs_, "/q/a.wal", "", Durability::kNoSync);
  Write(fs_, "/q/sub/x", "", Durability::kNoSync);
  EXPECT_THAT(Names(fs_, "/q"), ElementsAre("a.wal", "b", "sub"));
  EXPECT_THAT(Names(fs_, "/q/sub/"), ElementsAre("deep", "x"));
  EXPECT_THAT(fs_.List("/nope"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(fs_.List("/q/b"), StatusIs(StatusCode::kFailedPrecondition));
}

TEST_F(MemoryFileSystemTest, OpenErrorsCarryCanonicalCodes) {
  Write(fs_, "/q/a", "x", Durability::kNoSync);
  EXPECT_THAT(fs_.OpenWritable("/q/a", WriteMode::kCreateExclusive),
              StatusIs(StatusCode::kAlreadyExists, ::testing::HasSubstr("/q/a")));
  EXPECT_THAT(fs_.OpenWritable("/missing/a", WriteMode::kTruncate),
              StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(fs_.OpenReadable("/q/none"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(fs_.OpenReadable("/q"), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(fs_.Unlink("/q/none"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(fs_.Rename("/q/none", "/q/b"), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(fs_.CreateDirs("/q/a/sub"), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(fs_.SyncDir("/nope"), StatusIs(StatusCode::kNotFound));
}

TEST_F(MemoryFileSystemTest, WriteModesTruncateAppendAndCreate) {
  Write(fs_, "/q/a", "abc", Durability::kNoSync);
  Write(fs_, "/q/a", "de", Durability::kNoSync, WriteMode::kAppend);
  EXPECT_EQ(Contents(fs_, "/q/a"), "abcde");
  Write(fs_, "/q/a", "z", Durability::kNoSync, WriteMode::kTruncate);
  EXPECT_EQ(Contents(fs_, "/q/a"), "z");
  Write(fs_, "/q/new", "n", Durability::kNoSync, WriteMode::kCreateExclusive);
  EXPECT_EQ(Contents(fs_, "/q/new"), "n");
}

TEST_F(MemoryFileSystemTest, ClosedFileRejectsWrites) {
  auto file = fs_.OpenWritable("/q/a", WriteMode::kTruncate);
  MEND_ASSERT_OK(file);
  MEND_ASSERT_OK((*file)->Close());
  EXPECT_THAT((*file)->Append("x"), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT((*file)->Close(), StatusIs(StatusCode::kFailedPrecondition));
}

TEST_F(MemoryFileSystemTest, StatReportsSizeAndKind) {
  Write(fs_, "/q/a", "12345", Durability::kNoSync);
  auto file = fs_.Stat("/q/a");
  MEND_ASSERT_OK(file);
  EXPECT_EQ(file->size, 5u);
  EXPECT_FALSE(file->is_directory);
  EXPECT_TRUE(fs_.Stat("/q")->is_directory);
  EXPECT_TRUE(fs_.Stat("/")->is_directory);
}

TEST_F(MemoryFileSystemTest, PathsAreNormalized) {
  Write(fs_, "/q//a", "x", Durability::kNoSync);
  EXPECT_EQ(Contents(fs_, "/q/./a"), "x");
  MEND_ASSERT_OK(fs_.CreateDirs("rel/dir"));
  Write(fs_, "rel/dir/f", "y", Durability::kNoSync);
  EXPECT_THAT(Names(fs_, "rel"), ElementsAre("dir"));
  EXPECT_EQ(Contents(fs_, "./rel/dir/f"), "y");
}

TEST_F(MemoryFileSystemTest, ReadsSeeTheFileInChunks) {
  Write(fs_, "/q/a", "abcdef", Durability::kNoSync);
  auto reader = fs_.OpenReadable("/q/a");
  MEND_ASSERT_OK(reader);
  std::string out;
  MEND_ASSERT_OK((*reader)->Read(4, &out));
  EXPECT_EQ(out, "abcd");
  MEND_ASSERT_OK((*reader)->Read(4, &out));
  EXPECT_EQ(out, "ef");
  MEND_ASSERT_OK((*reader)->Read(4, &out));
  EXPECT_EQ(out, "");
}

TEST(MemoryFileSystemLifetimeTest, HandlesOutliveTheFileSystem) {
  auto fs = std::make_unique<MemoryFileSystem>();
  MEND_ASSERT_OK(fs->CreateDirs("/d"));
  auto file = fs->OpenWritable("/d/a", WriteMode::kTruncate);
  auto lock = fs->Lock("/d/LOCK");
  MEND_ASSERT_OK(file);
  MEND_ASSERT_OK(lock);
  fs.reset();
  EXPECT_THAT((*file)->Append("x"), IsOk());
  lock->reset();
}

}  // namespace
}  // namespace mend
