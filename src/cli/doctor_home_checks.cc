// `mend doctor`'s checks of the home: config.toml, the directory, the stores' schemas and the
// lesson queue. Modes come from stat(2) and writability from access(2), because the FileSystem
// seam knows neither; everything else is read through it or through the stores' own probes.
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>
#include <vector>

#include "cli/doctor_checks.h"
#include "mend/app/migrate.h"
#include "mend/base/home_layout.h"
#include "mend/lessonq/job.h"
#include "mend/lessonq/wal_codec.h"

namespace mend::cli {
namespace {

std::string Octal(mode_t mode) {
  char text[8];
  std::snprintf(text, sizeof(text), "%04o", static_cast<unsigned>(mode & 07777));
  return text;
}

void Add(DoctorChecks& out, std::string name, CheckStatus status, std::string detail,
         std::string fix = "") {
  out.push_back({std::move(name), status, std::move(detail), std::move(fix)});
}

// What one WAL directory holds: records that read back whole, and records that fail a check.
struct WalCount {
  int64_t records = 0;
  int64_t corrupt = 0;
};

// Reads every `<job id>.wal` of `dir` as the queue's replay would, but leaves bad records where
// they are (the owner removes them when it starts) and ignores temporaries and foreign files. A
// missing directory holds nothing.
Result<WalCount> CountWal(FileSystem& fs, const std::string& dir) {
  WalCount count;
  Result<std::vector<std::string>> names = fs.List(dir);
  if (!names.ok()) {
    if (names.status().code() == StatusCode::kNotFound) return count;
    return names.status();
  }
  for (const std::string& name : *names) {
    if (!name.ends_with(".wal")) continue;
    if (!lessonq::IsJobId(std::string_view(name).substr(0, name.size() - 4))) continue;
    Result<std::unique_ptr<ReadableFile>> file = fs.OpenReadable(JoinPath(dir, name));
    // A record acknowledged since the listing is gone, which is no problem.
    if (!file.ok() && file.status().code() == StatusCode::kNotFound) continue;
    MEND_RETURN_IF_ERROR(file.status());
    Result<lessonq::Job> job = lessonq::ReadWalRecord(**file);
    if (job.ok()) {
      ++count.records;
    } else if (job.status().code() == StatusCode::kDataLoss) {
      ++count.corrupt;
    } else {
      return job.status();
    }
  }
  return count;
}

std::string Plural(int64_t n, const std::string& one, const std::string& many) {
  return std::to_string(n) + " " + (n == 1 ? one : many);
}

}  // namespace

std::string_view CheckStatusName(CheckStatus status) {
  switch (status) {
    case CheckStatus::kOk:
      return "ok";
    case CheckStatus::kWarn:
      return "warn";
    case CheckStatus::kFail:
      break;
  }
  return "fail";
}

void CheckConfigFile(const Config& config, DoctorChecks& out) {
  const std::string file = home::ConfigFile(config.GetString("home"));
  struct stat st;
  if (::stat(file.c_str(), &st) != 0) {
    Add(out, "config", CheckStatus::kOk,
        file + " is not there: defaults, the environment and flags only");
    return;
  }
  if ((st.st_mode & 077) != 0) {
    Add(out, "config", CheckStatus::kWarn,
        file + " loads, but group or others may read it (mode " + Octal(st.st_mode) + ")",
        "chmod 600 " + file + ": it may hold keys");
    return;
  }
  Add(out, "config", CheckStatus::kOk, file + " loads");
}

void CheckHome(const Config& config, DoctorChecks& out) {
  const std::string& home = config.GetString("home");
  struct stat st;
  if (::stat(home.c_str(), &st) != 0) {
    if (errno == ENOENT) {
      Add(out, "home", CheckStatus::kWarn, home + " does not exist yet",
          "nothing to do: the first command that keeps state (mend run, mend serve) creates it");
      return;
    }
    Add(out, "home", CheckStatus::kFail,
        std::string(ErrnoToStatus(errno, "stat " + home).message()),
        "make the folder readable by this user, or choose another home with --home or MEND_HOME");
    return;
  }
  if (!S_ISDIR(st.st_mode)) {
    Add(out, "home", CheckStatus::kFail, home + " is not a folder",
        "move it away, or choose another home with --home or MEND_HOME");
    return;
  }
  if (::access(home.c_str(), W_OK | X_OK) != 0) {
    Add(out, "home", CheckStatus::kFail, home + " is not writable by this user",
        "chmod u+rwx " + home + ", or choose another home with --home or MEND_HOME");
    return;
  }
  if ((st.st_mode & 077) != 0) {
    Add(out, "home", CheckStatus::kWarn,
        home + ": group or others have access (mode " + Octal(st.st_mode) + ")",
        "chmod 700 " + home + ": runs, lessons and traces may hold secrets");
    return;
  }
  Add(out, "home", CheckStatus::kOk, home + ": writable, mode " + Octal(st.st_mode));
}

void CheckSchemas(const Config& config, const Env& env, DoctorChecks& out) {
  Result<std::vector<app::SchemaStore>> stores = app::ConfiguredSchemaStores(config, env);
  if (!stores.ok()) {
    Add(out, "stores", CheckStatus::kFail, std::string(stores.status().message()),
        "leave store.url empty (SQLite in the home) or set it to a postgres:// URL");
    return;
  }
  for (const app::SchemaStore& store : *stores) {
    const std::string name = store.name + " schema";
    const std::string wants = std::to_string(store.version);
    Result<int64_t> found = store.read_version();
    if (!found.ok()) {
      // The probes' messages do not always name the file (SQLite's "file is not a database").
      Add(out, name, CheckStatus::kFail,
          store.location + ": " + std::string(found.status().message()),
          "make it readable, or restore it from a backup (docs/operations.md)");
    } else if (*found == 0) {
      Add(out, name, CheckStatus::kOk,
          store.location + ": not created yet; the first command that uses it creates it");
    } else if (*found > store.version) {
      Add(out, name, CheckStatus::kFail,
          store.location + ": version " + std::to_string(*found) +
              ", written by a newer mend; this one writes version " + wants,
          "upgrade mend: an older mend must not use this home");
    } else if (*found < store.version) {
      Add(out, name, CheckStatus::kWarn,
          store.location + ": version " + std::to_string(*found) + ", this mend writes version " +
              wants,
          "run `mend migrate`");
    } else {
      Add(out, name, CheckStatus::kOk, store.location + ": version " + wants + ", current");
    }
  }
}

void CheckLessonQueue(const Config& config, FileSystem& fs, DoctorChecks& out) {
  if (!config.GetBool("reflexion.queue.enabled")) {
    Add(out, "lesson queue", CheckStatus::kOk, "off (reflexion.queue.enabled is false)");
    return;
  }
  if (config.GetString("reflexion.queue.backend") != "wal") {
    Add(out, "lesson queue", CheckStatus::kOk,
        "on PostgreSQL (its schema is checked above); `mend reflect` shows its jobs");
    return;
  }
  const std::string& dir = config.GetString("reflexion.queue.base_dir");
  Result<WalCount> pending = CountWal(fs, home::LessonWalDir(dir));
  Result<WalCount> dead = pending.ok() ? CountWal(fs, home::LessonDlqDir(dir)) : pending;
  if (!dead.ok()) {
    Add(out, "lesson queue", CheckStatus::kFail, std::string(dead.status().message()),
        "make " + dir + " readable and writable by this user (chmod -R u+rwX)");
    return;
  }
  const int64_t corrupt = pending->corrupt + dead->corrupt;
  std::string detail = dir + ": " + Plural(pending->records, "job", "jobs") + " pending, " +
                       std::to_string(dead->records) + " dead-lettered";
  std::string fix;
  if (dead->records > 0) {
    fix =
        "`mend reflect failed` shows why; `mend reflect retry ID` queues a job again, "
        "`mend reflect purge ID` drops it";
  }
  if (corrupt > 0) {
    detail += ", " + Plural(corrupt, "corrupt record", "corrupt records");
    fix += std::string(fix.empty() ? "" : "; ") +
           "the queue's owner deletes corrupt records when it starts (their lessons are lost); "
           "more of them point at the disk (docs/lesson_queue.md)";
  }
  Add(out, "lesson queue", fix.empty() ? CheckStatus::kOk : CheckStatus::kWarn, detail, fix);
}

}  // namespace mend::cli
