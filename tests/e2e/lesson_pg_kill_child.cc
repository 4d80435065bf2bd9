// The child process of replica_lesson_kill_test: a worker of the PostgreSQL lesson queue that
// dies holding a job. It enqueues one job, starts one worker, prints "processing <id> <attempts>"
// when the processor gets the job, and then never finishes it; the test kills it with SIGKILL.
//
//   lesson_pg_kill_child URL SCHEMA
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "mend/base/env.h"
#include "mend/lessonq/postgres_queue.h"

namespace mend {
namespace {

int Fail(const Status& status) {
  std::cerr << "lesson_pg_kill_child: " << status.ToString() << "\n";
  return 1;
}

int Main(int argc, char** argv) {
  if (argc != 3) {
    std::cerr << "usage: lesson_pg_kill_child URL SCHEMA\n";
    return 2;
  }
  lessonq::PgQueueOptions pg;
  pg.url = argv[1];
  pg.schema = argv[2];
  lessonq::QueueOptions options;
  options.workers = 1;
  auto queue = lessonq::OpenPostgresLessonQueue(Env::Default(), options, pg, nullptr);
  if (!queue.ok()) return Fail(queue.status());
  auto enqueued = (*queue)->Enqueue({"a task whose worker dies", "tried", "crashed", "error"});
  if (!enqueued.ok()) return Fail(enqueued.status());
  Status started = (*queue)->Start(
      [](const lessonq::Job& job, const lessonq::JobContext&) -> Result<lessonq::ProcessResult> {
        std::printf("processing %s %lld\n", job.id.c_str(), static_cast<long long>(job.attempts));
        std::fflush(stdout);
        for (;;) pause();  // the job in flight when the SIGKILL comes
      });
  if (!started.ok()) return Fail(started);
  for (;;) pause();
}

}  // namespace
}  // namespace mend

int main(int argc, char** argv) { return mend::Main(argc, argv); }
