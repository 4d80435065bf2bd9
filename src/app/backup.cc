// mend backup: a home copied while its processes may keep writing. The databases go through
// SQLite's online backup, which copies one committed state; every other file mend writes is
// either replaced whole by a rename (lesson records, proposals) or appended a line at a time
// (event logs, LESSONS.md), so copying what a directory listing names gives whole files, and a
// log cut at its last newline gives whole lines.
#include "mend/app/backup.h"

#include <sys/stat.h>

#include <cerrno>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <system_error>
#include <utility>

#include "mend/base/home_layout.h"
#include "mend/base/json.h"
#include "mend/base/sha256_hasher.h"
#include "mend/base/time_format.h"
#include "mend/db/sqlite_backup.h"
#include "mend/lessonq/job.h"

namespace mend::app {
namespace {

constexpr size_t kChunkBytes = 1 << 20;
constexpr char kWalSuffix[] = ".wal";

// A file appended a line at a time is copied up to its last newline: a line being written while
// the copy reads it would otherwise end the copy half written.
enum class CopyScope { kWholeFile, kWholeLines };

// The canonical form of `path` as far as it exists, for comparing where two folders lie.
std::string Canonical(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path canonical = std::filesystem::weakly_canonical(path, ec);
  return ec ? NormalizePath(path) : canonical.string();
}

bool Inside(const std::string& path, const std::string& dir) {
  const std::string p = Canonical(path), d = Canonical(dir);
  return p == d || p.starts_with(d + "/");
}

Status CheckFolders(const BackupRequest& request, FileSystem& fs) {
  Result<FileInfo> home = fs.Stat(request.home);
  if (!home.ok() || !home->is_directory) {
    return FailedPreconditionError("no mend home at " + request.home + ": nothing to back up");
  }
  if (Inside(request.dest, request.home) || Inside(request.dest, request.queue_dir)) {
    return InvalidArgumentError("the backup folder " + request.dest +
                                " lies inside the home it copies; choose a folder outside it");
  }
  Result<FileInfo> dest = fs.Stat(request.dest);
  if (!dest.ok()) {
    if (dest.status().code() != StatusCode::kNotFound) return dest.status();
    return fs.CreateDirs(request.dest);
  }
  if (!dest->is_directory) {
    return FailedPreconditionError(request.dest + " exists and is not a folder; give a new or " +
                                   "empty folder");
  }
  MEND_ASSIGN_OR_RETURN(std::vector<std::string> entries, fs.List(request.dest));
  if (!entries.empty()) {
    return FailedPreconditionError(request.dest + " is not empty; give a new or empty folder");
  }
  // The copy holds secrets from tasks and tool output: its folder is the user's alone, even when
  // the user made it with a wider mode.
  if (::chmod(request.dest.c_str(), 0700) != 0) {
    return ErrnoToStatus(errno, "chmod " + request.dest);
  }
  return OkStatus();
}

// Writes the files of one backup and lists them in its manifest.
class BackupWriter {
 public:
  BackupWriter(const BackupRequest& request, FileSystem& fs, BackupManifest& manifest)
      : request_(request), fs_(fs), manifest_(manifest) {}

  // Copies the file `from` to `rel` in the backup. A file that is gone by the time it is opened
  // (a lesson record acknowledged meanwhile) is skipped.
  Status CopyFile(const std::string& from, const std::string& rel, CopyScope scope) {
    Result<std::unique_ptr<ReadableFile>> in = fs_.OpenReadable(from);
    if (!in.ok()) {
      return in.status().code() == StatusCode::kNotFound ? OkStatus() : in.status();
    }
    MEND_RETURN_IF_ERROR(MakeParent(rel));
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> out,
                          fs_.OpenWritable(Dest(rel), WriteMode::kCreateExclusive));
    BackupFile entry{rel, 0, ""};
    Sha256Hasher hasher;
    std::string chunk, pending;
    while (true) {
      MEND_RETURN_IF_ERROR((*in)->Read(kChunkBytes, &chunk));
      if (chunk.empty()) break;
      pending += chunk;
      const size_t end = scope == CopyScope::kWholeFile ? pending.size() : pending.rfind('\n') + 1;
      if (end == 0) continue;  // no newline yet: npos + 1
      const std::string_view ready(pending.data(), end);
      MEND_RETURN_IF_ERROR(out->Append(ready));
      hasher.Update(ready);
      entry.size += ready.size();
      pending.erase(0, end);
    }
    MEND_RETURN_IF_ERROR(out->Sync());
    MEND_RETURN_IF_ERROR(out->Close());
    entry.sha256 = hasher.FinishHex();
    manifest_.files.push_back(std::move(entry));
    return OkStatus();
  }

