// `mend serve`: the long-lived process of a deployment (docs/serve.md): the HTTP
// API, /metrics, the OTLP receiver and the web UI, with the recovery loop, the lesson workers and
// retention in the same process. SIGINT or SIGTERM stops it: no new requests, runs in flight stop
// at their next checkpoint, lessons drain within reflexion.queue.drain_timeout, exit 0.
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "mend/app/daemon.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/server/server.h"

namespace mend::cli {
namespace {

Result<server::ServerOptions> ServerOptionsOf(const app::Runtime& runtime) {
  const Config& config = runtime.config;
  server::ServerOptions options;
  Status listen = server::ParseListen(config.GetString("serve.listen"), options);
  if (!listen.ok()) return UsageError(listen);
  options.token = config.GetString("serve.token");
  options.agents_dir = config.GetString("serve.agents_dir");
  if (!options.agents_dir.empty()) options.agents_dir = AbsoluteAgentDir(options.agents_dir);
  options.max_body_bytes = config.GetInt("serve.max_body_bytes");
  options.threads = static_cast<int>(config.GetInt("serve.threads"));
  options.drain_timeout = config.GetDuration("serve.drain_timeout");
  options.max_connections = config.GetInt("serve.max_connections");
  options.max_header_bytes = config.GetInt("serve.max_header_bytes");
  options.header_timeout = config.GetDuration("serve.header_timeout");
  options.idle_timeout = config.GetDuration("serve.idle_timeout");
  options.io_timeout = config.GetDuration("serve.io_timeout");
  options.tls_cert = config.GetString("serve.tls_cert");
  options.tls_key = config.GetString("serve.tls_key");
  return options;
}

Status Serve(CliContext& ctx, bool override_recorded) {
  // Before any thread starts, so every thread leaves the signals to the wait below.
  app::ProcessStopSignal signals;

  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx, "mend-serve"));
  // The provider flags are defaults for the runs the API starts; the runs it continues (through
  // the API or the recovery loop) keep their own model unless --override-recorded.
  SetProviderFlagScope(*runtime, override_recorded);
  MEND_ASSIGN_OR_RETURN(server::ServerOptions options, ServerOptionsOf(*runtime));
  Result<std::unique_ptr<server::Server>> created = server::Server::Create(*runtime, options);
  if (!created.ok()) return UsageError(created.status());
  std::unique_ptr<server::Server> http = *std::move(created);

  std::ostream& log = ctx.err;
  app::DaemonOptions daemon_options;
  daemon_options.log = &log;
  daemon_options.lesson_drain = app::LessonDrain::kDrain;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Daemon> daemon,
                        app::Daemon::Create(*runtime, daemon_options));

  MEND_RETURN_IF_ERROR(http->Start());
  daemon->Start();
  const std::string host =
      options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  const bool tls = !options.tls_cert.empty();
  const std::string url =
      (tls ? "https://" : "http://") + host + ":" + std::to_string(http->port()) + "/";
  if (!tls && !server::IsLoopbackHost(options.host)) {
    log << "warning: serving " << options.host
        << " (not loopback) without TLS: the token and every request and answer cross the "
           "network in clear text; set serve.tls_cert and serve.tls_key\n";
  }
  // The address goes to stdout (scripts read the port from it when --listen asked for port 0).
  if (ctx.json) {
    ctx.out << DumpJson({{"url", url}, {"holder", runtime->holder.id}}) << std::endl;
  } else {
    ctx.out << "listening on " << url << std::endl;
  }
  log << "serving " << url << " as " << runtime->holder.id << " (Ctrl-C stops)\n" << std::flush;

  signals.Wait();
  log << "stopping: no new requests; runs stop at their next checkpoint\n" << std::flush;
  daemon->RequestStop();
  const int in_flight = http->Stop();
  if (in_flight > 0) {
    log << in_flight << " run(s) still in flight after serve.drain_timeout; they resume from "
        << "their last checkpoint\n";
  }
  daemon->Stop();
  log << "stopped\n";
  return OkStatus();
}

}  // namespace

void AddServeCommand(CLI::App& app, CliContext& ctx) {
  auto override_recorded = std::make_shared<bool>(false);
  CLI::App* serve = app.add_subcommand(
      "serve", "HTTP API, /metrics, OTLP receiver, web UI, recovery loop and lesson workers");
  serve->group("Commands");
  AddConfigFlags(*serve, ctx, "serve.");
  AddConfigFlags(*serve, ctx, "recover.");
  AddProviderFlags(*serve, ctx);
  AddOverrideRecordedFlag(*serve, override_recorded.get());
  serve->footer(
      "Binds 127.0.0.1:7070 unless --listen says otherwise; any address that is not loopback needs "
      "serve.token (MEND_SERVE_TOKEN), which every API request then carries as a bearer token. "
      "The provider flags are defaults for new runs: a run it resumes keeps the model it recorded "
      "unless --override-recorded. docs/serve.md and docs/http_api.md describe the API.");
  serve->callback([&ctx, override_recorded] {
    ctx.action = [&ctx, override_recorded] { return Serve(ctx, *override_recorded); };
  });
}

}  // namespace mend::cli
