// RandomAccessFile conformance: every FileSystem that implements OpenRandomAccess passes the same
// tests. Power cuts and injected faults, which only the memory and fault-injecting filesystems
// have, are tested below the shared set.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <functional>
#include <memory>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/file_system.h"
#include "mend/base/memory_file_system.h"
#include "tests/support/status_matchers.h"

namespace mend {
namespace {

using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

// A filesystem under test with a fresh, empty directory to work in.
class FsFixture {
 public:
  virtual ~FsFixture() = default;
  virtual FileSystem& fs() = 0;
  virtual std::string dir() const = 0;
};

class PosixFixture final : public FsFixture {
 public:
  PosixFixture() {
    std::string pattern = JoinPath(::testing::TempDir(), "mend_random_access_XXXXXX");
    if (::mkdtemp(pattern.data()) != nullptr) dir_ = pattern;
  }
  ~PosixFixture() override { std::filesystem::remove_all(dir_); }
  FileSystem& fs() override { return fs_; }
  std::string dir() const override { return dir_; }

 private:
  PosixFileSystem fs_;
  std::string dir_;
};

class MemoryFixture final : public FsFixture {
 public:
  MemoryFixture() { (void)fs_.CreateDirs("/d"); }
  FileSystem& fs() override { return fs_; }
  std::string dir() const override { return "/d"; }

 private:
  MemoryFileSystem fs_;
};

class FaultFixture final : public FsFixture {
 public:
  FaultFixture() { (void)fs_.CreateDirs("/d"); }
  FileSystem& fs() override { return fs_; }
  std::string dir() const override { return "/d"; }

 private:
  MemoryFileSystem memory_;
  FaultInjectionFileSystem fs_{&memory_};
};

struct FixtureParam {
  std::string name;
  std::function<std::unique_ptr<FsFixture>()> make;
};

class RandomAccessFileTest : public ::testing::TestWithParam<FixtureParam> {
 protected:
  void SetUp() override {
    fixture_ = GetParam().make();
    ASSERT_FALSE(fixture_->dir().empty());
  }
  FileSystem& fs() { return fixture_->fs(); }
  std::string Path(std::string_view name) const { return JoinPath(fixture_->dir(), name); }

  std::unique_ptr<RandomAccessFile> Open(const std::string& path, bool create = true) {
    auto file = fs().OpenRandomAccess(path, create);
    EXPECT_TRUE(file.ok()) << file.status();
    return file.ok() ? std::move(file).value() : nullptr;
  }

  std::string ReadAll(RandomAccessFile& file) {
    std::string out;
    Status s = file.ReadAt(0, 1 << 20, &out);
    return s.ok() ? out : "<" + s.ToString() + ">";
  }

