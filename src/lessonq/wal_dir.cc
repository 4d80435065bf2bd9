#include "mend/lessonq/wal_dir.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <string>
#include <utility>

#include "mend/lessonq/wal_codec.h"

namespace mend::lessonq {
namespace {

constexpr std::string_view kTmpPrefix = ".tmp.";
constexpr std::string_view kWalSuffix = ".wal";

Status BadId(const std::string& id) {
  return InvalidArgumentError("not a lesson job id (16 lowercase hex digits): \"" + id + "\"");
}

// Unique across the threads and WalDir objects of this process; the pid separates processes.
std::string UniqueSuffix() {
  static std::atomic<uint64_t> counter{0};
  return std::to_string(static_cast<long long>(getpid())) + "." +
         std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
}

// The job id of a record file name, or "" for any other name.
std::string IdFromName(std::string_view name) {
  if (name.size() != 16 + kWalSuffix.size() || !name.ends_with(kWalSuffix)) return "";
  std::string_view id = name.substr(0, 16);
  return IsJobId(id) ? std::string(id) : "";
}

// The process id of a temporary chatcli leaves while it writes a record, `<id>.tmp.<pid>.<seq>`,
// or 0 for any other name.
pid_t ChatcliTemporaryPid(std::string_view name) {
  constexpr std::string_view kInfix = ".tmp.";
  if (name.size() < 16 + kInfix.size() + 3 || !IsJobId(name.substr(0, 16)) ||
      name.substr(16, kInfix.size()) != kInfix) {
    return 0;
  }
  std::string_view rest = name.substr(16 + kInfix.size());
  const size_t dot = rest.find('.');
  if (dot == std::string_view::npos || dot == 0 || dot + 1 == rest.size()) return 0;
  for (char c : rest) {
    if (c != '.' && (c < '0' || c > '9')) return 0;
  }
  if (rest.find('.', dot + 1) != std::string_view::npos) return 0;
  long long pid = 0;
  auto [end, ec] = std::from_chars(rest.data(), rest.data() + dot, pid);
  if (ec != std::errc() || end != rest.data() + dot || pid <= 0 || pid > INT32_MAX) return 0;
  return static_cast<pid_t>(pid);
}

// Whether a process with this id runs on this machine (one we may not signal counts).
bool ProcessAlive(pid_t pid) { return ::kill(pid, 0) == 0 || errno == EPERM; }

Status WriteAndRename(FileSystem& fs, const std::string& record, const std::string& tmp,
                      const std::string& path) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                        fs.OpenWritable(tmp, WriteMode::kCreateExclusive));
  MEND_RETURN_IF_ERROR(file->Append(record));
  MEND_RETURN_IF_ERROR(file->Sync());
  MEND_RETURN_IF_ERROR(file->Close());
  return fs.Rename(tmp, path);
}

}  // namespace

WalDir::WalDir(FileSystem& fs, std::string dir) : fs_(fs), dir_(std::move(dir)) {}

WalDir::~WalDir() = default;

Result<std::unique_ptr<WalDir>> WalDir::Open(FileSystem& fs, const std::string& dir,
                                             size_t max_record_bytes) {
  MEND_RETURN_IF_ERROR(fs.CreateDirs(dir));
  auto wal = std::unique_ptr<WalDir>(new WalDir(fs, dir));
  wal->max_record_bytes_ = max_record_bytes;
  return wal;
}

std::string WalDir::PathFor(const std::string& id) const {
  return JoinPath(dir_, id + std::string(kWalSuffix));
}

void WalDir::LockId(const std::string& id) {
  std::unique_lock<std::mutex> lock(ids_mu_);
  ids_cv_.wait(lock, [&] { return !busy_ids_.contains(id); });
  busy_ids_.insert(id);
}

void WalDir::UnlockId(const std::string& id) {
  {
    std::lock_guard<std::mutex> lock(ids_mu_);
    busy_ids_.erase(id);
  }
  ids_cv_.notify_all();
}

bool WalDir::IsOwnTemporary(const std::string& name) {
  std::lock_guard<std::mutex> lock(ids_mu_);
  return writing_.contains(name);
}

Result<bool> WalDir::Append(const Job& job) {
  bool created = false;
  MEND_RETURN_IF_ERROR(WriteRecord(job, /*exclusive=*/true, &created));
  return created;
}

Status WalDir::Update(const Job& job) {
  bool created = false;
  return WriteRecord(job, /*exclusive=*/false, &created);
}

Status WalDir::WriteRecord(const Job& job, bool exclusive, bool* created) {
  if (!IsJobId(job.id)) return BadId(job.id);
  MEND_ASSIGN_OR_RETURN(
      const std::string record,
      EncodeWalRecord(max_record_bytes_ > 0 ? FitWalRecord(job, max_record_bytes_) : job));
  const std::string path = PathFor(job.id);
  LockId(job.id);
  Status s = [&]() -> Status {
    if (exclusive) {
      Result<FileInfo> info = fs_.Stat(path);
      if (info.ok()) return OkStatus();
      if (info.status().code() != StatusCode::kNotFound) return info.status();
    }
    Status written = WriteOnce(job.id, record, path);
    // Another process's Scan may have taken our temporary for a leftover; write it once more.
    if (written.code() == StatusCode::kNotFound) written = WriteOnce(job.id, record, path);
    MEND_RETURN_IF_ERROR(written);
    Status synced = SyncDirShared();
    if (!synced.ok() && exclusive) {
      // The caller is told the append failed, so the record must not turn up later.
      fs_.Unlink(path).IgnoreError();
      return synced;
    }
    *created = synced.ok();
    return synced;
  }();
  UnlockId(job.id);
  return s;
}

