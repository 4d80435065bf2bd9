// `mend mcp list AGENT_DIR` and `mend mcp serve` (docs/mcp.md): the tools an agent folder's MCP
// servers give it, and mend's memory and lessons as an MCP server.
#include <CLI/CLI.hpp>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>

#include "cli/command.h"
#include "mend/agent/agent_spec.h"
#include "mend/app/daemon.h"
#include "mend/app/mcp_serve.h"
#include "mend/app/mcp_tools.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/server/mcp_http.h"
#include "mend/server/server.h"

#ifndef MEND_VERSION
#error "MEND_VERSION must be defined by the build"
#endif

namespace mend::cli {
namespace {

using json = nlohmann::json;

std::string Flags(const app::McpToolView& view) {
  std::string flags;
  const auto add = [&](const char* flag) {
    flags += (flags.empty() ? "" : ", ") + std::string(flag);
  };
  if (view.read_only) add("read-only: runs in shadow mode");
  if (view.requires_approval) add("needs approval");
  if (!view.schema_checked) add("schema passed through unchecked");
  return flags.empty() ? "" : " [" + flags + "]";
}

Status List(CliContext& ctx, const std::string& dir) {
  const std::string agent_dir = AbsoluteAgentDir(dir);
  MEND_ASSIGN_OR_RETURN(agent::AgentSpec spec, agent::LoadAgentFolder(ctx.fs, agent_dir));
  app::McpToolsOptions options;
  options.workspace = spec.workspace.empty() ? AbsoluteAgentDir(".") : spec.workspace;
  const std::map<std::string, std::string>& env = ctx.env;
  options.variables = [&env](const std::string& name) -> std::optional<std::string> {
    auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
  Result<app::McpTools> started = app::StartMcpTools(spec, options);
  if (!started.ok()) {
    // A ${VAR} that is not set or a tool the allow-list names that the server lacks is the
    // folder's to fix.
    return started.status().code() == StatusCode::kInvalidArgument ? UsageError(started.status())
                                                                   : started.status();
  }
  const app::McpTools& mcp = *started;
  if (ctx.json) {
    json servers = json::array();
    for (const app::McpTools::Server& server : mcp.servers) {
      json tools = json::array();
      for (const app::McpToolView& view : mcp.views) {
        if (view.server != server.name) continue;
        tools.push_back({{"name", view.name},
                         {"tool", view.info.name},
                         {"title", view.info.title},
                         {"description", view.info.description},
                         {"read_only", view.read_only},
                         {"requires_approval", view.requires_approval},
                         {"schema_checked", view.schema_checked},
                         {"annotations", view.info.annotations},
                         {"input_schema", view.info.input_schema},
                         {"output_schema", view.info.output_schema}});
      }
      servers.push_back({{"name", server.name},
                         {"protocol_version", server.protocol_version},
                         {"server_info", server.server_info},
                         {"tools", std::move(tools)}});
    }
    ctx.out << DumpJson({{"agent", spec.name}, {"servers", std::move(servers)}}) << "\n";
    return OkStatus();
  }
  if (mcp.servers.empty()) {
    ctx.out << "agent " << spec.name << " lists no MCP servers ([[mcp_servers]] in agent.toml)\n";
    return OkStatus();
  }
  for (const app::McpTools::Server& server : mcp.servers) {
    const std::string info_name = server.server_info.value("name", std::string());
    const std::string info_version = server.server_info.value("version", std::string());
    ctx.out << "server " << server.name;
    if (!info_name.empty()) ctx.out << " (" << info_name << " " << info_version << ")";
    ctx.out << ", protocol " << server.protocol_version << "\n";
    for (const app::McpToolView& view : mcp.views) {
      if (view.server != server.name) continue;
      ctx.out << "  " << view.name << Flags(view) << "\n";
      if (!view.info.description.empty()) ctx.out << "    " << view.info.description << "\n";
      if (!view.info.annotations.is_null()) {
        ctx.out << "    annotations: " << DumpJson(view.info.annotations) << "\n";
      }
      ctx.out << "    input: " << DumpJson(view.info.input_schema) << "\n";
    }
  }
  return OkStatus();
}

// `mend mcp serve` over stdio: one JSON-RPC message per line on stdin, each answer a line on
// stdout (nothing else is written there), the log on stderr. The lesson workers run meanwhile, so
// a reported failure becomes a lesson; at the end of stdin the queue drains and the command exits.
Status ServeStdio(CliContext& ctx) {
  if (ctx.input.in == nullptr) return UsageError("mend mcp serve reads MCP messages on stdin");
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx, "mend-mcp"));
  app::DaemonOptions daemon_options;
  daemon_options.log = &ctx.err;
  daemon_options.lesson_drain = app::LessonDrain::kDrain;
  daemon_options.recovery = false;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Daemon> daemon,
                        app::Daemon::Create(*runtime, daemon_options));
  daemon->Start();
  std::unique_ptr<mcp::McpServer> server = app::MakeMendMcpServer(*runtime, MEND_VERSION);
  ctx.err << "mend mcp serve: MCP over stdio on " << runtime->home << "\n" << std::flush;
  std::string line;
  while (std::getline(*ctx.input.in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    std::optional<std::string> answer = server->Handle(line);
    if (answer.has_value()) ctx.out << *answer << "\n" << std::flush;
  }
  daemon->RequestStop();
  daemon->Stop();
  return OkStatus();
}

// `mend mcp serve --http ADDR`: the same server over Streamable HTTP at http://ADDR/mcp, with
// serve.token's rule, until SIGINT or SIGTERM.
Status ServeHttp(CliContext& ctx, const std::string& listen) {
  app::ProcessStopSignal signals;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Runtime> runtime, OpenCliRuntime(ctx, "mend-mcp"));
  server::ServerOptions options;
  Status parsed = server::ParseListen(listen, options);
  if (!parsed.ok()) return UsageError(parsed);
  options.token = runtime->config.GetString("serve.token");
  options.max_body_bytes = runtime->config.GetInt("serve.max_body_bytes");
  options.threads = static_cast<int>(runtime->config.GetInt("serve.threads"));
  options.max_connections = runtime->config.GetInt("serve.max_connections");
  options.max_header_bytes = runtime->config.GetInt("serve.max_header_bytes");
  options.header_timeout = runtime->config.GetDuration("serve.header_timeout");
  options.idle_timeout = runtime->config.GetDuration("serve.idle_timeout");
  options.io_timeout = runtime->config.GetDuration("serve.io_timeout");
  std::unique_ptr<mcp::McpServer> mcp = app::MakeMendMcpServer(*runtime, MEND_VERSION);
  Result<std::unique_ptr<server::McpHttpServer>> created =
      server::McpHttpServer::Create(*mcp, options);
  if (!created.ok()) return UsageError(created.status());
  std::unique_ptr<server::McpHttpServer> http = *std::move(created);
  app::DaemonOptions daemon_options;
  daemon_options.log = &ctx.err;
  daemon_options.lesson_drain = app::LessonDrain::kDrain;
  daemon_options.recovery = false;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<app::Daemon> daemon,
                        app::Daemon::Create(*runtime, daemon_options));
  MEND_RETURN_IF_ERROR(http->Start());
  daemon->Start();
  const std::string host =
      options.host.find(':') != std::string::npos ? "[" + options.host + "]" : options.host;
  const std::string url = "http://" + host + ":" + std::to_string(http->port()) + "/mcp";
  if (ctx.json) {
    ctx.out << DumpJson({{"url", url}}) << std::endl;
  } else {
    ctx.out << "listening on " << url << std::endl;
  }
  signals.Wait();
  ctx.err << "stopping\n" << std::flush;
  http->Stop();
  daemon->RequestStop();
  daemon->Stop();
  return OkStatus();
}

}  // namespace