  std::unique_ptr<FsFixture> fixture_;
};

TEST_P(RandomAccessFileTest, CreatesAnEmptyFileOnlyWhenAsked) {
  EXPECT_THAT(fs().OpenRandomAccess(Path("none"), /*create=*/false),
              StatusIs(StatusCode::kNotFound, HasSubstr(Path("none"))));
  EXPECT_FALSE(fs().Exists(Path("none")));
  auto file = Open(Path("f"));
  ASSERT_NE(file, nullptr);
  auto size = file->Size();
  MEND_ASSERT_OK(size);
  EXPECT_EQ(*size, 0u);
  EXPECT_TRUE(fs().Exists(Path("f")));
}

TEST_P(RandomAccessFileTest, WritesInPlaceAndReadsAtOffsets) {
  auto file = Open(Path("f"));
  ASSERT_NE(file, nullptr);
  MEND_ASSERT_OK(file->WriteAt(0, "hello world"));
  MEND_ASSERT_OK(file->WriteAt(6, "WORLD"));
  std::string out;
  MEND_ASSERT_OK(file->ReadAt(6, 5, &out));
  EXPECT_EQ(out, "WORLD");
  MEND_ASSERT_OK(file->ReadAt(0, 5, &out));
  EXPECT_EQ(out, "hello");
  EXPECT_EQ(ReadAll(*file), "hello WORLD");
}

TEST_P(RandomAccessFileTest, ReadsAreShortOnlyAtTheEnd) {
  auto file = Open(Path("f"));
  ASSERT_NE(file, nullptr);
  MEND_ASSERT_OK(file->WriteAt(0, "abcdef"));
  std::string out = "stale";
  MEND_ASSERT_OK(file->ReadAt(4, 10, &out));
  EXPECT_EQ(out, "ef");
  MEND_ASSERT_OK(file->ReadAt(6, 10, &out));
  EXPECT_EQ(out, "");
  MEND_ASSERT_OK(file->ReadAt(100, 10, &out));
  EXPECT_EQ(out, "");
}

TEST_P(RandomAccessFileTest, WritingPastTheEndFillsTheGapWithZeros) {
  auto file = Open(Path("f"));
  ASSERT_NE(file, nullptr);
  MEND_ASSERT_OK(file->WriteAt(4, "xy"));
  EXPECT_EQ(ReadAll(*file), std::string("\0\0\0\0xy", 6));
  auto size = file->Size();
  MEND_ASSERT_OK(size);
  EXPECT_EQ(*size, 6u);
}

TEST_P(RandomAccessFileTest, TruncateShrinksAndGrows) {
  auto file = Open(Path("f"));
  ASSERT_NE(file, nullptr);
  MEND_ASSERT_OK(file->WriteAt(0, "abcdef"));
  MEND_ASSERT_OK(file->Truncate(2));
  EXPECT_EQ(ReadAll(*file), "ab");
  MEND_ASSERT_OK(file->Truncate(4));
  EXPECT_EQ(ReadAll(*file), std::string("ab\0\0", 4));
  auto size = file->Size();
  MEND_ASSERT_OK(size);
  EXPECT_EQ(*size, 4u);
}

TEST_P(RandomAccessFileTest, ReopeningSeesWhatWasWrittenAndOtherApisAgree) {
  {
    auto file = Open(Path("f"));
    ASSERT_NE(file, nullptr);
    MEND_ASSERT_OK(file->WriteAt(0, "persist"));
    MEND_ASSERT_OK(file->Sync());
    MEND_ASSERT_OK(file->Close());
  }
  auto again = Open(Path("f"), /*create=*/false);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(ReadAll(*again), "persist");
  auto whole = ReadFileToString(fs(), Path("f"));
  MEND_ASSERT_OK(whole);
  EXPECT_EQ(*whole, "persist");
  auto info = fs().Stat(Path("f"));
  MEND_ASSERT_OK(info);
  EXPECT_EQ(info->size, 7u);
}

TEST_P(RandomAccessFileTest, OperationsOnAClosedFileFail) {
  auto file = Open(Path("f"));
  ASSERT_NE(file, nullptr);
  MEND_ASSERT_OK(file->Close());
  std::string out;
  EXPECT_THAT(file->ReadAt(0, 1, &out), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(file->WriteAt(0, "x"), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(file->Truncate(0), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(file->Size(), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(file->Sync(), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(file->Close(), StatusIs(StatusCode::kFailedPrecondition));
}

TEST_P(RandomAccessFileTest, ADirectoryCannotBeOpened) {
  EXPECT_FALSE(fs().OpenRandomAccess(fixture_->dir(), /*create=*/true).ok());
}

INSTANTIATE_TEST_SUITE_P(
    FileSystems, RandomAccessFileTest,
    ::testing::Values(
        FixtureParam{"Posix", [] { return std::unique_ptr<FsFixture>(new PosixFixture()); }},
        FixtureParam{"Memory", [] { return std::unique_ptr<FsFixture>(new MemoryFixture()); }},
        FixtureParam{"FaultInjection",
                     [] { return std::unique_ptr<FsFixture>(new FaultFixture()); }}),
    [](const ::testing::TestParamInfo<FixtureParam>& info) { return info.param.name; });

TEST(PosixRandomAccessFileTest, CreatesPrivateFiles) {
  PosixFixture fixture;
  const std::string path = JoinPath(fixture.dir(), "f");
  auto file = fixture.fs().OpenRandomAccess(path, /*create=*/true);
  MEND_ASSERT_OK(file);
  struct stat st;
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 077, 0u);
}

// The power-cut model: a file holds exactly what it held at its last Sync().
class MemoryRandomAccessPowerCutTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MEND_ASSERT_OK(fs_.CreateDirs("/d"));
    auto file = fs_.OpenRandomAccess("/d/f", /*create=*/true);
    MEND_ASSERT_OK(file);
    file_ = std::move(file).value();
    MEND_ASSERT_OK(fs_.SyncDir("/d"));
  }

  std::string Contents() {
    Result<std::string> r = ReadFileToString(fs_, "/d/f");
    return r.ok() ? *r : "<" + r.status().ToString() + ">";
  }

  MemoryFileSystem fs_;
  std::unique_ptr<RandomAccessFile> file_;
};

TEST_F(MemoryRandomAccessPowerCutTest, UnsyncedWritesAreLost) {
  MEND_ASSERT_OK(file_->WriteAt(0, "synced"));
  MEND_ASSERT_OK(file_->Sync());
  MEND_ASSERT_OK(file_->WriteAt(0, "SYN"));
  MEND_ASSERT_OK(file_->WriteAt(6, " and more"));
  fs_.CutPower();
  EXPECT_EQ(Contents(), "synced");
}

TEST_F(MemoryRandomAccessPowerCutTest, AnUnsyncedTruncateIsUndoneAndASyncedOneKept) {
  MEND_ASSERT_OK(file_->WriteAt(0, "abcdef"));
  MEND_ASSERT_OK(file_->Sync());
  MEND_ASSERT_OK(file_->Truncate(2));
  fs_.DropUnsyncedData();
  EXPECT_EQ(Contents(), "abcdef");
  MEND_ASSERT_OK(file_->Truncate(3));
  MEND_ASSERT_OK(file_->Sync());
  fs_.CutPower();
  EXPECT_EQ(Contents(), "abc");
}

TEST_F(MemoryRandomAccessPowerCutTest, ANeverSyncedFileComesBackEmpty) {
  MEND_ASSERT_OK(file_->WriteAt(0, "lost"));
  fs_.CutPower();
  EXPECT_EQ(Contents(), "");
}

TEST_F(MemoryRandomAccessPowerCutTest, ANewFileWithoutSyncDirDisappears) {
  auto file = fs_.OpenRandomAccess("/d/g", /*create=*/true);
  MEND_ASSERT_OK(file);
  MEND_ASSERT_OK((*file)->WriteAt(0, "data"));
  MEND_ASSERT_OK((*file)->Sync());
  fs_.CutPower();
  EXPECT_FALSE(fs_.Exists("/d/g"));
}

TEST_F(MemoryRandomAccessPowerCutTest, HandlesDieWithThePower) {
  fs_.CutPower();
  std::string out;
  EXPECT_THAT(file_->ReadAt(0, 1, &out), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(file_->WriteAt(0, "x"), StatusIs(StatusCode::kFailedPrecondition));
  EXPECT_THAT(file_->Sync(), StatusIs(StatusCode::kFailedPrecondition));
}

class FaultRandomAccessTest : public ::testing::Test {
 protected:
  void SetUp() override {
    MEND_ASSERT_OK(fs_.CreateDirs("/d"));
    auto file = fs_.OpenRandomAccess("/d/f", /*create=*/true);
    MEND_ASSERT_OK(file);
    file_ = std::move(file).value();
    MEND_ASSERT_OK(file_->WriteAt(0, "0123456789"));
    MEND_ASSERT_OK(file_->Sync());
    MEND_ASSERT_OK(fs_.SyncDir("/d"));
  }

  std::string Contents() {
    Result<std::string> r = ReadFileToString(memory_, "/d/f");
    return r.ok() ? *r : "<" + r.status().ToString() + ">";
  }

  MemoryFileSystem memory_;
  FaultInjectionFileSystem fs_{&memory_};
  std::unique_ptr<RandomAccessFile> file_;
};

TEST_F(FaultRandomAccessTest, EachOperationHasItsFaultKind) {
  std::string out;
  fs_.FailNext(FsOp::kRead, EIO);
  EXPECT_THAT(file_->ReadAt(0, 4, &out), StatusIs(StatusCode::kInternal, HasSubstr("injected")));
  fs_.FailNext(FsOp::kWrite, ENOSPC);
  EXPECT_THAT(file_->WriteAt(0, "abcd"), StatusIs(StatusCode::kResourceExhausted));
  fs_.FailNext(FsOp::kTruncate, EIO);
  EXPECT_THAT(file_->Truncate(0), StatusIs(StatusCode::kInternal, HasSubstr("truncate")));
  fs_.FailNext(FsOp::kSync, EIO);
  EXPECT_THAT(file_->Sync(), StatusIs(StatusCode::kInternal, HasSubstr("sync")));
  fs_.FailNext(FsOp::kStat, EIO);
  EXPECT_FALSE(file_->Size().ok());
  fs_.FailNext(FsOp::kOpen, EACCES);
  EXPECT_FALSE(fs_.OpenRandomAccess("/d/f", false).ok());
  // Failed operations have no effect.
  EXPECT_EQ(Contents(), "0123456789");
  EXPECT_EQ(fs_.Count(FsOp::kTruncate), 1);
  fs_.FailNext(FsOp::kClose, EIO);
  EXPECT_FALSE(file_->Close().ok());
  MEND_EXPECT_OK(file_->Close());
}

TEST_F(FaultRandomAccessTest, ATornWriteLeavesTheFirstHalfAtItsOffset) {
  fs_.SetTornWrites(true);
  fs_.FailNext(FsOp::kWrite, EIO);
  EXPECT_FALSE(file_->WriteAt(2, "abcd").ok());
  EXPECT_EQ(Contents(), "01ab456789");
}

TEST_F(FaultRandomAccessTest, AFailedSyncLeavesTheOldDurableContents) {
  MEND_ASSERT_OK(file_->WriteAt(0, "xx"));
  fs_.FailNext(FsOp::kSync, EIO);
  EXPECT_FALSE(file_->Sync().ok());
  MEND_ASSERT_OK(fs_.CutPower());
  EXPECT_EQ(Contents(), "0123456789");
}

TEST_F(FaultRandomAccessTest, CrashAfterFailsEverythingFromItsPointOn) {
  fs_.SetTornWrites(true);
  fs_.CrashAfter(2, EIO);
  std::string out;
  MEND_ASSERT_OK(file_->ReadAt(0, 1, &out));  // Reads do not count towards the crash point.
  MEND_ASSERT_OK(file_->WriteAt(0, "ab"));
  MEND_ASSERT_OK(file_->Sync());
  EXPECT_FALSE(fs_.Crashed());
  EXPECT_FALSE(file_->WriteAt(4, "wxyz").ok());  // The crash point: torn.
  EXPECT_TRUE(fs_.Crashed());
  // After it nothing reaches the disk, not even half a write, and reads fail too.
  EXPECT_FALSE(file_->WriteAt(0, "zz").ok());
  EXPECT_FALSE(file_->ReadAt(0, 1, &out).ok());
  EXPECT_FALSE(fs_.Stat("/d/f").ok());
  EXPECT_EQ(Contents(), "ab23wx6789");
  MEND_ASSERT_OK(fs_.CutPower());
  EXPECT_EQ(Contents(), "ab23456789");
  fs_.ClearFaults();
  EXPECT_FALSE(fs_.Crashed());
  MEND_EXPECT_OK(fs_.Stat("/d/f"));
}

}  // namespace
}  // namespace mend
