// `mend backup DEST_DIR` on a real home: the copy is consistent while another connection holds a
// write transaction open or keeps committing, a home restored from it shows the runs and the
// memory, every file and folder is private, the manifest matches the files, and a destination
// in use or a missing home is refused with nothing written.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>

#include "mend/base/hash.h"
#include "mend/base/manual_clock.h"
#include "mend/base/time_format.h"
#include "mend/lessonq/job.h"
#include "mend/lessonq/wal_codec.h"
#include "mend/lessonq/wal_dir.h"
#include "mend/store/sqlite_store.h"
#include "tests/cli/cli_home_test.h"

namespace mend::cli {
namespace {

namespace fs = std::filesystem;
using ::testing::HasSubstr;

constexpr char kRunId[] = "run-backed-up-0001";
constexpr char kFact[] = "deploys go through the staging cluster first";

// The single integer `sql` returns on the database `path`; -1 on an error.
int64_t QueryInt(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  int64_t value = -1;
  // Read-write without creating: a read-only connection cannot open a WAL database whose -shm
  // file is gone, which is how a copy is left.
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK &&
        sqlite3_step(stmt) == SQLITE_ROW) {
      value = sqlite3_column_int64(stmt, 0);
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return value;
}

class BackupCommandTest : public CliHomeTest {
 protected:
  void SetUp() override {
    CliHomeTest::SetUp();
    dest_ = dir_ + "/backup";
  }

  // A home with a run, a fact, a pending and a dead-lettered lesson job, lessons, a config file
  // and an event log whose last line is still being written.
  void MakeHome() {
    ASSERT_EQ(Mend({"memory", "add", kFact}), 0) << err();
    {
      ManualClock clock(*ParseRfc3339("2025-01-02T10:00:00Z"));
      store::SqliteStoreOptions options;
      options.path = home_ + "/mend.db";
      Result<std::unique_ptr<store::CheckpointStore>> opened = OpenSqliteStore(options, clock);
      MEND_ASSERT_OK(opened);
      store::RunRecord run;
      run.id = kRunId;
      run.agent = "helper";
      run.task = "back me up";
      MEND_ASSERT_OK((*opened)->CreateRun(run));
    }
    pending_job_ = WriteJob(home_ + "/reflexion/wal", "a task that failed");
    dead_job_ = WriteJob(home_ + "/reflexion/dlq", "a task whose lesson kept failing");
    Write(home_ + "/reflexion/wal/.tmp.0011223344556677", "half a record");
    Write(home_ + "/reflexion/owner.lock", "");
    Write(home_ + "/reflexion/LESSONS.md", "## lesson one\n\ntext\n## lesson tw");
    Write(home_ + "/config.toml", "[log]\nlevel = \"info\"\n");
    Write(home_ + "/events.jsonl", "{\"type\":\"run.started\"}\n{\"type\":\"run.comp");
    Write(home_ + "/improve/imp-20250102T100000-00000000/card.md", "# card\n");
  }

