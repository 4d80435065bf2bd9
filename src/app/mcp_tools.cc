#include "mend/app/mcp_tools.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <mutex>

#include "mend/agent/json_schema.h"
#include "mend/base/json.h"
#include "mend/obs/events.h"
#include "mend/obs/trace.h"

#ifndef MEND_VERSION
#error "MEND_VERSION must be defined by the build"
#endif

namespace mend::app {
namespace {

using json = nlohmann::json;

// Expands every ${VAR} of `value` (agent.toml checked the syntax).
Result<std::string> Expand(const std::string& value, const VariableLookup& lookup,
                           const std::string& where) {
  std::string out;
  size_t pos = 0;
  for (size_t start = value.find("${"); start != std::string::npos; start = value.find("${", pos)) {
    const size_t end = value.find('}', start);
    if (end == std::string::npos) break;
    out += value.substr(pos, start - pos);
    const std::string name = value.substr(start + 2, end - start - 2);
    std::optional<std::string> found = lookup(name);
    if (!found.has_value()) {
      return InvalidArgumentError(where + " uses ${" + name + "}, which is not set");
    }
    out += *found;
    pos = end + 1;
  }
  return out + value.substr(pos);
}

void Publish(obs::EventBus* events, obs::Event event) {
  if (events != nullptr) events->Publish(std::move(event));
}

// One server for the life of an Agent: started and listed at once, restarted once if it dies.
class McpSession {
 public:
  // `make_transport` makes a new transport for each start (the first and a restart).
  using TransportFactory = std::function<Result<std::unique_ptr<mcp::Transport>>()>;
  McpSession(agent::McpServerSpec spec, TransportFactory make_transport, mcp::ClientOptions client,
             obs::EventBus* events)
      : spec_(std::move(spec)),
        make_transport_(std::move(make_transport)),
        client_options_(std::move(client)),
        events_(events) {}
  ~McpSession() {
    std::shared_ptr<mcp::Client> client;
    {
      std::lock_guard<std::mutex> lock(mu_);
      client = std::move(client_);
    }
    if (client != nullptr) client->Close();
  }

  const agent::McpServerSpec& spec() const { return spec_; }

  // Connects and lists the tools.
  Status Start() {
    MEND_ASSIGN_OR_RETURN(std::shared_ptr<mcp::Client> client, Connect());
    Result<std::vector<mcp::ToolInfo>> tools = client->ListTools();
    if (!tools.ok()) {
      client->Close();
      return tools.status();
    }
    std::lock_guard<std::mutex> lock(mu_);
    client_ = std::move(client);
    tools_ = std::move(tools).value();
    return OkStatus();
  }

  std::vector<mcp::ToolInfo> tools() const {
    std::lock_guard<std::mutex> lock(mu_);
    return tools_;
  }
  std::string protocol_version() const {
    std::lock_guard<std::mutex> lock(mu_);
    return client_ != nullptr ? client_->protocol_version() : "";
  }
  json server_info() const {
    std::lock_guard<std::mutex> lock(mu_);
    return client_ != nullptr ? client_->server_info() : json::object();
  }

  // Calls `tool`. A server that died since the last call is restarted first, once in its life;
  // a tool that is gone or changed after the restart is an error of this call.
  Result<mcp::CallResult> Call(const mcp::ToolInfo& tool, const json& arguments,
                               const std::atomic<bool>* stop, std::string* session_id) {
    std::shared_ptr<mcp::Client> client;
    {
      std::lock_guard<std::mutex> lock(mu_);
      client = client_;
    }
    if (client == nullptr || !client->alive()) {
      MEND_ASSIGN_OR_RETURN(client, Restart(tool));
    }
    *session_id = client->session_id();
    return client->CallTool(tool.name, arguments, spec_.timeout, stop);
  }

  // Whether the server may still be restarted after dying.
  bool can_restart() const {
    std::lock_guard<std::mutex> lock(mu_);
    return restarts_ == 0;
  }

 private:
  Result<std::shared_ptr<mcp::Client>> Connect() {
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<mcp::Transport> transport, make_transport_());
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<mcp::Client> client,
                          mcp::Client::Connect(std::move(transport), client_options_));
    obs::Event e("mcp.server_started");
    e.AddString("server", spec_.name).AddString("protocol_version", client->protocol_version());
    Publish(events_, std::move(e));
    return std::shared_ptr<mcp::Client>(std::move(client));
  }

