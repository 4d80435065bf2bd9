#include "mend/base/fault_injection_file_system.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <functional>

#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

class FaultInjectionFileSystemTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MEND_ASSERT_OK(base_.CreateDirs("/d"));
    auto file = base_.OpenWritable("/d/f", WriteMode::kTruncate);
    MEND_ASSERT_OK(file);
    MEND_ASSERT_OK((*file)->Append("content"));
    MEND_ASSERT_OK((*file)->Sync());
    MEND_ASSERT_OK(base_.SyncDir("/d"));
  }

  std::string Contents(const std::string& path) {
    Result<std::string> r = ReadFileToString(base_, path);
    return r.ok() ? *r : "<" + r.status().ToString() + ">";
  }

  MemoryFileSystem base_;
  FaultInjectionFileSystem fs_{&base_};
};

struct OpCase {
  FsOp op;
  std::function<Status(FileSystem&)> run;
};

std::vector<OpCase> AllOps() {
  auto write_op = [](FileSystem& fs, const std::function<Status(WritableFile&)>& f) {
    auto file = fs.OpenWritable("/d/w", WriteMode::kAppend);
    return file.ok() ? f(**file) : file.status();
  };
  return {
      {FsOp::kOpen, [](FileSystem& fs) { return fs.OpenReadable("/d/f").status(); }},
      {FsOp::kRead,
       [](FileSystem& fs) {
         auto file = fs.OpenReadable("/d/f");
         std::string out;
         return file.ok() ? (*file)->Read(3, &out) : file.status();
       }},
      {FsOp::kWrite,
       [=](FileSystem& fs) { return write_op(fs, [](WritableFile& f) { return f.Append("x"); }); }},
      {FsOp::kSync,
       [=](FileSystem& fs) { return write_op(fs, [](WritableFile& f) { return f.Sync(); }); }},
      {FsOp::kClose,
       [=](FileSystem& fs) { return write_op(fs, [](WritableFile& f) { return f.Close(); }); }},
      {FsOp::kRename, [](FileSystem& fs) { return fs.Rename("/d/f", "/d/g"); }},
      {FsOp::kSyncDir, [](FileSystem& fs) { return fs.SyncDir("/d"); }},
      {FsOp::kUnlink, [](FileSystem& fs) { return fs.Unlink("/d/f"); }},
      {FsOp::kList, [](FileSystem& fs) { return fs.List("/d").status(); }},
      {FsOp::kCreateDirs, [](FileSystem& fs) { return fs.CreateDirs("/d/sub"); }},
      {FsOp::kStat, [](FileSystem& fs) { return fs.Stat("/d/f").status(); }},
      {FsOp::kLock, [](FileSystem& fs) { return fs.Lock("/d/LOCK").status(); }},
  };
}

TEST_F(FaultInjectionFileSystemTest, FailNextHitsEveryKindOfOperationOnce) {
  for (const OpCase& c : AllOps()) {
    SCOPED_TRACE(static_cast<int>(c.op));
    MemoryFileSystem base;
    MEND_ASSERT_OK(base.CreateDirs("/d"));
    auto file = base.OpenWritable("/d/f", WriteMode::kTruncate);
    MEND_ASSERT_OK(file);
    FaultInjectionFileSystem fs(&base);
    fs.FailNext(c.op, ENOSPC);
    EXPECT_THAT(c.run(fs), StatusIs(StatusCode::kResourceExhausted, HasSubstr("injected")));
    EXPECT_EQ(fs.Count(c.op), 1);
    EXPECT_THAT(c.run(fs), IsOk());
    EXPECT_EQ(fs.Count(c.op), 2);
  }
}

TEST_F(FaultInjectionFileSystemTest, ErrnoDecidesTheCode) {
  fs_.FailNext(FsOp::kSync, EIO);
  auto file = fs_.OpenWritable("/d/f", WriteMode::kAppend);
  MEND_ASSERT_OK(file);
  EXPECT_THAT((*file)->Sync(), StatusIs(StatusCode::kInternal, HasSubstr("/d/f")));
  fs_.FailNext(FsOp::kOpen, EACCES);
  EXPECT_THAT(fs_.OpenReadable("/d/f"), StatusIs(StatusCode::kPermissionDenied));
}