Status WalDir::WriteOnce(const std::string& id, const std::string& record,
                         const std::string& path) {
  const std::string name = std::string(kTmpPrefix) + id + "." + UniqueSuffix();
  {
    std::lock_guard<std::mutex> lock(ids_mu_);
    writing_.insert(name);
  }
  const std::string tmp = JoinPath(dir_, name);
  Status s = WriteAndRename(fs_, record, tmp, path);
  if (!s.ok()) fs_.Unlink(tmp).IgnoreError();
  {
    std::lock_guard<std::mutex> lock(ids_mu_);
    writing_.erase(name);
  }
  return s;
}

// Group commit: a writer joins the batch that is still collecting, so the batch's sync starts
// after the writer's rename. The first member that finds no sync running leads it; the others
// wait for its result, which is theirs too (a failed sync fails every member).
Status WalDir::SyncDirShared() {
  std::unique_lock<std::mutex> lock(sync_mu_);
  if (pending_ == nullptr) pending_ = std::make_shared<SyncBatch>();
  std::shared_ptr<SyncBatch> batch = pending_;
  sync_cv_.wait(lock, [&] { return batch->done || (!syncing_ && pending_ == batch); });
  if (batch->done) return batch->status;
  syncing_ = true;
  pending_ = nullptr;
  lock.unlock();
  Status s = fs_.SyncDir(dir_);
  lock.lock();
  batch->status = s;
  batch->done = true;
  syncing_ = false;
  sync_cv_.notify_all();
  return s;
}

Status WalDir::Remove(const std::string& id) {
  if (!IsJobId(id)) return BadId(id);
  LockId(id);
  Status s = fs_.Unlink(PathFor(id));
  if (s.ok()) s = SyncDirShared();
  UnlockId(id);
  return s;
}

Status WalDir::RemoveMany(const std::vector<std::string>& ids) {
  for (const std::string& id : ids) {
    if (!IsJobId(id)) return BadId(id);
    LockId(id);
    Status s = fs_.Unlink(PathFor(id));
    UnlockId(id);
    if (!s.ok() && s.code() != StatusCode::kNotFound) return s;
  }
  return ids.empty() ? OkStatus() : SyncDirShared();
}

Result<Job> WalDir::ReadChecked(const std::string& id, const std::string& path) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> file, fs_.OpenReadable(path));
  Result<Job> job = ReadWalRecord(*file);
  file.reset();
  if (job.ok() && job->id != id) {
    job = DataLossError("corrupt WAL record: " + path + " holds job \"" + job->id + "\"");
  }
  if (job.status().code() == StatusCode::kDataLoss) {
    // A bad record can never become good; removing it keeps it from failing every later read.
    fs_.Unlink(path).IgnoreError();
  }
  return job;
}

Result<Job> WalDir::Read(const std::string& id) {
  if (!IsJobId(id)) return BadId(id);
  return ReadChecked(id, PathFor(id));
}

bool WalDir::Contains(const std::string& id) { return IsJobId(id) && fs_.Stat(PathFor(id)).ok(); }

Status WalDir::RemoveQuietly(const std::string& path, int64_t* counter) {
  Status s = fs_.Unlink(path);
  if (s.ok()) ++*counter;
  return s.code() == StatusCode::kNotFound ? OkStatus() : s;
}

Result<WalScan> WalDir::Scan() {
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_.List(dir_));
  WalScan scan;
  for (const std::string& name : names) {
    const std::string path = JoinPath(dir_, name);
    if (name.starts_with(kTmpPrefix)) {
      if (IsOwnTemporary(name)) continue;
      MEND_RETURN_IF_ERROR(RemoveQuietly(path, &scan.temporaries_removed));
      continue;
    }
    if (const pid_t writer = ChatcliTemporaryPid(name); writer != 0) {
      // chatcli's own temporary: a leftover once its writer is gone; while that process lives
      // it may still rename it into place, so it is left alone.
      if (!ProcessAlive(writer)) {
        MEND_RETURN_IF_ERROR(RemoveQuietly(path, &scan.temporaries_removed));
      }
      continue;
    }
    const std::string id = IdFromName(name);
    if (id.empty()) {
      ++scan.foreign_skipped;
      continue;
    }
    Result<Job> job = ReadChecked(id, path);
    if (job.ok()) {
      scan.jobs.push_back(*std::move(job));
    } else if (job.status().code() == StatusCode::kDataLoss) {
      ++scan.corrupt_removed;
    } else if (job.status().code() != StatusCode::kNotFound) {
      return job.status();  // kNotFound: acknowledged while we listed
    }
  }
  std::sort(scan.jobs.begin(), scan.jobs.end(),
            [](const Job& a, const Job& b) { return a.id < b.id; });
  return scan;
}

Result<std::vector<std::string>> WalDir::ListIds() {
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> names, fs_.List(dir_));
  std::vector<std::string> ids;
  for (const std::string& name : names) {
    std::string id = IdFromName(name);
    if (!id.empty()) ids.push_back(std::move(id));
  }
  return ids;
}

}  // namespace mend::lessonq
