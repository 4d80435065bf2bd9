#include "mend/lessonq/wal_dir.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/memory_file_system.h"
#include "mend/lessonq/wal_codec.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

constexpr char kDir[] = "q/wal";

Job MakeJob(const std::string& task) {
  Job job;
  job.request = {task, "used full rewrite", "ERROR: file too large", "error"};
  job.id = JobIdFor(job.request);
  job.enqueued_at = Time(std::chrono::seconds(1775000000));
  job.next_attempt_at = job.enqueued_at;
  return job;
}

class WalDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    Result<std::unique_ptr<WalDir>> wal = WalDir::Open(fs_, kDir);
    MEND_ASSERT_OK(wal);
    wal_ = *std::move(wal);
  }

  std::vector<std::string> Names() { return *memory_.List(kDir); }

  void WriteRaw(const std::string& name, const std::string& bytes) {
    ASSERT_THAT(WriteFileAtomically(memory_, JoinPath(kDir, name), bytes), ::mend::testing::IsOk());
  }

  MemoryFileSystem memory_;
  FaultInjectionFileSystem fs_{&memory_};
  std::unique_ptr<WalDir> wal_;
};

TEST_F(WalDirTest, AppendThenReadScanAndList) {
  const Job job = MakeJob("Edit main.go");
  EXPECT_THAT(wal_->Append(job), IsOkAndHolds(true));
  EXPECT_THAT(Names(), ElementsAre("bba86ebf380b9dbc.wal"));
  EXPECT_EQ(wal_->PathFor(job.id), "q/wal/bba86ebf380b9dbc.wal");
  EXPECT_THAT(wal_->Read(job.id), IsOkAndHolds(job));
  EXPECT_TRUE(wal_->Contains(job.id));
  EXPECT_THAT(wal_->ListIds(), IsOkAndHolds(ElementsAre(job.id)));
  Result<WalScan> scan = wal_->Scan();
  MEND_ASSERT_OK(scan);
  EXPECT_THAT(scan->jobs, ElementsAre(job));
  EXPECT_EQ(scan->corrupt_removed + scan->temporaries_removed + scan->foreign_skipped, 0);
}

TEST_F(WalDirTest, AppendIsIdempotentAndDoesNotRewrite) {
  const Job job = MakeJob("Edit main.go");
  ASSERT_THAT(wal_->Append(job), IsOkAndHolds(true));
  Job again = job;
  again.attempts = 3;
  const int writes = fs_.Count(FsOp::kWrite);
  const int renames = fs_.Count(FsOp::kRename);
  EXPECT_THAT(wal_->Append(again), IsOkAndHolds(false));
  EXPECT_EQ(fs_.Count(FsOp::kWrite), writes);
  EXPECT_EQ(fs_.Count(FsOp::kRename), renames);
  EXPECT_THAT(wal_->Read(job.id), IsOkAndHolds(job));
}

TEST_F(WalDirTest, UpdateReplacesTheRecord) {
  Job job = MakeJob("Edit main.go");
  ASSERT_THAT(wal_->Append(job), IsOkAndHolds(true));
  job.attempts = 2;
  job.last_error = "timeout";
  MEND_ASSERT_OK(wal_->Update(job));
  EXPECT_THAT(wal_->Read(job.id), IsOkAndHolds(job));
  EXPECT_THAT(Names(), ElementsAre(job.id + ".wal"));
}

TEST_F(WalDirTest, RemoveManySyncsTheDirectoryOnce) {
  const Job a = MakeJob("task a"), b = MakeJob("task b"), gone = MakeJob("task gone");
  ASSERT_THAT(wal_->Append(a), IsOkAndHolds(true));
  ASSERT_THAT(wal_->Append(b), IsOkAndHolds(true));
  const int dir_syncs = fs_.Count(FsOp::kSyncDir);
  MEND_ASSERT_OK(wal_->RemoveMany({a.id, gone.id, b.id}));
  EXPECT_EQ(fs_.Count(FsOp::kSyncDir), dir_syncs + 1);
  EXPECT_THAT(Names(), IsEmpty());
  memory_.CutPower();  // the removals were made durable
  EXPECT_THAT(Names(), IsEmpty());
  EXPECT_THAT(wal_->RemoveMany({"../x"}), StatusIs(StatusCode::kInvalidArgument));
  MEND_ASSERT_OK(wal_->RemoveMany({}));
}