  // Copies the SQLite database `from`, when it exists, to `rel` through the online backup.
  Status CopyDatabase(const std::string& from, const std::string& rel) {
    if (!fs_.Exists(from)) return OkStatus();
    MEND_RETURN_IF_ERROR(db::BackupSqliteDatabase(from, Dest(rel)));
    return Record(rel);
  }

  // Every file under the folder `from`, recursively, to `rel`; nothing when it does not exist.
  Status CopyTree(const std::string& from, const std::string& rel) {
    Result<std::vector<std::string>> names = fs_.List(from);
    if (!names.ok()) {
      return names.status().code() == StatusCode::kNotFound ? OkStatus() : names.status();
    }
    for (const std::string& name : *names) {
      const std::string path = JoinPath(from, name);
      Result<FileInfo> info = fs_.Stat(path);
      if (!info.ok()) continue;  // gone meanwhile
      if (info->is_directory) {
        MEND_RETURN_IF_ERROR(CopyTree(path, rel + "/" + name));
      } else {
        MEND_RETURN_IF_ERROR(CopyFile(path, rel + "/" + name, CopyScope::kWholeFile));
      }
    }
    return OkStatus();
  }

  // The records of a lesson queue folder (`wal` or `dlq`), one file each.
  Status CopyRecords(const std::string& from, const std::string& rel) {
    Result<std::vector<std::string>> names = fs_.List(from);
    if (!names.ok()) {
      return names.status().code() == StatusCode::kNotFound ? OkStatus() : names.status();
    }
    for (const std::string& name : *names) {
      // What the queue reads as a record: <job-id>.wal (docs/wal_format.md); not its temporaries.
      const std::string_view stem = std::string_view(name).substr(0, name.rfind('.'));
      if (!name.ends_with(kWalSuffix) || !lessonq::IsJobId(stem)) continue;
      MEND_RETURN_IF_ERROR(CopyFile(JoinPath(from, name), rel + "/" + name, CopyScope::kWholeFile));
    }
    return OkStatus();
  }

  // Makes the entries of every folder the copy created durable, then those of the backup folder.
  Status SyncFolders() {
    for (const std::string& folder : folders_) MEND_RETURN_IF_ERROR(fs_.SyncDir(Dest(folder)));
    return fs_.SyncDir(request_.dest);
  }

 private:
  std::string Dest(const std::string& rel) const { return JoinPath(request_.dest, rel); }

  // Creates the folders of `rel` and remembers each, its ancestors too, for SyncFolders.
  Status MakeParent(const std::string& rel) {
    const size_t slash = rel.rfind('/');
    if (slash == std::string::npos) return OkStatus();
    const std::string parent = rel.substr(0, slash);
    if (folders_.contains(parent)) return OkStatus();
    MEND_RETURN_IF_ERROR(fs_.CreateDirs(Dest(parent)));
    for (size_t end = parent.size(); end != std::string::npos && end > 0;
         end = parent.rfind('/', end - 1)) {
      folders_.insert(parent.substr(0, end));
    }
    return OkStatus();
  }

  // Lists a file the database copy wrote, with the size and digest of what is on disk.
  Status Record(const std::string& rel) {
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> in, fs_.OpenReadable(Dest(rel)));
    BackupFile entry{rel, 0, ""};
    Sha256Hasher hasher;
    std::string chunk;
    while (true) {
      MEND_RETURN_IF_ERROR(in->Read(kChunkBytes, &chunk));
      if (chunk.empty()) break;
      hasher.Update(chunk);
      entry.size += chunk.size();
    }
    entry.sha256 = hasher.FinishHex();
    manifest_.files.push_back(std::move(entry));
    return OkStatus();
  }