void AddMcpCommand(CLI::App& app, CliContext& ctx) {
  CLI::App* mcp = app.add_subcommand(
      "mcp", "MCP servers' tools in agent folders, and mend's memory as an MCP server");
  mcp->group("Commands");
  mcp->require_subcommand(1);
  mcp->footer("docs/mcp.md describes both directions.");

  auto dir = std::make_shared<std::string>();
  CLI::App* list = mcp->add_subcommand(
      "list", "Start an agent folder's MCP servers and print their tools, annotations and schemas");
  list->add_option("AGENT_DIR", *dir, "the agent folder")->required();
  list->footer(
      "Each tool is shown by the name the model sees (<server>__<tool>), with whether it runs in "
      "shadow mode and needs approval. The servers are shut down when the listing is printed.");
  list->callback([&ctx, dir] { ctx.action = [&ctx, dir] { return List(ctx, *dir); }; });

  CLI::App* serve =
      mcp->add_subcommand("serve", "mend's memory and lessons as an MCP server (stdio or HTTP)");
  auto http_listen = std::make_shared<std::string>();
  serve->add_option("--http", *http_listen,
                    "serve Streamable HTTP at http://ADDR:PORT/mcp instead of stdio "
                    "(e.g. 127.0.0.1:7072; an address that is not loopback needs serve.token)");
  serve->footer(
      "Tools: recall, search, add_fact, add_lesson, report_failure, lesson_feedback, runs, run; "
      "resources: LESSONS.md and each run's transcript. They act on the home --home names. In an "
      "MCP client's configuration: command \"mend\", args [\"mcp\", \"serve\"]. docs/mcp.md.");
  serve->callback([&ctx, http_listen] {
    ctx.action = [&ctx, http_listen] {
      return http_listen->empty() ? ServeStdio(ctx) : ServeHttp(ctx, *http_listen);
    };
  });
}

}  // namespace mend::cli
