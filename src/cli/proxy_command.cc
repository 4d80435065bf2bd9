// `mend proxy` (docs/proxy.md): an OpenAI- and Anthropic-compatible endpoint in front of the
// configured upstream that gives any agent mend's memory, lessons and healing, with the lesson
// workers, the embedding backfill and retention in the same process. SIGINT or SIGTERM stops it:
// no new connections, lessons drain within reflexion.queue.drain_timeout, exit 0.
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "mend/app/daemon.h"
#include "mend/app/proxy.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/proxy/proxy.h"
#include "mend/server/server.h"

namespace mend::cli {
namespace {

// Each open stream holds two descriptors (the client's and the upstream's): take what the hard
// limit allows, as servers do, instead of the soft 1,024 many systems start with.
void RaiseOpenFileLimit() {
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur >= files.rlim_max) return;
  files.rlim_cur = files.rlim_max;
  (void)setrlimit(RLIMIT_NOFILE, &files);
}

Status Proxy(CliContext& ctx) {
  // Before any thread starts, so every thread leaves the signals to the wait below.
  app::ProcessStopSignal signals;
  RaiseOpenFileLimit();

  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx, "mend-proxy"));
  const Config& config = runtime->config;
  server::ServerOptions address;
  Status listen = server::ParseListen(config.GetString("proxy.listen"), address);
  if (!listen.ok()) return UsageError(listen);
  Result<std::unique_ptr<app::Proxy>> opened = app::OpenProxy(*runtime);
  if (!opened.ok()) {
    return opened.status().code() == StatusCode::kInvalidArgument ? UsageError(opened.status())
                                                                  : opened.status();
  }
  std::unique_ptr<app::Proxy> parts = *std::move(opened);
  proxy::ProxyService& service = *parts->service;
  if (!server::IsLoopbackHost(address.host) && service.options().tokens.empty()) {
    return UsageError("listening on " + address.host +
                      " (not loopback) requires proxy.token or proxy.tokens (MEND_PROXY_TOKEN)");
  }

  std::ostream& log = ctx.err;
  app::DaemonOptions daemon_options;
  daemon_options.log = &log;
  daemon_options.lesson_drain = app::LessonDrain::kDrain;
  daemon_options.recovery = false;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Daemon> daemon,
                        app::Daemon::Create(*runtime, daemon_options));

  proxy::ListenerOptions listener_options;
  listener_options.host = address.host;
  listener_options.port = address.port;
  listener_options.max_connections = static_cast<size_t>(config.GetInt("proxy.max_connections"));
  listener_options.max_header_bytes = static_cast<size_t>(config.GetInt("proxy.max_header_bytes"));
  listener_options.header_timeout = config.GetDuration("proxy.header_timeout");
  listener_options.idle_timeout = config.GetDuration("proxy.idle_timeout");
  listener_options.io_timeout = config.GetDuration("proxy.io_timeout");
  listener_options.tls_cert = config.GetString("proxy.tls_cert");
  listener_options.tls_key = config.GetString("proxy.tls_key");
  Result<std::unique_ptr<proxy::ProxyListener>> started =
      proxy::ProxyListener::Start(service, listener_options);
  if (!started.ok()) {
    return started.status().code() == StatusCode::kInvalidArgument ? UsageError(started.status())
                                                                   : started.status();
  }
  std::unique_ptr<proxy::ProxyListener> listener = *std::move(started);
  daemon->Start();
  service.StartSweeper();
  const std::string host =
      address.host.find(':') != std::string::npos ? "[" + address.host + "]" : address.host;
  const bool tls = !listener_options.tls_cert.empty();
  const std::string url =
      (tls ? "https://" : "http://") + host + ":" + std::to_string(listener->port()) + "/";
  if (!tls && !server::IsLoopbackHost(address.host)) {
    log << "warning: proxying on " << address.host
        << " (not loopback) without TLS: client tokens, prompts and answers cross the network in "
           "clear text; set proxy.tls_cert and proxy.tls_key\n";
  }
  // The address goes to stdout (scripts read the port from it when --listen asked for port 0).
  if (ctx.json) {
    ctx.out << DumpJson({{"url", url},
                         {"base_url", url + "v1"},
                         {"upstream", service.options().upstream}})
            << std::endl;
  } else {
    ctx.out << "listening on " << url << std::endl;
  }
  log << "proxying " << url << "v1 to " << service.options().upstream << " ("
      << proxy::UpstreamKindName(service.options().upstream_kind) << "; Ctrl-C stops)\n"
      << std::flush;

  signals.Wait();
  log << "stopping: no new connections\n" << std::flush;
  daemon->RequestStop();
  listener->Stop();
  service.StopSweeper();
  daemon->Stop();
  log << "stopped\n";
  return OkStatus();
}

}  // namespace

void AddProxyCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* command = app.add_subcommand(
      "proxy", "OpenAI/Anthropic-compatible endpoint that adds memory, lessons and healing");
  command->group("Commands");
  AddConfigFlags(*command, ctx, "proxy.");
  command->footer(
      "Point an agent's OPENAI_BASE_URL (or ANTHROPIC_BASE_URL) at http://127.0.0.1:7071/v1. "
      "Binds 127.0.0.1:7071 unless --listen says otherwise; any address that is not loopback "
      "needs proxy.token or proxy.tokens. The upstream defaults to provider.base_url (plus /v1) "
      "or the provider's public endpoint, with provider.api_key. docs/proxy.md describes it.");
  command->callback([&ctx] { ctx.action = [&ctx] { return Proxy(ctx); }; });
}

}  // namespace mend::cli