  Result<std::shared_ptr<mcp::Client>> Restart(const mcp::ToolInfo& tool) {
    std::unique_lock<std::mutex> lock(mu_);
    if (client_ != nullptr && client_->alive()) return client_;
    if (restarts_ > 0) {
      return UnavailableError("MCP server " + spec_.name +
                              " stopped again after its restart; it is not restarted twice");
    }
    ++restarts_;
    if (client_ != nullptr) {
      obs::Event e("mcp.server_exited");
      e.AddString("server", spec_.name)
          .AddString("error", std::string(client_->broken().message()))
          .AddBool("restarting", true);
      Publish(events_, std::move(e));
      client_->Close();
      client_.reset();
    }
    lock.unlock();
    MEND_ASSIGN_OR_RETURN(std::shared_ptr<mcp::Client> client, Connect());
    MEND_ASSIGN_OR_RETURN(std::vector<mcp::ToolInfo> tools, client->ListTools());
    auto same = std::find_if(tools.begin(), tools.end(),
                             [&](const mcp::ToolInfo& t) { return t.name == tool.name; });
    if (same == tools.end() || same->input_schema != tool.input_schema) {
      client->Close();
      return FailedPreconditionError("MCP server " + spec_.name + " was restarted and its tool " +
                                     tool.name + " is " +
                                     (same == tools.end() ? "gone" : "defined differently"));
    }
    lock.lock();
    client_ = client;
    return client;
  }

  const agent::McpServerSpec spec_;
  const TransportFactory make_transport_;
  const mcp::ClientOptions client_options_;
  obs::EventBus* const events_;
  mutable std::mutex mu_;
  std::shared_ptr<mcp::Client> client_;  // guarded by mu_
  std::vector<mcp::ToolInfo> tools_;     // guarded by mu_
  int restarts_ = 0;                     // guarded by mu_
};

// One tool of a server, as the agent calls it.
class McpTool final : public agent::Tool {
 public:
  McpTool(std::shared_ptr<McpSession> session, mcp::ToolInfo info, agent::ToolSpec spec)
      : session_(std::move(session)), info_(std::move(info)), spec_(std::move(spec)) {}

  const agent::ToolSpec& spec() const override { return spec_; }

  Result<agent::ToolResult> Execute(std::string_view arguments,
                                    const agent::ToolContext& ctx) override {
    const std::string& server = session_->spec().name;
    obs::Span* span = obs::ActiveSpan();
    if (span != nullptr)
      span->SetAttribute("mcp.server", server).SetAttribute("mcp.tool", info_.name);
    Result<json> args = ParseJson(arguments);
    if (!args.ok()) return agent::ToolResult::Error(std::string(args.status().message()));
    std::string session_id;
    Result<mcp::CallResult> call = session_->Call(info_, *args, ctx.stop, &session_id);
    if (span != nullptr && !session_id.empty()) span->SetAttribute("mcp.session.id", session_id);
    if (!call.ok()) {
      const Status& s = call.status();
      // The run is stopping: the server got notifications/cancelled, and the call runs again
      // when the run resumes.
      if (s.code() == StatusCode::kCancelled && ctx.stop != nullptr && ctx.stop->load()) {
        if (span != nullptr) span->SetAttribute("mcp.error", std::string(s.message()));
        agent::ToolResult interrupted = agent::ToolResult::Error(std::string(s.message()));
        interrupted.interrupted = true;
        return interrupted;
      }
      if (span != nullptr) span->SetAttribute("mcp.error", std::string(s.message()));
      std::string text = std::string(s.message());
      if (s.code() == StatusCode::kUnavailable && session_->can_restart()) {
        text += " (the server is started again for the next call)";
      }
      return agent::ToolResult::Error(std::move(text));
    }
    if (span != nullptr && call->is_error) span->SetAttribute("mcp.is_error", true);
    return agent::ToolResult{mcp::RenderToolResult(call->result, session_->spec().max_result_bytes),
                             call->is_error};
  }

 private:
  std::shared_ptr<McpSession> session_;
  const mcp::ToolInfo info_;
  const agent::ToolSpec spec_;
};