TEST_F(WalDirTest, RemoveThenReadIsNotFound) {
  const Job job = MakeJob("Edit main.go");
  ASSERT_THAT(wal_->Append(job), IsOkAndHolds(true));
  const int dir_syncs = fs_.Count(FsOp::kSyncDir);
  MEND_ASSERT_OK(wal_->Remove(job.id));
  EXPECT_EQ(fs_.Count(FsOp::kSyncDir), dir_syncs + 1);
  EXPECT_THAT(wal_->Read(job.id), StatusIs(StatusCode::kNotFound));
  EXPECT_THAT(wal_->Remove(job.id), StatusIs(StatusCode::kNotFound));
  EXPECT_FALSE(wal_->Contains(job.id));
  EXPECT_THAT(Names(), IsEmpty());
}

TEST_F(WalDirTest, HostileIdsNeverTouchTheFileSystem) {
  for (const std::string id : {"../etc", "ABC", "", "../../0123456789abcd", "0123456789ABCDEF"}) {
    Job job = MakeJob("t");
    job.id = id;
    EXPECT_THAT(wal_->Append(job), StatusIs(StatusCode::kInvalidArgument)) << id;
    EXPECT_THAT(wal_->Update(job), StatusIs(StatusCode::kInvalidArgument)) << id;
    EXPECT_THAT(wal_->Remove(id), StatusIs(StatusCode::kInvalidArgument)) << id;
    EXPECT_THAT(wal_->Read(id), StatusIs(StatusCode::kInvalidArgument)) << id;
    EXPECT_FALSE(wal_->Contains(id)) << id;
  }
  EXPECT_EQ(fs_.Count(FsOp::kOpen), 0);
  EXPECT_THAT(*memory_.List("q"), ElementsAre("wal"));
}

TEST_F(WalDirTest, LargeAttemptsSurviveWriteAndScan) {
  Job one_mb = MakeJob("one");
  one_mb.request.attempt.assign(1u << 20, 'a');
  Job five_mb = MakeJob("five");
  five_mb.request.attempt.assign(5u << 20, 'b');
  ASSERT_THAT(wal_->Append(one_mb), IsOkAndHolds(true));
  ASSERT_THAT(wal_->Append(five_mb), IsOkAndHolds(true));
  Result<WalScan> scan = wal_->Scan();
  MEND_ASSERT_OK(scan);
  ASSERT_EQ(scan->jobs.size(), 2u);
  EXPECT_EQ(scan->corrupt_removed, 0);
  for (const Job& job : scan->jobs) EXPECT_TRUE(job == one_mb || job == five_mb);
}

TEST_F(WalDirTest, ScanRemovesLeftoversAndCorruptRecordsAndSkipsForeignFiles) {
  const Job good = MakeJob("good");
  ASSERT_THAT(wal_->Append(good), IsOkAndHolds(true));
  const Job other = MakeJob("other");
  std::string record = *EncodeWalRecord(other);
  WriteRaw(".tmp." + other.id + ".99.1", record.substr(0, 10));
  WriteRaw("0000000000000001.wal", "garbage");
  WriteRaw("0000000000000002.wal", record.substr(0, record.size() - 3));
  WriteRaw("0000000000000003.wal", record);  // holds another id than its name
  record[20] ^= 0x01;
  WriteRaw(other.id + ".wal", record);
  WriteRaw("README", "notes");
  WriteRaw("x.wal", "x");
  WriteRaw("ABCDEF0123456789.wal", *EncodeWalRecord(good));

  Result<WalScan> scan = wal_->Scan();
  MEND_ASSERT_OK(scan);
  EXPECT_THAT(scan->jobs, ElementsAre(good));
  EXPECT_EQ(scan->corrupt_removed, 4);
  EXPECT_EQ(scan->temporaries_removed, 1);
  EXPECT_EQ(scan->foreign_skipped, 3);
  EXPECT_THAT(Names(), ElementsAre("ABCDEF0123456789.wal", "README", good.id + ".wal", "x.wal"));
}

