// `mend reflect ...`: the durable lesson queue of docs/reflect_cli.md. Each subcommand opens the
// runtime, calls the queue (or the manual-lesson path) through reflect_cli and prints the result.
// Only `drain` processes jobs; `enqueue` writes a record and leaves it to the workers' owner.
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

#include "cli/command.h"
#include "cli/reflect_cli.h"
#include "mend/app/lesson_admin.h"
#include "mend/app/lessons.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"
#include "mend/lessonq/lesson_queue.h"

namespace mend::cli {
namespace {

using reflect_cli::Surface;

struct EnqueueArgs {
  std::string task;
  std::string trigger;
  std::string attempt;
  std::string outcome;
};

std::string JoinWords(const std::vector<std::string>& words) {
  std::string text;
  for (const std::string& word : words) text += (text.empty() ? "" : " ") + word;
  return text;
}

Status Enqueue(CliContext& ctx, const EnqueueArgs& args) {
  if (Trim(args.task).empty()) return UsageError("the task is empty");
  if (Status trigger = app::CheckEnqueueTrigger(args.trigger); !trigger.ok()) {
    return UsageError(trigger);
  }
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  lessonq::LessonRequest request{args.task, args.attempt, args.outcome, args.trigger};
  MEND_ASSIGN_OR_RETURN(lessonq::EnqueueResult result, app::EnqueueLesson(*runtime, request));
  if (ctx.json) {
    ctx.out << DumpJson({{"id", result.id}, {"created", result.created}}) << "\n";
  } else if (result.created) {
    ctx.out << "enqueued lesson job " << result.id << "\n";
  } else {
    ctx.out << "lesson job " << result.id << " is already pending\n";
  }
  return OkStatus();
}

// `reflect drain` owns the workers only for its own duration.
Status DrainAndStop(CliContext& ctx) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  // A provider that cannot be built would fail every job permanently and fill the dead letter
  // queue, so it is reported before any job is touched.
  MEND_RETURN_IF_ERROR(
      app::PrepareProvider(*runtime, runtime->config.GetString("reflexion.model")));
  const Status drained = reflect_cli::Drain(ctx, *runtime);
  const Status stopped = app::StopLessonWorkers(
      *runtime, runtime->config.GetDuration("reflexion.queue.drain_timeout"));
  MEND_RETURN_IF_ERROR(drained);
  return stopped;
}

Status Migrate(CliContext& ctx) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx));
  Result<lessonq::MigrateReport> report = app::MigrateLessonsToPostgres(*runtime);
  if (report.status().code() == StatusCode::kFailedPrecondition) {
    return UsageError(report.status());
  }
  MEND_RETURN_IF_ERROR(report.status());
  if (ctx.json) {
    ctx.out << DumpJson(app::MigrateReportJson(*report)) << "\n";
    return OkStatus();
  }
  ctx.out << "moved " << report->moved << " pending lesson jobs and " << report->dead_letters
          << " dead letters into PostgreSQL (" << report->already_present
          << " were already there)\n";
  for (const std::string& path : report->corrupt) {
    ctx.out << "left in place, failed its checks: " << path << "\n";
  }
  return OkStatus();
}

void AddAddAndEnqueue(CLI::App& reflect, CliContext& ctx) {
  auto words = std::make_shared<std::vector<std::string>>();
  CLI::App* add = reflect.add_subcommand("add", "store a lesson you state yourself (no model)");
  add->add_option("TEXT", *words, "the lesson; several words are joined by spaces")->required();
  add->callback([&ctx, words] {
    ctx.action = WithRuntime(ctx, [&ctx, words](app::Runtime& runtime) {
      return reflect_cli::AddLesson(ctx, runtime, JoinWords(*words));
    });
  });

  auto args = std::make_shared<EnqueueArgs>();
  CLI::App* enqueue = reflect.add_subcommand(
      "enqueue", "write a lesson job for the workers' owner to process (never processes it)");
  enqueue->add_option("--task", args->task, "the task the agent was given")->required();
  enqueue->add_option("--trigger", args->trigger, "error, hallucination or low_quality")
      ->required()
      ->type_name("error|hallucination|low_quality");
  enqueue->add_option("--attempt", args->attempt, "what the agent did");
  enqueue->add_option("--outcome", args->outcome, "how it ended (why to reflect)");
  enqueue->callback([&ctx, args] { ctx.action = [&ctx, args] { return Enqueue(ctx, *args); }; });
}