bool Listed(const std::vector<std::string>& names, const std::string& name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::string Where(const agent::AgentSpec& spec, const agent::McpServerSpec& server) {
  return spec.dir + "/agent.toml:" + std::to_string(server.line) + ": mcp_servers." + server.name;
}

// How a server's transport is made: stdio with its stderr as events, or Streamable HTTP with its
// headers. Variables are expanded here, once; their values live only in the factory.
Result<McpSession::TransportFactory> TransportFor(const agent::McpServerSpec& server,
                                                  const McpToolsOptions& options,
                                                  const std::string& where) {
  if (!server.url.empty()) {
    mcp::HttpOptions http;
    http.url = server.url;
    for (const auto& [name, value] : server.headers) {
      MEND_ASSIGN_OR_RETURN(std::string expanded,
                            Expand(value, options.variables, where + ".headers." + name));
      http.headers.emplace_back(name, std::move(expanded));
    }
    // A call may take its whole timeout; the client cancels it then, the transport only backs
    // it up.
    http.request_timeout = std::max<std::chrono::milliseconds>(
        http.request_timeout, server.timeout + std::chrono::seconds(30));
    MEND_RETURN_IF_ERROR(mcp::MakeHttpTransport(http).status());  // a bad URL fails the start
    return McpSession::TransportFactory([http]() -> Result<std::unique_ptr<mcp::Transport>> {
      return mcp::MakeHttpTransport(http);
    });
  }
  mcp::StdioOptions stdio;
  stdio.argv = server.command;
  stdio.cwd = server.cwd.empty() ? options.workspace : server.cwd;
  if (stdio.cwd.empty()) stdio.cwd = ".";
  for (const auto& [name, value] : server.env) {
    MEND_ASSIGN_OR_RETURN(std::string expanded,
                          Expand(value, options.variables, where + ".env." + name));
    stdio.extra_env.push_back(name + "=" + expanded);
  }
  const std::string name = server.name;
  obs::EventBus* events = options.events;
  stdio.on_stderr = [name, events](const std::string& line) {
    obs::Event e("mcp.server_log");
    e.AddString("server", name).AddString("line", line);
    Publish(events, std::move(e));
  };
  return McpSession::TransportFactory([stdio]() -> Result<std::unique_ptr<mcp::Transport>> {
    return mcp::MakeStdioTransport(stdio);
  });
}

Result<std::shared_ptr<McpSession>> StartSession(const agent::AgentSpec& spec,
                                                 const agent::McpServerSpec& server,
                                                 const McpToolsOptions& options) {
  const std::string where = Where(spec, server);
  Result<McpSession::TransportFactory> factory = TransportFor(server, options, where);
  if (!factory.ok()) {
    const Status& s = factory.status();
    // Expand's errors already name the key; the transport's get the server's place.
    if (std::string(s.message()).rfind(where, 0) == 0) return s;
    return Status(s.code(), where + ": " + std::string(s.message()));
  }
  mcp::ClientOptions client;
  client.name = server.name;
  client.client_version = options.client_version.empty() ? MEND_VERSION : options.client_version;
  auto session =
      std::make_shared<McpSession>(server, *std::move(factory), std::move(client), options.events);
  Status started = session->Start();
  if (!started.ok()) return Status(started.code(), where + ": " + std::string(started.message()));
  return session;
}

}  // namespace

VariableLookup ProcessVariables() {
  return [](const std::string& name) -> std::optional<std::string> {
    const char* value = std::getenv(name.c_str());
    if (value == nullptr) return std::nullopt;
    return std::string(value);
  };
}

std::optional<std::string> McpToolName(const std::string& server, const std::string& tool) {
  std::string name = server + "__" + tool;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_' && c != '-') c = '_';
  }
  if (name.size() > 64) return std::nullopt;
  return name;
}

Result<McpTools> StartMcpTools(const agent::AgentSpec& spec, McpToolsOptions options) {
  McpTools out;
  for (const agent::McpServerSpec& server : spec.mcp_servers) {
    MEND_ASSIGN_OR_RETURN(std::shared_ptr<McpSession> session, StartSession(spec, server, options));
    const std::vector<mcp::ToolInfo> tools = session->tools();
    if (server.tools.has_value()) {
      for (const std::string& wanted : *server.tools) {
        const bool found = std::any_of(tools.begin(), tools.end(),
                                       [&](const mcp::ToolInfo& t) { return t.name == wanted; });
        if (!found) {
          std::string offered;
          for (const mcp::ToolInfo& t : tools) offered += (offered.empty() ? "" : ", ") + t.name;
          return InvalidArgumentError(Where(spec, server) + ".tools names \"" + wanted +
                                      "\", which the server does not offer; it offers: " +
                                      (offered.empty() ? "(none)" : offered));
        }
      }
    }
    out.servers.push_back({server.name, session->protocol_version(), session->server_info()});
    for (const mcp::ToolInfo& tool : tools) {
      if (server.tools.has_value() && !Listed(*server.tools, tool.name)) continue;
      std::optional<std::string> name = McpToolName(server.name, tool.name);
      if (!name.has_value()) {
        obs::Event e("mcp.tool_skipped");
        e.AddString("server", server.name)
            .AddString("tool", tool.name)
            .AddString("reason", "its name would be longer than 64 characters");
        Publish(options.events, std::move(e));
        continue;
      }
      McpToolView view;
      view.server = server.name;
      view.name = *name;
      view.info = tool;
      view.read_only =
          Listed(server.read_only, tool.name) || (server.trust_annotations && tool.read_only_hint);
      // destructiveHint means something only for a tool that is not read-only (the spec).
      view.requires_approval =
          Listed(server.requires_approval, tool.name) ||
          (server.approve_destructive && !tool.read_only_hint && tool.destructive_hint);
      view.schema_checked = agent::ValidateJsonSchema(tool.input_schema).ok() &&
                            tool.input_schema.value("type", json()) == "object";
      agent::ToolSpec tool_spec;
      tool_spec.name = *name;
      std::string description = !tool.description.empty() ? tool.description : tool.title;
      tool_spec.description = (description.empty() ? "" : description + " ") + "(tool " +
                              tool.name + " of MCP server " + server.name + ")";
      tool_spec.parameters = DumpJson(tool.input_schema);
      tool_spec.read_only = view.read_only;
      tool_spec.requires_approval = view.requires_approval;
      tool_spec.check_arguments = view.schema_checked;
      out.tools.push_back(std::make_shared<McpTool>(session, tool, tool_spec));
      if (view.read_only) out.read_only.push_back(*name);
      out.views.push_back(std::move(view));
    }
  }
  return out;
}

}  // namespace mend::app