// chatcli writes `<id>.tmp.<pid>.<seq>` and renames it over the record; one whose process is gone
// is a leftover of an interrupted write, one whose process still runs may yet be renamed.
TEST_F(WalDirTest, ScanRemovesChatcliTemporariesWhoseWriterIsGone) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) _exit(0);
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);  // reaped: no process has this id now
  const Job good = MakeJob("good");
  ASSERT_THAT(wal_->Append(good), IsOkAndHolds(true));
  const Job other = MakeJob("other");
  const std::string record = *EncodeWalRecord(other);
  const std::string gone = other.id + ".tmp." + std::to_string(child) + ".3";
  const std::string live = other.id + ".tmp." + std::to_string(getpid()) + ".1";
  WriteRaw(gone, record);
  WriteRaw(live, record);
  WriteRaw(other.id + ".tmp.12", record);   // no sequence number: not chatcli's
  WriteRaw(other.id + ".tmp.x.1", record);  // no pid
  WriteRaw("0123.tmp." + std::to_string(child) + ".1", record);  // no job id

  Result<WalScan> scan = wal_->Scan();
  MEND_ASSERT_OK(scan);
  EXPECT_THAT(scan->jobs, ElementsAre(good));
  EXPECT_EQ(scan->temporaries_removed, 1);
  EXPECT_EQ(scan->foreign_skipped, 3);
  // Sorted by name, which puts the pid-bearing names in an order that depends on the pids.
  EXPECT_THAT(Names(),
              UnorderedElementsAre("0123.tmp." + std::to_string(child) + ".1", good.id + ".wal",
                                   other.id + ".tmp.12", live, other.id + ".tmp.x.1"));
}

TEST_F(WalDirTest, AChatcliSafeDirectoryWritesRecordsChatcliReadsWhole) {
  Result<std::unique_ptr<WalDir>> safe = WalDir::Open(fs_, kDir, kChatcliMaxRecordBytes);
  MEND_ASSERT_OK(safe);
  Job job = MakeJob("long transcript");
  job.request.attempt = std::string(10000, 'x');
  ASSERT_THAT((*safe)->Append(job), IsOkAndHolds(true));
  job.last_error = std::string(5000, 'e');
  MEND_ASSERT_OK((*safe)->Update(job));
  Result<std::string> raw = ReadFileToString(memory_, JoinPath(kDir, job.id + ".wal"));
  MEND_ASSERT_OK(raw);
  EXPECT_LE(raw->size(), kChatcliMaxRecordBytes);
  Result<Job> back = (*safe)->Read(job.id);
  MEND_ASSERT_OK(back);
  EXPECT_EQ(back->id, job.id);
  EXPECT_TRUE(back->request.attempt.ends_with(kCutMarker));
  // The same job through a directory without the limit is written whole.
  MEND_ASSERT_OK(wal_->Update(job));
  EXPECT_THAT(wal_->Read(job.id), IsOkAndHolds(job));
}

TEST_F(WalDirTest, ListIdsReadsNothing) {
  ASSERT_THAT(wal_->Append(MakeJob("b")), IsOkAndHolds(true));
  WriteRaw("0000000000000001.wal", "garbage");
  WriteRaw("README", "notes");
  WriteRaw(".tmp.0000000000000001.1.1", "x");
  const int reads = fs_.Count(FsOp::kOpen);
  EXPECT_THAT(wal_->ListIds(), IsOkAndHolds(ElementsAre("0000000000000001", MakeJob("b").id)));
  EXPECT_EQ(fs_.Count(FsOp::kOpen), reads);
  EXPECT_EQ(Names().size(), 4u);
}

TEST_F(WalDirTest, ReadOfCorruptRecordIsDataLossAndRemovesIt) {
  const Job job = MakeJob("t");
  WriteRaw(job.id + ".wal", EncodeWalRecord(job)->substr(0, 30));
  EXPECT_THAT(wal_->Read(job.id), StatusIs(StatusCode::kDataLoss));
  EXPECT_THAT(Names(), IsEmpty());
}

struct Fault {
  FsOp op;
  int err;
  StatusCode code;
};

TEST_F(WalDirTest, FailedWriteLeavesNoRecordAndNoTemporary) {
  const std::vector<Fault> faults = {
      {FsOp::kOpen, EACCES, StatusCode::kPermissionDenied},
      {FsOp::kWrite, EIO, StatusCode::kInternal},
      {FsOp::kWrite, ENOSPC, StatusCode::kResourceExhausted},
      {FsOp::kSync, EIO, StatusCode::kInternal},
      {FsOp::kClose, EIO, StatusCode::kInternal},
      {FsOp::kRename, EIO, StatusCode::kInternal},
      {FsOp::kSyncDir, EIO, StatusCode::kInternal},
  };
  const Job job = MakeJob("Edit main.go");
  for (const Fault& f : faults) {
    fs_.FailNext(f.op, f.err);
    EXPECT_THAT(wal_->Append(job), StatusIs(f.code)) << static_cast<int>(f.op);
    EXPECT_THAT(Names(), IsEmpty()) << static_cast<int>(f.op);
    fs_.FailNext(f.op, f.err);
    EXPECT_THAT(wal_->Update(job), StatusIs(f.code)) << static_cast<int>(f.op);
    if (f.op == FsOp::kSyncDir) {
      // The replacing rename happened; only its durability is in doubt.
      MEND_ASSERT_OK(wal_->Remove(job.id));
    } else {
      EXPECT_THAT(Names(), IsEmpty()) << static_cast<int>(f.op);
    }
  }
  EXPECT_THAT(wal_->Append(job), IsOkAndHolds(true));
}

