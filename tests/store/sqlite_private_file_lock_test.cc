// Making an open database private must not cost its connections their locks. Closing any
// descriptor of a file drops every POSIX lock the process holds on it; when a second store opened
// the same mend.db by opening and closing the file to narrow its mode, the first connection lost
// its shared lock, and another process closing its connection then took itself for the last one:
// it checkpointed and deleted the WAL while this process went on writing into the deleted file
// (found by scripts/chaos: a `mend serve` whose writes nobody else could see).

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "mend/base/clock.h"
#include "mend/base/file_system.h"
#include "mend/store/sqlite_store.h"
#include "tests/support/status_matchers.h"

namespace mend::store {
namespace {

// Whether another process sees a lock on the bytes SQLite's shared locks take (PENDING_BYTE + 2,
// 510 bytes): the child only asks fcntl(F_GETLK), it never touches SQLite.
bool AnotherProcessSeesASharedLock(const std::string& path) {
  const pid_t pid = fork();
  if (pid == 0) {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) _exit(3);
    struct flock lock = {};
    lock.l_type = F_WRLCK;
    lock.l_whence = SEEK_SET;
    lock.l_start = 0x40000000 + 2;
    lock.l_len = 510;
    if (fcntl(fd, F_GETLK, &lock) < 0) _exit(4);
    _exit(lock.l_type == F_UNLCK ? 1 : 0);
  }
  int status = 0;
  if (pid < 0 || waitpid(pid, &status, 0) != pid || !WIFEXITED(status)) return false;
  EXPECT_LT(WEXITSTATUS(status), 2) << "the child could not ask";
  return WEXITSTATUS(status) == 0;
}

class SqlitePrivateFileLockTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_private_lock_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    path_ = dir_ + "/mend.db";
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string dir_;
  std::string path_;
};

TEST_F(SqlitePrivateFileLockTest, MakingTheOpenDatabasePrivateKeepsItsConnectionsLocks) {
  SqliteStoreOptions options;
  options.path = path_;
  auto store = OpenSqliteStore(options, *SystemClock::Default());
  MEND_ASSERT_OK(store);
  RunRecord run;
  run.id = "r1";
  MEND_ASSERT_OK((*store)->CreateRun(run));
  ASSERT_TRUE(AnotherProcessSeesASharedLock(path_)) << "the premise: an open WAL connection locks";

  // What a second store on the same file did when it opened.
  MEND_ASSERT_OK(PosixFileSystem::MakePrivateFile(path_));
  EXPECT_TRUE(AnotherProcessSeesASharedLock(path_));
  auto second = OpenSqliteStore(options, *SystemClock::Default());
  MEND_ASSERT_OK(second);
  EXPECT_TRUE(AnotherProcessSeesASharedLock(path_));
}

TEST_F(SqlitePrivateFileLockTest, MakePrivateFileCreatesA0600FileAndNarrowsAnOpenOne) {
  MEND_ASSERT_OK(PosixFileSystem::MakePrivateFile(path_));
  struct stat st;
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, 0);

  ASSERT_EQ(::chmod(path_.c_str(), 0644), 0);
  MEND_ASSERT_OK(PosixFileSystem::MakePrivateFile(path_));
  ASSERT_EQ(::stat(path_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);

  // A missing directory is an error naming the path.
  EXPECT_THAT(PosixFileSystem::MakePrivateFile(dir_ + "/missing/mend.db"),
              mend::testing::StatusIs(StatusCode::kNotFound));
}

}  // namespace
}  // namespace mend::store
