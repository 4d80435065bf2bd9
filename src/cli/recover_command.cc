// `mend recover`: the recovery loop (docs/heal.md). `--once` makes one pass and
// reports it; otherwise it runs every interval until SIGINT or SIGTERM.
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "mend/app/daemon.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"

namespace mend::cli {
namespace {

struct RecoverFlags {
  bool once = false;
  bool override_recorded = false;
  std::string replica;
};

nlohmann::json ReportJson(const heal::TickReport& r) {
  nlohmann::json outages = nlohmann::json::array();
  for (const heal::EndpointOutage& o : r.outages) {
    outages.push_back({{"provider", o.endpoint.provider},
                       {"base_url", o.endpoint.base_url},
                       {"since", FormatRfc3339(o.since)},
                       {"next_probe_at", FormatRfc3339(o.next_probe_at)}});
  }
  return {{"resumed", r.resumed},
          {"completed", r.completed},
          {"failed", r.failed},
          {"quarantined", r.quarantined},
          {"interrupted", r.interrupted},
          {"outage", r.outage},
          {"outages", std::move(outages)},
          {"skipped",
           {{"backoff", r.skipped.backoff},
            {"waiting", r.skipped.waiting},
            {"non_retryable", r.skipped.non_retryable},
            {"leased", r.skipped.leased},
            {"deferred", r.skipped.deferred},
            {"outage", r.skipped.outage},
            {"error", r.skipped.error},
            {"healing", r.skipped.healing},
            {"unconfigured", r.skipped.unconfigured}}}};
}

void PrintReport(const heal::TickReport& r, std::ostream& out) {
  auto list = [&](const char* what, const std::vector<std::string>& ids) {
    out << what << ": " << ids.size();
    for (const std::string& id : ids) out << " " << id;
    out << "\n";
  };
  list("resumed", r.resumed);
  // Of those, the runs no live process held: their process died or stopped at a checkpoint.
  list("interrupted", r.interrupted);
  list("completed", r.completed);
  list("failed", r.failed);
  list("quarantined", r.quarantined);
  out << "skipped: " << r.skipped.backoff << " in backoff, " << r.skipped.waiting
      << " waiting for a person, " << r.skipped.non_retryable << " not retryable, "
      << r.skipped.leased << " held by another process\n";
  if (r.skipped.deferred > 0) {
    out << "left for the next pass: " << r.skipped.deferred
        << " due runs beyond recover.max_runs_per_pass\n";
  }
  if (r.skipped.outage > 0) {
    out << "waiting for their endpoint to come back: " << r.skipped.outage << " due runs\n";
  }
  if (r.skipped.healing > 0) out << "waiting for their .heal fork: " << r.skipped.healing << "\n";
  if (r.skipped.unconfigured > 0) {
    out << "left to a process where their provider is configured (see their last error): "
        << r.skipped.unconfigured << "\n";
  }
  if (r.skipped.error > 0) {
    out << "not handled because of an error (logged above): " << r.skipped.error << "\n";
  }
  for (const heal::EndpointOutage& o : r.outages) {
    out << "provider outage at " << heal::DescribeEndpoint(o.endpoint) << " since "
        << FormatRfc3339Seconds(o.since) << ": its runs wait; next probe at "
        << FormatRfc3339Seconds(o.next_probe_at) << "\n";
  }
}

Status Recover(CliContext& ctx, const RecoverFlags& flags) {
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime,
                        OpenCliRuntime(ctx, flags.replica.empty() ? "mend" : flags.replica));
  SetProviderFlagScope(*runtime, flags.override_recorded);
  std::ostream& log = ctx.err;
  app::DaemonOptions daemon_options;
  daemon_options.log = &log;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Daemon> daemon,
                        app::Daemon::Create(*runtime, daemon_options));
  if (flags.once) {
    MEND_ASSIGN_OR_RETURN(heal::TickReport report, daemon->Tick());
    if (ctx.json) {
      ctx.out << DumpJson(ReportJson(report)) << "\n";
    } else {
      PrintReport(report, ctx.out);
    }
    return OkStatus();
  }
  // Before the threads Start begins, so they leave the signals to the wait below.
  app::ProcessStopSignal signals;
  log << "recovering every "
      << FormatDuration(std::chrono::duration_cast<std::chrono::milliseconds>(
             daemon->recovery_options().interval))
      << " as " << runtime->holder.id << " (Ctrl-C stops)\n";
  daemon->Start();
  signals.Wait();
  daemon->Stop();
  log << "stopped\n";
  return OkStatus();
}

}  // namespace

void AddRecoverCommand(CLI::App& app, CliContext& ctx) {
  auto flags = std::make_shared<RecoverFlags>();
  CLI::App* recover = app.add_subcommand(
      "recover", "resume interrupted and failed runs with backoff, quarantine and outage pause");
  recover->group("Commands");
  recover->add_flag("--once", flags->once, "make one pass, report it and exit");
  recover->add_option("--replica", flags->replica,
                      "this replica's name in leases (default mend-<pid>@<host>)");
  AddConfigFlags(*recover, ctx, "recover.");
  AddProviderFlags(*recover, ctx);
  AddOverrideRecordedFlag(*recover, &flags->override_recorded);
  recover->footer(
      "Each run resumes on the provider, base URL and model it recorded; the provider flags "
      "switch it only with --override-recorded. Runs waiting for a person and runs whose error "
      "is not retryable (e.g. MEND_RUN_NO_PROGRESS) are left alone; an endpoint in an outage "
      "pauses only its own runs. docs/heal.md explains every rule.");
  recover->callback([&ctx, flags] { ctx.action = [&ctx, flags] { return Recover(ctx, *flags); }; });
}

}  // namespace mend::cli