TEST_F(WalDirTest, RenameOfAVanishedTemporaryIsRetriedOnce) {
  const Job job = MakeJob("t");
  fs_.FailNext(FsOp::kRename, ENOENT);
  EXPECT_THAT(wal_->Append(job), IsOkAndHolds(true));
  EXPECT_EQ(fs_.Count(FsOp::kRename), 2);
  EXPECT_THAT(Names(), ElementsAre(job.id + ".wal"));
}

TEST_F(WalDirTest, PowerCutAfterAppendKeepsTheRecord) {
  const Job job = MakeJob("t");
  ASSERT_THAT(wal_->Append(job), IsOkAndHolds(true));
  MEND_ASSERT_OK(fs_.CutPower());
  Result<std::unique_ptr<WalDir>> reopened = WalDir::Open(fs_, kDir);
  MEND_ASSERT_OK(reopened);
  Result<WalScan> scan = (*reopened)->Scan();
  MEND_ASSERT_OK(scan);
  EXPECT_THAT(scan->jobs, ElementsAre(job));
}

TEST_F(WalDirTest, PowerCutBeforeTheDirectorySyncLosesTheWriteCleanly) {
  Job job = MakeJob("t");
  ASSERT_THAT(wal_->Append(job), IsOkAndHolds(true));
  Job fresh = MakeJob("fresh");
  fs_.FailNext(FsOp::kSyncDir, EIO);
  EXPECT_THAT(wal_->Append(fresh), StatusIs(StatusCode::kInternal));
  Job updated = job;
  updated.attempts = 1;
  fs_.FailNext(FsOp::kSyncDir, EIO);
  EXPECT_THAT(wal_->Update(updated), StatusIs(StatusCode::kInternal));
  MEND_ASSERT_OK(fs_.CutPower());
  Result<WalScan> scan = wal_->Scan();
  MEND_ASSERT_OK(scan);
  EXPECT_THAT(scan->jobs, ElementsAre(job));  // the old contents, never a mix
  EXPECT_EQ(scan->corrupt_removed, 0);
  EXPECT_EQ(scan->temporaries_removed, 0);
}

TEST_F(WalDirTest, TornWritesNeverYieldAnAcceptedRecord) {
  fs_.SetTornWrites(true);
  const Job job = MakeJob("t");
  // The temporary of a torn write survives because its removal fails too, then the power goes.
  fs_.FailNext(FsOp::kWrite, EIO);
  fs_.FailAlways(FsOp::kUnlink, EIO);
  EXPECT_THAT(wal_->Append(job), StatusIs(StatusCode::kInternal));
  fs_.ClearFaults();
  MEND_ASSERT_OK(fs_.DropUnsyncedData());
  // A torn record under its final name, as a non-atomic writer could leave it.
  Result<std::unique_ptr<WritableFile>> raw =
      fs_.OpenWritable(wal_->PathFor(job.id), WriteMode::kTruncate);
  MEND_ASSERT_OK(raw);
  fs_.FailNext(FsOp::kWrite, EIO);
  EXPECT_FALSE((*raw)->Append(*EncodeWalRecord(job)).ok());
  raw->reset();
  Result<WalScan> scan = wal_->Scan();
  MEND_ASSERT_OK(scan);
  EXPECT_THAT(scan->jobs, IsEmpty());
  EXPECT_EQ(scan->corrupt_removed, 1);
  EXPECT_THAT(Names(), IsEmpty());
}

