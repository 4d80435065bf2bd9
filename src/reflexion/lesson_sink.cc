#include "mend/reflexion/lesson_sink.h"

#include <utility>

#include "mend/base/file_system.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"
#include "mend/obs/events.h"

namespace mend::reflexion {
namespace {

constexpr std::string_view kLessonsHeader = "# Lessons\n\n";

std::string Field(std::string_view value) {
  std::string collapsed = CollapseWhitespace(value);
  return collapsed.empty() ? "(unknown)" : collapsed;
}

// "- <time> [<trigger>] <situation> → <correction> (fact <id>; tags: a, b)\n"
std::string LessonsEntry(const Lesson& lesson, const std::string& fact_id) {
  std::string entry = "- " + FormatRfc3339Seconds(lesson.created_at) + " [" +
                      Field(lesson.trigger) + "] " + Field(lesson.situation) + " \u2192 " +
                      Field(lesson.correction) + " (";
  entry += fact_id.empty() ? "not stored" : "fact " + fact_id;
  std::vector<std::string> tags = memory::NormalizeTags(lesson.tags);
  for (size_t i = 0; i < tags.size(); ++i) {
    entry += (i == 0 ? "; tags: " : ", ") + CollapseWhitespace(tags[i]);
  }
  entry += ")\n";
  return entry;
}

}  // namespace

LessonSink::LessonSink(memory::FactStore* facts, Env env, obs::EventBus* events,
                       LessonSinkOptions options)
    : facts_(facts), env_(env), events_(events), options_(std::move(options)) {}

Result<std::string> LessonSink::Persist(const Lesson& lesson,
                                        const lessonq::LessonRequest* provenance) {
  std::string fact_id;
  std::string_view kind = "log_only";
  if (options_.persist) {
    if (facts_ == nullptr) return FailedPreconditionError("lesson sink has no fact store");
    MEND_ASSIGN_OR_RETURN(
        memory::AddResult added,
        facts_->Add(LessonFact(lesson, provenance,
                               provenance != nullptr && !provenance->workspace.empty()
                                   ? provenance->workspace
                                   : options_.workspace)));
    fact_id = std::move(added.id);
    kind = memory::AddResultKindName(added.kind);
    if (options_.on_stored) options_.on_stored();
  }
  if (events_ != nullptr) {
    obs::Event e("reflexion.lesson_stored");
    e.AddString("fact", fact_id).AddString("trigger", lesson.trigger).AddString("kind", kind);
    events_->Publish(std::move(e));
  }
  Status logged = AppendToLessonsFile(lesson, fact_id);
  if (logged.ok()) return fact_id;
  // With persist off the file is the only record of the lesson, so its failure is the caller's.
  if (!options_.persist) return logged;
  if (events_ != nullptr) {
    obs::Event e("reflexion.lessons_file_failed");
    e.AddString("fact", fact_id)
        .AddString("file", options_.lessons_file)
        .AddString("error", logged.ToString());
    events_->Publish(std::move(e));
  }
  return fact_id;
}

Status LessonSink::AppendToLessonsFile(const Lesson& lesson, const std::string& fact_id) {
  if (options_.lessons_file.empty()) return OkStatus();
  if (env_.fs == nullptr) return FailedPreconditionError("lesson sink has no file system");
  FileSystem& fs = *env_.fs;
  const std::string& path = options_.lessons_file;
  std::string entry = LessonsEntry(lesson, fact_id);
  std::lock_guard<std::mutex> lock(file_mu_);
  MEND_RETURN_IF_ERROR(fs.CreateDirs(DirName(path)));
  Result<FileInfo> info = fs.Stat(path);
  if (!info.ok() && info.status().code() != StatusCode::kNotFound) return info.status();
  if (!info.ok() || info->size == 0) entry.insert(0, kLessonsHeader);
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<WritableFile> file,
                        fs.OpenWritable(path, WriteMode::kAppend));
  MEND_RETURN_IF_ERROR(file->Append(entry));
  MEND_RETURN_IF_ERROR(file->Sync());
  return file->Close();
}

lessonq::Processor MakeLessonProcessor(LessonGenerator& generator, LessonSink& sink,
                                       std::function<void()> on_persist_failure) {
  return [&generator, &sink, on_persist_failure = std::move(on_persist_failure)](
             const lessonq::Job& job,
             const lessonq::JobContext& context) -> Result<lessonq::ProcessResult> {
    // Generator errors keep their code and class: a provider outage is retried, while a parse
    // error or a rejected key goes to the dead-letter queue for a person to look at.
    MEND_ASSIGN_OR_RETURN(std::optional<Lesson> lesson,
                          generator.Generate(job.request, context.cancelled));
    if (!lesson) return lessonq::ProcessResult::kSkipped;
    Result<std::string> stored = sink.Persist(*lesson, &job.request);
    if (!stored.ok()) {
      if (on_persist_failure) on_persist_failure();
      // The lesson itself was fine; the store was not. Retrying later is the right call.
      return stored.status().Annotate("storing lesson").WithClass(ErrorClass::kTransient);
    }
    return lessonq::ProcessResult::kSuccess;
  };
}

}  // namespace mend::reflexion