TEST_F(FaultInjectionFileSystemTest, FailAfterLetsNOperationsThroughThenFailsOnce) {
  fs_.FailAfter(FsOp::kWrite, 3, EIO);
  auto file = fs_.OpenWritable("/d/f", WriteMode::kAppend);
  MEND_ASSERT_OK(file);
  for (int i = 0; i < 3; ++i) MEND_EXPECT_OK((*file)->Append("1"));
  EXPECT_THAT((*file)->Append("X"), StatusIs(StatusCode::kInternal));
  MEND_EXPECT_OK((*file)->Append("2"));
  EXPECT_EQ(fs_.Count(FsOp::kWrite), 5);
  EXPECT_EQ(Contents("/d/f"), "content1112");  // The failed write had no effect.
}

TEST_F(FaultInjectionFileSystemTest, FailAlwaysLastsUntilClearFaults) {
  fs_.FailAlways(FsOp::kStat, EIO);
  for (int i = 0; i < 3; ++i) EXPECT_THAT(fs_.Stat("/d/f"), StatusIs(StatusCode::kInternal));
  EXPECT_FALSE(fs_.Exists("/d/f"));
  fs_.ClearFaults();
  EXPECT_TRUE(fs_.Exists("/d/f"));
  EXPECT_EQ(fs_.Count(FsOp::kStat), 5);  // Counts survive ClearFaults.
}

TEST_F(FaultInjectionFileSystemTest, FailedOperationsHaveNoEffect) {
  fs_.FailNext(FsOp::kRename, EIO);
  EXPECT_THAT(fs_.Rename("/d/f", "/d/g"), StatusIs(StatusCode::kInternal));
  EXPECT_TRUE(base_.Exists("/d/f"));
  EXPECT_FALSE(base_.Exists("/d/g"));
  fs_.FailNext(FsOp::kUnlink, EIO);
  EXPECT_THAT(fs_.Unlink("/d/f"), StatusIs(StatusCode::kInternal));
  EXPECT_TRUE(base_.Exists("/d/f"));
}

TEST_F(FaultInjectionFileSystemTest, TornWriteKeepsTheFirstHalf) {
  fs_.SetTornWrites(true);
  fs_.FailNext(FsOp::kWrite, EIO);
  auto file = fs_.OpenWritable("/d/t", WriteMode::kTruncate);
  MEND_ASSERT_OK(file);
  EXPECT_THAT((*file)->Append("abcdef"), StatusIs(StatusCode::kInternal));
  EXPECT_EQ(Contents("/d/t"), "abc");
}

TEST_F(FaultInjectionFileSystemTest, FailingWriteWithoutTornWritesWritesNothing) {
  fs_.FailNext(FsOp::kWrite, ENOSPC);
  auto file = fs_.OpenWritable("/d/t", WriteMode::kTruncate);
  MEND_ASSERT_OK(file);
  EXPECT_THAT((*file)->Append("abcdef"), StatusIs(StatusCode::kResourceExhausted));
  EXPECT_EQ(Contents("/d/t"), "");
}

TEST_F(FaultInjectionFileSystemTest, ReadFaultsReachReadExactly) {
  auto file = fs_.OpenReadable("/d/f");
  MEND_ASSERT_OK(file);
  fs_.FailNext(FsOp::kRead, EIO);
  std::string out;
  EXPECT_THAT((*file)->ReadExactly(7, &out), StatusIs(StatusCode::kInternal));
}

TEST_F(FaultInjectionFileSystemTest, CutPowerAfterAFailedSyncDirKeepsTheOldContents) {
  MEND_ASSERT_OK(WriteFileAtomically(fs_, "/d/state", "v1"));
  fs_.FailNext(FsOp::kSyncDir, EIO);
  EXPECT_THAT(WriteFileAtomically(fs_, "/d/state", "v2"), StatusIs(StatusCode::kInternal));
  EXPECT_EQ(Contents("/d/state"), "v2");
  MEND_ASSERT_OK(fs_.CutPower());
  EXPECT_EQ(Contents("/d/state"), "v1");
}

TEST_F(FaultInjectionFileSystemTest, DropUnsyncedDataForwardsToMemoryBase) {
  auto file = fs_.OpenWritable("/d/f", WriteMode::kAppend);
  MEND_ASSERT_OK(file);
  MEND_ASSERT_OK((*file)->Append("+unsynced"));
  MEND_ASSERT_OK(fs_.DropUnsyncedData());
  EXPECT_EQ(Contents("/d/f"), "content");
}

TEST(FaultInjectionFileSystemPosixTest, PowerControlNeedsAMemoryBase) {
  FaultInjectionFileSystem fs(PosixFileSystem::Default());
  EXPECT_THAT(fs.CutPower(), StatusIs(StatusCode::kUnimplemented));
  EXPECT_THAT(fs.DropUnsyncedData(), StatusIs(StatusCode::kUnimplemented));
}

}  // namespace
}  // namespace mend
