// The child process of lesson_crash_test: a process that owns a lesson queue and enqueues jobs as
// fast as it can while its workers turn them into lesson facts, printing "acked <id>" once each
// enqueue has returned (the record is durable). The test kills it with SIGKILL at random moments.
//
//   lesson_crash_child enqueue HOME FIRST   enqueue jobs FIRST, FIRST+1, ... until killed
//   lesson_crash_child drain HOME           replay and process everything pending, then exit
//
// The processor stands in for the model: the lesson of job N is derived from the job's id, so the
// test can find the fact of every acknowledged job.
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "mend/base/env.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/memory/fact_store.h"
#include "mend/reflexion/lesson_sink.h"

namespace mend {
namespace {

int Fail(const Status& status) {
  std::cerr << "lesson_crash_child: " << status.ToString() << "\n";
  return 1;
}

reflexion::Lesson LessonFor(const lessonq::Job& job) {
  reflexion::Lesson lesson;
  lesson.situation = "handling crash job " + job.id;
  lesson.mistake = std::string(job.id.rbegin(), job.id.rend());
  lesson.correction = "keep " + job.id + " safe";
  lesson.tags = {"crash-test"};
  lesson.trigger = job.request.trigger;
  return lesson;
}

int Main(int argc, char** argv) {
  if (argc < 3) {
    std::cerr << "usage: lesson_crash_child enqueue HOME FIRST | drain HOME\n";
    return 2;
  }
  const std::string mode = argv[1];
  const std::string home = argv[2];
  Env env = Env::Default();
  if (Status made = env.fs->CreateDirs(home); !made.ok()) return Fail(made);
  memory::FactStoreOptions fact_options;
  fact_options.clock = env.clock;
  auto facts = memory::FactStore::Open(JoinPath(home, "mend.db"), fact_options);
  if (!facts.ok()) return Fail(facts.status());
  reflexion::LessonSinkOptions sink_options;
  sink_options.lessons_file = JoinPath(home, "reflexion/LESSONS.md");
  reflexion::LessonSink sink(facts->get(), env, nullptr, sink_options);
  lessonq::QueueOptions options;
  options.base_dir = JoinPath(home, "reflexion");
  auto queue = lessonq::LessonQueue::Open(env, options, nullptr);
  if (!queue.ok()) return Fail(queue.status());
  Status started =
      (*queue)->Start([&sink](const lessonq::Job& job,
                              const lessonq::JobContext&) -> Result<lessonq::ProcessResult> {
        MEND_RETURN_IF_ERROR(sink.Persist(LessonFor(job), &job.request).status());
        return lessonq::ProcessResult::kSuccess;
      });
  if (!started.ok()) return Fail(started);
  if (mode == "drain") {
    auto report = (*queue)->DrainNow(std::chrono::seconds(60));
    if (!report.ok()) return Fail(report.status());
    std::cout << "drained remaining=" << report->remaining << std::endl;
    return (*queue)->Shutdown(std::chrono::seconds(10)).ok() ? 0 : 1;
  }
  if (mode != "enqueue" || argc < 4) return 2;
  for (long i = std::atol(argv[3]);; ++i) {
    lessonq::LessonRequest request;
    request.task = "crash task " + std::to_string(i);
    request.attempt = "attempt " + std::to_string(i);
    request.outcome = "ERROR: failure " + std::to_string(i);
    request.trigger = "error";
    auto result = (*queue)->Enqueue(request);
    if (!result.ok()) return Fail(result.status());
    std::cout << "acked " << result->id << std::endl;
  }
}

}  // namespace
}  // namespace mend

int main(int argc, char** argv) { return mend::Main(argc, argv); }