// A directory under the system's temporary directory, removed with its contents at the end.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "mend_wal_XXXXXX").string();
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(WalDirPosixTest, ConcurrentAppendsAllLand) {
  TempDir tmp;
  ASSERT_FALSE(tmp.path().empty());
  Result<std::unique_ptr<WalDir>> wal =
      WalDir::Open(*PosixFileSystem::Default(), JoinPath(tmp.path(), "wal"));
  MEND_ASSERT_OK(wal);
  constexpr int kThreads = 8;
  constexpr int kPerThread = 20;
  std::vector<int> created_shared(kThreads, 0);
  std::vector<Status> errors(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Result<bool> own =
            (*wal)->Append(MakeJob("task " + std::to_string(t) + "/" + std::to_string(i)));
        Result<bool> shared = (*wal)->Append(MakeJob("shared " + std::to_string(i)));
        if (!own.ok() || !*own) errors[t] = own.ok() ? InternalError("not created") : own.status();
        if (!shared.ok()) errors[t] = shared.status();
        if (shared.ok() && *shared) ++created_shared[t];
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const Status& s : errors) MEND_EXPECT_OK(s);
  int shared_total = 0;
  for (int n : created_shared) shared_total += n;
  EXPECT_EQ(shared_total, kPerThread);  // each shared id created exactly once
  Result<WalScan> scan = (*wal)->Scan();
  MEND_ASSERT_OK(scan);
  EXPECT_EQ(scan->jobs.size(), static_cast<size_t>(kThreads * kPerThread + kPerThread));
  EXPECT_EQ(scan->corrupt_removed + scan->temporaries_removed + scan->foreign_skipped, 0);
  Result<std::vector<std::string>> names = PosixFileSystem::Default()->List((*wal)->dir());
  MEND_ASSERT_OK(names);
  EXPECT_EQ(names->size(), scan->jobs.size());
}

// Forwards to a MemoryFileSystem. The first directory sync waits until the test releases it and
// succeeds; every later one fails. Renames are counted.
class GatedFileSystem final : public FileSystem {
 public:
  Result<std::unique_ptr<WritableFile>> OpenWritable(const std::string& path,
                                                     WriteMode mode) override {
    return base_.OpenWritable(path, mode);
  }
  Result<std::unique_ptr<ReadableFile>> OpenReadable(const std::string& path) override {
    return base_.OpenReadable(path);
  }
  Status Rename(const std::string& from, const std::string& to) override {
    Status s = base_.Rename(from, to);
    std::lock_guard<std::mutex> lock(mu_);
    ++renames_;
    cv_.notify_all();
    return s;
  }
  Status SyncDir(const std::string& dir) override {
    std::unique_lock<std::mutex> lock(mu_);
    if (++dir_syncs_ > 1) return ErrnoToStatus(EIO, "fsync " + dir);
    cv_.notify_all();
    cv_.wait(lock, [&] { return released_; });
    return base_.SyncDir(dir);
  }
  Status Unlink(const std::string& path) override { return base_.Unlink(path); }
  Result<std::vector<std::string>> List(const std::string& dir) override { return base_.List(dir); }
  Status CreateDirs(const std::string& dir) override { return base_.CreateDirs(dir); }
  Result<FileInfo> Stat(const std::string& path) override { return base_.Stat(path); }
  Result<std::unique_ptr<FileLock>> Lock(const std::string& path) override {
    return base_.Lock(path);
  }

  void AwaitFirstSyncAndRenames(int renames) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait(lock, [&] { return dir_syncs_ >= 1 && renames_ >= renames; });
  }
  void Release() {
    std::lock_guard<std::mutex> lock(mu_);
    released_ = true;
    cv_.notify_all();
  }

 private:
  MemoryFileSystem base_;
  std::mutex mu_;
  std::condition_variable cv_;
  int renames_ = 0;
  int dir_syncs_ = 0;
  bool released_ = false;
};

TEST(WalDirGroupCommitTest, WriterWaitsForASyncThatStartedAfterItsRename) {
  GatedFileSystem fs;
  Result<std::unique_ptr<WalDir>> wal = WalDir::Open(fs, kDir);
  MEND_ASSERT_OK(wal);
  Result<bool> first = false;
  std::thread leader([&] { first = (*wal)->Append(MakeJob("first")); });
  fs.AwaitFirstSyncAndRenames(1);
  // These renames happen while the first sync runs, so that sync must not cover them: they wait
  // for a later one, which fails, and the failure reaches both.
  Result<bool> second = false;
  Result<bool> third = false;
  std::thread a([&] { second = (*wal)->Append(MakeJob("second")); });
  std::thread b([&] { third = (*wal)->Append(MakeJob("third")); });
  fs.AwaitFirstSyncAndRenames(3);
  fs.Release();
  leader.join();
  a.join();
  b.join();
  EXPECT_THAT(first, IsOkAndHolds(true));
  EXPECT_THAT(second, StatusIs(StatusCode::kInternal));
  EXPECT_THAT(third, StatusIs(StatusCode::kInternal));
  EXPECT_THAT((*wal)->ListIds(), IsOkAndHolds(ElementsAre(MakeJob("first").id)));
}

}  // namespace
}  // namespace mend::lessonq