void AddListings(CLI::App& reflect, CliContext& ctx) {
  CLI::App* list = reflect.add_subcommand("list", "pending lesson jobs and dead letters");
  list->callback([&ctx] {
    ctx.action = WithRuntime(ctx, [&ctx](app::Runtime& runtime) {
      return reflect_cli::PrintJobs(ctx, runtime, reflect_cli::Listing::kPendingAndDeadLetters);
    });
  });
  CLI::App* failed = reflect.add_subcommand("failed", "dead letters only, with their last error");
  failed->callback([&ctx] {
    ctx.action = WithRuntime(ctx, [&ctx](app::Runtime& runtime) {
      return reflect_cli::PrintJobs(ctx, runtime, reflect_cli::Listing::kDeadLettersOnly);
    });
  });
}

void AddDeadLetterActions(CLI::App& reflect, CliContext& ctx) {
  auto id = std::make_shared<std::string>();
  CLI::App* retry =
      reflect.add_subcommand("retry", "move a dead letter back to the queue, attempts reset");
  retry->add_option("ID", *id, "the job id (16 hex characters)")->required();
  retry->callback([&ctx, id] {
    ctx.action = WithRuntime(ctx, [&ctx, id](app::Runtime& runtime) {
      return reflect_cli::RetryJob(ctx, runtime, *id);
    });
  });
  CLI::App* purge = reflect.add_subcommand("purge", "delete a dead letter for good");
  purge->add_option("ID", *id, "the job id (16 hex characters)")->required();
  purge->callback([&ctx, id] {
    ctx.action = WithRuntime(ctx, [&ctx, id](app::Runtime& runtime) {
      return reflect_cli::PurgeJob(ctx, runtime, *id);
    });
  });
  CLI::App* drain = reflect.add_subcommand(
      "drain",
      "process every pending job now (needs the model; fails while another mend "
      "process owns the workers)");
  AddProviderFlags(*drain, ctx);
  drain->callback([&ctx] { ctx.action = [&ctx] { return DrainAndStop(ctx); }; });
  CLI::App* migrate = reflect.add_subcommand(
      "migrate",
      "move the WAL queue's pending jobs and dead letters into the PostgreSQL queue "
      "(reflexion.queue.backend = postgres); safe to run again");
  migrate->callback([&ctx] { ctx.action = [&ctx] { return Migrate(ctx); }; });
}

}  // namespace

void AddReflectCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* reflect = app.add_subcommand("reflect",
                                         "the lesson queue: status, add, enqueue, list, failed, "
                                         "retry, purge, drain, migrate");
  reflect->group("Commands");
  reflect->require_subcommand(0, 1);  // a word of a task or query is never read as a command
  reflect->footer(
      "Without a subcommand: queue depth, pending jobs and dead letter queue size. Pending jobs "
      "live in <reflexion.queue.base_dir>/wal, dead letters in .../dlq; with "
      "reflexion.queue.backend = postgres, in the database of store.url.");
  AddAddAndEnqueue(*reflect, ctx);
  AddListings(*reflect, ctx);
  AddDeadLetterActions(*reflect, ctx);
  reflect->callback([&ctx, reflect] {
    if (!reflect->get_subcommands().empty()) return;
    ctx.action = WithRuntime(ctx, [&ctx](app::Runtime& runtime) {
      return reflect_cli::PrintStatus(ctx, runtime, Surface::kCommandLine);
    });
  });
}

}  // namespace mend::cli