  // A lesson job written into the queue folder `dir` as the queue writes one; its id.
  std::string WriteJob(const std::string& dir, const std::string& task) {
    lessonq::Job job;
    job.request = {task, "tried once", "ERROR: boom", "error"};
    job.id = lessonq::JobIdFor(job.request);
    job.enqueued_at = job.next_attempt_at = Time(std::chrono::seconds(1'700'000'000));
    Result<std::unique_ptr<lessonq::WalDir>> wal = lessonq::WalDir::Open(fs_, dir);
    EXPECT_TRUE(wal.ok()) << wal.status();
    if (!wal.ok()) return "";
    Result<bool> created = (*wal)->Append(job);
    EXPECT_TRUE(created.ok()) << created.status();
    return job.id;
  }

  std::string Read(const std::string& path) {
    Result<std::string> text = ReadFileToString(fs_, path);
    EXPECT_TRUE(text.ok()) << text.status();
    return text.ok() ? *text : "";
  }

  // Every regular file under `root`, relative to it.
  static std::set<std::string> FilesUnder(const std::string& root) {
    std::set<std::string> files;
    for (const auto& entry : fs::recursive_directory_iterator(root)) {
      if (entry.is_regular_file()) files.insert(fs::relative(entry.path(), root).string());
    }
    return files;
  }

  std::string dest_;
  std::string pending_job_, dead_job_;
};

TEST_F(BackupCommandTest, CopiesTheHomeAndListsEveryFileInTheManifest) {
  ASSERT_NO_FATAL_FAILURE(MakeHome());
  ASSERT_EQ(Mend({"backup", dest_}), 0) << err();
  EXPECT_THAT(out(), HasSubstr("backed up " + home_ + " to " + dest_));

  const std::set<std::string> files = FilesUnder(dest_);
  for (const std::string& expected :
       {std::string("mend.db"), std::string("config.toml"), std::string("events.jsonl"),
        std::string("MANIFEST.json"), std::string("reflexion/LESSONS.md"),
        "reflexion/wal/" + pending_job_ + ".wal", "reflexion/dlq/" + dead_job_ + ".wal",
        std::string("improve/imp-20250102T100000-00000000/card.md")}) {
    EXPECT_TRUE(files.contains(expected)) << expected;
  }
  // Locks, temporaries and SQLite's side files stay behind.
  for (const std::string& name : files) {
    EXPECT_FALSE(name.ends_with("owner.lock") || name.find(".tmp.") != std::string::npos ||
                 name.ends_with("-wal") || name.ends_with("-shm"))
        << name;
  }
  EXPECT_EQ(Read(dest_ + "/reflexion/wal/" + pending_job_ + ".wal"),
            Read(home_ + "/reflexion/wal/" + pending_job_ + ".wal"));
  // Logs appended a line at a time keep their whole lines only.
  EXPECT_EQ(Read(dest_ + "/reflexion/LESSONS.md"), "## lesson one\n\ntext\n");
  EXPECT_EQ(Read(dest_ + "/events.jsonl"), "{\"type\":\"run.started\"}\n");

  const nlohmann::json manifest = nlohmann::json::parse(Read(dest_ + "/MANIFEST.json"));
  EXPECT_EQ(JsonKeys(manifest), (std::set<std::string>{"created_at", "files", "format", "home",
                                                       "mend_version", "notes"}));
  EXPECT_EQ(manifest["home"], home_);
  EXPECT_EQ(manifest["format"], 1);
  EXPECT_TRUE(ParseRfc3339(manifest["created_at"].get<std::string>()).ok());
  std::set<std::string> listed;
  for (const nlohmann::json& file : manifest["files"]) {
    const std::string path = file["path"];
    listed.insert(path);
    const std::string bytes = Read(dest_ + "/" + path);
    EXPECT_EQ(file["size"], bytes.size()) << path;
    EXPECT_EQ(file["sha256"], Sha256Hex(bytes)) << path;
  }
  std::set<std::string> copied = files;
  copied.erase("MANIFEST.json");
  EXPECT_EQ(listed, copied);
}

TEST_F(BackupCommandTest, EveryFileIsPrivateAndEveryFolderTheUsersAlone) {
  ASSERT_NO_FATAL_FAILURE(MakeHome());
  // An empty destination the user made with a wider mode is narrowed.
  fs::create_directories(dest_);
  fs::permissions(dest_, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  ASSERT_EQ(Mend({"backup", dest_}), 0) << err();
  int files = 0;
  for (const auto& entry : fs::recursive_directory_iterator(dest_)) {
    struct stat st;
    ASSERT_EQ(::lstat(entry.path().c_str(), &st), 0);
    if (S_ISDIR(st.st_mode)) {
      EXPECT_EQ(st.st_mode & 0777, 0700u) << entry.path();
    } else {
      ++files;
      EXPECT_EQ(st.st_mode & 0777, 0600u) << entry.path();
    }
  }
  EXPECT_GE(files, 8);
  struct stat st;
  ASSERT_EQ(::stat(dest_.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0700u);
}

TEST_F(BackupCommandTest, AnOpenWriteTransactionIsNotCopiedAndTheRestoredHomeWorks) {
  ASSERT_NO_FATAL_FAILURE(MakeHome());
  // Another process's connection, in the middle of a write transaction on mend.db.
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open_v2((home_ + "/mend.db").c_str(), &writer, SQLITE_OPEN_READWRITE, nullptr),
            SQLITE_OK);
  ASSERT_EQ(QueryInt(home_ + "/mend.db", "SELECT journal_mode = 'wal' FROM pragma_journal_mode"),
            1);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN IMMEDIATE; CREATE TABLE uncommitted (n INTEGER);", nullptr,
                         nullptr, nullptr),
            SQLITE_OK);

  ASSERT_EQ(Mend({"backup", dest_, "--json"}), 0) << err();
  const nlohmann::json summary = Json();
  EXPECT_EQ(JsonKeys(summary),
            (std::set<std::string>{"bytes", "created_at", "dest", "files", "home", "manifest",
                                   "mend_version", "notes"}));
  EXPECT_EQ(summary["dest"], dest_);
  EXPECT_EQ(summary["manifest"], dest_ + "/MANIFEST.json");
  EXPECT_GE(summary["files"].get<int>(), 8);
  EXPECT_EQ(summary["notes"], nlohmann::json::array());

  ASSERT_EQ(sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(writer);
  EXPECT_EQ(
      QueryInt(dest_ + "/mend.db", "SELECT count(*) FROM sqlite_master WHERE name = 'uncommitted'"),
      0);

  // Restore: the backup folder becomes a home.
  const std::string restored = dir_ + "/restored";
  fs::copy(dest_, restored, fs::copy_options::recursive);
  ASSERT_EQ(MendIn(restored, {"memory", "list", "--json"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr(kFact));
  ASSERT_EQ(MendIn(restored, {"runs", "--json"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr(kRunId));
  for (const std::string& record :
       {"/reflexion/wal/" + pending_job_ + ".wal", "/reflexion/dlq/" + dead_job_ + ".wal"}) {
    Result<lessonq::Job> job = lessonq::DecodeWalRecord(Read(restored + record));
    MEND_ASSERT_OK(job);
    EXPECT_TRUE(record.find(job->id) != std::string::npos) << record;
  }
}

TEST_F(BackupCommandTest, AWriterThatKeepsCommittingGetsAConsistentCopy) {
  ASSERT_NO_FATAL_FAILURE(MakeHome());
  std::atomic<bool> stop{false};
  std::promise<void> first_commit;
  std::thread writer([&] {
    sqlite3* db = nullptr;
    bool signalled = false;
    if (sqlite3_open_v2((home_ + "/mend.db").c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) ==
        SQLITE_OK) {
      sqlite3_busy_timeout(db, 5000);
      sqlite3_exec(db, "CREATE TABLE IF NOT EXISTS a (n); CREATE TABLE IF NOT EXISTS b (n);",
                   nullptr, nullptr, nullptr);
      while (!stop.load()) {
        // Two tables written in one transaction: a torn copy would count them apart.
        if (sqlite3_exec(db,
                         "BEGIN IMMEDIATE; INSERT INTO a VALUES (1); INSERT INTO b VALUES (1);"
                         " COMMIT;",
                         nullptr, nullptr, nullptr) != SQLITE_OK) {
          sqlite3_exec(db, "ROLLBACK", nullptr, nullptr, nullptr);
        } else if (!signalled) {
          signalled = true;
          first_commit.set_value();
        }
      }
    }
    sqlite3_close(db);
    if (!signalled) first_commit.set_value();
  });
  first_commit.get_future().wait();
  const int code = Mend({"backup", dest_});
  stop.store(true);
  writer.join();
  ASSERT_EQ(code, 0) << err();

  const std::string copy = dest_ + "/mend.db";
  const int64_t a = QueryInt(copy, "SELECT count(*) FROM a");
  EXPECT_GE(a, 1);
  EXPECT_EQ(QueryInt(copy, "SELECT count(*) FROM b"), a);
  EXPECT_EQ(QueryInt(copy,
                     "SELECT count(*) FROM pragma_integrity_check WHERE integrity_check = "
                     "'ok'"),
            1);
  const std::string restored = dir_ + "/restored";
  fs::copy(dest_, restored, fs::copy_options::recursive);
  ASSERT_EQ(MendIn(restored, {"runs", "--json"}), 0) << err();
  EXPECT_THAT(out(), HasSubstr(kRunId));
}

TEST_F(BackupCommandTest, ADestinationInUseIsRefusedAndLeftAlone) {
  ASSERT_NO_FATAL_FAILURE(MakeHome());
  Write(dest_ + "/keep.txt", "mine");
  EXPECT_EQ(Mend({"backup", dest_}), 2);
  EXPECT_THAT(err(), HasSubstr(dest_ + " is not empty"));
  EXPECT_EQ(FilesUnder(dest_), (std::set<std::string>{"keep.txt"}));

  // A file is no folder.
  EXPECT_EQ(Mend({"backup", dest_ + "/keep.txt"}), 2);
  EXPECT_THAT(err(), HasSubstr("is not a folder"));
  // Nor may the copy land inside the home it copies.
  EXPECT_EQ(Mend({"backup", home_ + "/backup"}), 2);
  EXPECT_THAT(err(), HasSubstr("inside the home"));
  EXPECT_FALSE(fs::exists(home_ + "/backup"));
}

TEST_F(BackupCommandTest, AMissingHomeIsAClearErrorAndCreatesNothing) {
  EXPECT_EQ(Mend({"backup", dest_}), 2);
  EXPECT_THAT(err(), HasSubstr("no mend home at " + home_));
  EXPECT_FALSE(fs::exists(home_));
  EXPECT_FALSE(fs::exists(dest_));
  EXPECT_EQ(Mend({"backup"}), 2);
  EXPECT_THAT(err(), HasSubstr("DEST_DIR is required"));
}

}  // namespace
}  // namespace mend::cli
