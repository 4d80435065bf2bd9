#pragma once

// `mend backup`: an online copy of a home while mend may be running (docs/operations.md,
// "Backup and restore").

#include <cstdint>
#include <string>
#include <vector>

#include "mend/base/env.h"
#include "mend/base/result.h"

namespace mend::app {

/// What BackupHome copies and where.
struct BackupRequest {
  std::string home;       ///< the home to copy
  std::string queue_dir;  ///< the lesson queue's folder (reflexion.queue.base_dir), maybe elsewhere
  std::string dest;       ///< the backup folder: must not exist, or be an empty folder
  std::string mend_version;  ///< recorded in the manifest
  /// store.url is a postgres:// URL: what lives there is not in the copy, which the manifest notes.
  bool shared_state_on_postgres = false;
};

/// One file of a backup, as MANIFEST.json lists it.
struct BackupFile {
  /// Relative to the backup folder, '/'-separated: "mend.db", "reflexion/wal/x.wal".
  std::string path;
  uint64_t size = 0;   ///< in bytes
  std::string sha256;  ///< 64 lowercase hex digits
};

/// MANIFEST.json: what a backup holds.
struct BackupManifest {
  int format = 1;                  ///< of MANIFEST.json itself
  std::string mend_version;        ///< the mend that made it
  std::string created_at;          ///< RFC 3339, UTC, whole seconds
  std::string home;                ///< the home copied
  std::vector<BackupFile> files;   ///< in the order they were copied
  std::vector<std::string> notes;  ///< what the copy leaves out, one sentence each

  /// The sizes of `files` added up.
  uint64_t total_bytes() const;
};

/// The name of the manifest inside a backup folder.
inline constexpr char kBackupManifestName[] = "MANIFEST.json";

/// Copies `request.home` into `request.dest` as a home that works when put in its place:
///
/// ```
///   reflexion/wal/*.wal, reflexion/dlq/*.wal, reflexion/LESSONS.md   from request.queue_dir
///   mend.db, observe.db        through SQLite's online backup (db::BackupSqliteDatabase)
///   config.toml, events.jsonl, events-<time>.jsonl, improve/<attempt-id>/...
/// ```
///
/// in that order, and then MANIFEST.json (BackupManifestJson) written atomically: a folder without
/// it is an incomplete backup. The lesson records are copied before the databases, so a job that
/// finishes while the copy runs is in the copy as pending (it runs again after a restore) rather
/// than lost. Each record, written by rename, is copied whole or, when it went meanwhile, not at
/// all; event logs are copied up to their last whole line. Lock files, temporaries, the SQLite
/// -wal and -shm files and improve's scratch folders are left out. Files are written 0600 and
/// folders 0700 (an existing empty `dest` is narrowed to 0700). Needs the real file system (SQLite
/// opens the databases itself); `env.fs` copies the other files and `env.clock` dates the manifest.
///
/// Errors: kFailedPrecondition when `home` is not a folder, or `dest` is not empty or not a folder;
/// kInvalidArgument when `dest` lies inside `home`; the errors of the file system and of the
/// database copies as they come, leaving `dest` without a manifest.
Result<BackupManifest> BackupHome(const BackupRequest& request, const Env& env);

/// MANIFEST.json: {"format","mend_version","created_at","home","files":[{"path","size","sha256"}],
/// "notes"}, keys in alphabetical order, indented for people.
std::string BackupManifestJson(const BackupManifest& manifest);

}  // namespace mend::app
