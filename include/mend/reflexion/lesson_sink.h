#pragma once

// LessonSink, where generated lessons go (a fact in the fact store and an entry in LESSONS.md), and
// MakeLessonProcessor, the lesson queue's processor: generate, then store (docs/reflexion.md).
// Thread-safe.

#include <functional>
#include <mutex>
#include <optional>
#include <string>

#include "mend/base/env.h"
#include "mend/base/result.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/memory/fact_store.h"
#include "mend/reflexion/generator.h"
#include "mend/reflexion/lesson.h"

namespace mend::obs {
class EventBus;
}  // namespace mend::obs

namespace mend::reflexion {

/// Where a LessonSink writes.
struct LessonSinkOptions {
  bool persist = true;       ///< false: log-only (LESSONS.md and an event, no fact)
  std::string lessons_file;  ///< reflexion/LESSONS.md; "" = none
  std::string workspace;     ///< the workspace lesson facts are scoped to ("" = global)
  /// Called after a lesson was stored as a fact (added, reinforced or merged), on the storing
  /// thread; e.g. wakes the embedding backfill so the lesson gets its vector now rather than
  /// after the backfill's idle pause. Must not throw.
  std::function<void()> on_stored;
};

/// Where lessons go: a fact in the fact store (LessonFact) and one entry appended to
/// LESSONS.md. A lesson equal to a stored one reinforces it (the fact store's rule) and adds the
/// new episode to its provenance. Thread-safe.
class LessonSink {
 public:
  /// `facts` (may be null only when !persist), `env` pointers and `events` (may be null) must
  /// outlive the sink.
  LessonSink(memory::FactStore* facts, Env env, obs::EventBus* events, LessonSinkOptions options);
  /// Stores `lesson`; `provenance` (may be null) is the job that produced it. The fact id, or ""
  /// when persist is off. Fact store errors come back as they are; a failure to append to
  /// LESSONS.md after the fact was stored is only reported as an event.
  Result<std::string> Persist(const Lesson& lesson, const lessonq::LessonRequest* provenance);

 private:
  // Appends one entry to options_.lessons_file (no-op when it is ""), serialized by file_mu_.
  Status AppendToLessonsFile(const Lesson& lesson, const std::string& fact_id);

  memory::FactStore* facts_;
  Env env_;
  obs::EventBus* events_;
  LessonSinkOptions options_;
  std::mutex file_mu_;
};

/// The queue's processor: Generate, then Persist. Generator errors keep their class (a transient
/// provider error is retried; an auth error or a parse error is permanent); a Persist failure is
/// transient, and `on_persist_failure` (when set) is called so the owner can count it
/// (mend_lessonq_persist_failures_total).
lessonq::Processor MakeLessonProcessor(LessonGenerator& generator, LessonSink& sink,
                                       std::function<void()> on_persist_failure = {});

}  // namespace mend::reflexion