  const BackupRequest& request_;
  FileSystem& fs_;
  BackupManifest& manifest_;
  std::set<std::string> folders_;  // relative to the backup folder
};

// The home's event logs: the live one and those rotated beside it.
std::vector<std::string> EventLogNames(FileSystem& fs, const std::string& home) {
  std::vector<std::string> logs;
  Result<std::vector<std::string>> names = fs.List(home);
  if (!names.ok()) return logs;
  const std::string live = BaseName(home::EventLogFile(home));
  for (const std::string& name : *names) {
    if (name == live || home::RotatedEventLogStamp(name).has_value()) logs.push_back(name);
  }
  return logs;
}

Status CopyHome(const BackupRequest& request, FileSystem& fs, BackupManifest& manifest) {
  BackupWriter writer(request, fs, manifest);
  // The backup folder is laid out as a home, so its paths are the home layout's, relative to it
  // (the layout joins an empty home to nothing); the queue comes back to the home's default place.
  const std::string copy;
  const std::string queue = home::LessonQueueDir(copy);
  // The queue before the databases: see BackupHome's contract.
  MEND_RETURN_IF_ERROR(
      writer.CopyRecords(home::LessonWalDir(request.queue_dir), home::LessonWalDir(queue)));
  MEND_RETURN_IF_ERROR(
      writer.CopyRecords(home::LessonDlqDir(request.queue_dir), home::LessonDlqDir(queue)));
  MEND_RETURN_IF_ERROR(writer.CopyFile(home::LessonsFile(request.queue_dir),
                                       home::LessonsFile(queue), CopyScope::kWholeLines));
  MEND_RETURN_IF_ERROR(
      writer.CopyDatabase(home::DatabaseFile(request.home), home::DatabaseFile(copy)));
  MEND_RETURN_IF_ERROR(
      writer.CopyDatabase(home::ObserveFile(request.home), home::ObserveFile(copy)));
  MEND_RETURN_IF_ERROR(writer.CopyFile(home::ConfigFile(request.home), home::ConfigFile(copy),
                                       CopyScope::kWholeFile));
  for (const std::string& log : EventLogNames(fs, request.home)) {
    MEND_RETURN_IF_ERROR(writer.CopyFile(JoinPath(request.home, log), log, CopyScope::kWholeLines));
  }
  MEND_RETURN_IF_ERROR(writer.CopyTree(home::ImproveDir(request.home), home::ImproveDir(copy)));
  return writer.SyncFolders();
}

}  // namespace

uint64_t BackupManifest::total_bytes() const {
  uint64_t total = 0;
  for (const BackupFile& file : files) total += file.size;
  return total;
}

Result<BackupManifest> BackupHome(const BackupRequest& request, const Env& env) {
  MEND_RETURN_IF_ERROR(CheckFolders(request, *env.fs));
  BackupManifest manifest;
  manifest.mend_version = request.mend_version;
  manifest.created_at = FormatRfc3339Seconds(env.clock->Now());
  manifest.home = request.home;
  MEND_RETURN_IF_ERROR(CopyHome(request, *env.fs, manifest));
  if (request.shared_state_on_postgres) {
    manifest.notes.push_back(
        "store.url is a PostgreSQL database: the runs, memory, improve attempts and any lesson "
        "jobs kept there are not in this copy; back them up with the database's own tools");
  }
  MEND_RETURN_IF_ERROR(WriteFileAtomically(*env.fs, JoinPath(request.dest, kBackupManifestName),
                                           BackupManifestJson(manifest)));
  return manifest;
}

std::string BackupManifestJson(const BackupManifest& manifest) {
  nlohmann::json files = nlohmann::json::array();
  for (const BackupFile& file : manifest.files) {
    files.push_back({{"path", file.path}, {"size", file.size}, {"sha256", file.sha256}});
  }
  const nlohmann::json doc = {
      {"format", manifest.format},         {"mend_version", manifest.mend_version},
      {"created_at", manifest.created_at}, {"home", manifest.home},
      {"files", std::move(files)},         {"notes", manifest.notes}};
  return DumpJson(doc, 2) + "\n";
}

}  // namespace mend::app
