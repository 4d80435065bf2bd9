#include "mend/mcp/client.h"

#include <condition_variable>
#include <map>
#include <mutex>
#include <optional>

#include "mend/base/json.h"
#include "mend/base/utf8.h"

namespace mend::mcp {
namespace {

using json = nlohmann::json;
using SteadyClock = std::chrono::steady_clock;

constexpr int kMaxToolPages = 1000;

// The status a JSON-RPC error answer becomes.
Status StatusOfRpcError(const std::string& server, const std::string& method,
                        const RpcError& error) {
  const std::string text =
      "MCP server " + server + " answered " + method + " with error " + error.Describe();
  switch (error.code) {
    case kInvalidParams:
      return InvalidArgumentError(text);
    case kMethodNotFound:
      return UnimplementedError(text);
    default:
      return UnknownError(text);
  }
}

bool HintOr(const json& annotations, const char* key, bool fallback) {
  if (!annotations.is_object()) return fallback;
  auto it = annotations.find(key);
  return it != annotations.end() && it->is_boolean() ? it->get<bool>() : fallback;
}

Result<ToolInfo> ReadTool(const json& item, const std::string& server) {
  const auto bad = [&](const std::string& what) {
    return InvalidArgumentError("MCP server " + server + " listed a malformed tool: " + what);
  };
  if (!item.is_object()) return bad("not an object");
  ToolInfo tool;
  auto name = item.find("name");
  if (name == item.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
    return bad("\"name\" must be a non-empty string");
  }
  tool.name = name->get<std::string>();
  if (!IsValidUtf8(tool.name)) return bad("a name that is not UTF-8");
  for (const char* key : {"title", "description"}) {
    auto it = item.find(key);
    if (it == item.end() || it->is_null()) continue;
    if (!it->is_string()) return bad(tool.name + ": \"" + key + "\" must be a string");
    (std::string_view(key) == "title" ? tool.title : tool.description) = it->get<std::string>();
  }
  auto input = item.find("inputSchema");
  if (input == item.end() || input->is_null()) {
    tool.input_schema = {{"type", "object"}};
  } else if (!input->is_object()) {
    return bad(tool.name + ": \"inputSchema\" must be an object");
  } else {
    tool.input_schema = *input;
  }
  if (auto output = item.find("outputSchema"); output != item.end() && !output->is_null()) {
    if (!output->is_object()) return bad(tool.name + ": \"outputSchema\" must be an object");
    tool.output_schema = *output;
  }
  if (auto annotations = item.find("annotations");
      annotations != item.end() && !annotations->is_null()) {
    if (!annotations->is_object()) return bad(tool.name + ": \"annotations\" must be an object");
    tool.annotations = *annotations;
  }
  tool.read_only_hint = HintOr(tool.annotations, "readOnlyHint", false);
  tool.destructive_hint = HintOr(tool.annotations, "destructiveHint", true);
  tool.idempotent_hint = HintOr(tool.annotations, "idempotentHint", false);
  tool.open_world_hint = HintOr(tool.annotations, "openWorldHint", true);
  return tool;
}

class ClientImpl final : public Client {
 public:
  ClientImpl(std::unique_ptr<Transport> transport, ClientOptions options)
      : transport_(std::move(transport)), options_(std::move(options)) {}
  ~ClientImpl() override { Close(); }

  Status Open() {
    Status started =
        transport_->Start([this](std::string message) { OnMessage(std::move(message)); },
                          [this](Status why) { Break(Named(why)); });
    if (!started.ok()) return Named(started);
    json params = {{"protocolVersion", options_.protocol_version},
                   {"capabilities", json::object()},
                   {"clientInfo", {{"name", "mend"}, {"version", options_.client_version}}}};
    MEND_ASSIGN_OR_RETURN(
        json result, Request("initialize", std::move(params), options_.request_timeout, nullptr));
    auto version = result.find("protocolVersion");
    if (version == result.end() || !version->is_string()) {
      return Broke(UnavailableError("MCP server " + options_.name +
                                    " answered initialize without a protocolVersion"));
    }
    if (!IsSupportedProtocolVersion(version->get<std::string>())) {
      return Broke(FailedPreconditionError(
          "MCP server " + options_.name + " speaks protocol revision " +
          SanitizeUtf8(TruncateUtf8Bytes(version->get<std::string>(), 40)) +
          ", which mend does not (it speaks 2025-11-25, 2025-06-18, 2025-03-26 and 2024-11-05)"));
    }
    auto capabilities = result.find("capabilities");
    if (capabilities == result.end() || !capabilities->is_object()) {
      return Broke(UnavailableError("MCP server " + options_.name +
                                    " answered initialize without its capabilities"));
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      protocol_version_ = version->get<std::string>();
      if (auto info = result.find("serverInfo"); info != result.end() && info->is_object()) {
        server_info_ = *info;
      }
    }
    transport_->SetProtocolVersion(version->get<std::string>());
    return transport_->Send(
        SerializeRpcMessage(RpcMessage::Notification("notifications/initialized", nullptr)));
  }

  Result<std::vector<ToolInfo>> ListTools() override {
    tools_changed_.store(false);
    std::vector<ToolInfo> tools;
    std::string cursor;
    for (int page = 0; page < kMaxToolPages; ++page) {
      json params = json::object();
      if (!cursor.empty()) params["cursor"] = cursor;
      MEND_ASSIGN_OR_RETURN(
          json result, Request("tools/list", std::move(params), options_.request_timeout, nullptr));
      auto list = result.find("tools");
      if (list == result.end() || !list->is_array()) {
        return InvalidArgumentError("MCP server " + options_.name +
                                    " answered tools/list without a \"tools\" array");
      }
      for (const json& item : *list) {
        MEND_ASSIGN_OR_RETURN(ToolInfo tool, ReadTool(item, options_.name));
        for (const ToolInfo& seen : tools) {
          if (seen.name == tool.name) {
            return InvalidArgumentError("MCP server " + options_.name + " lists tool \"" +
                                        tool.name + "\" twice");
          }
        }
        tools.push_back(std::move(tool));
      }
      auto next = result.find("nextCursor");
      if (next == result.end() || next->is_null()) return tools;
      if (!next->is_string() || next->get_ref<const std::string&>().empty()) {
        return InvalidArgumentError("MCP server " + options_.name +
                                    " answered tools/list with a nextCursor that is not a string");
      }
      cursor = next->get<std::string>();
    }
    return InvalidArgumentError("MCP server " + options_.name + " listed more than " +
                                std::to_string(kMaxToolPages) + " pages of tools");
  }

  Result<CallResult> CallTool(const std::string& name, const json& arguments,
                              std::chrono::milliseconds timeout,
                              const std::atomic<bool>* stop) override {
    json params = {{"name", name},
                   {"arguments", arguments.is_object() ? arguments : json::object()}};
    MEND_ASSIGN_OR_RETURN(json result, Request("tools/call", std::move(params), timeout, stop));
    CallResult call;
    auto content = result.find("content");
    if (content != result.end() && !content->is_array()) {
      return InvalidArgumentError("MCP server " + options_.name + " answered tools/call " + name +
                                  " with a \"content\" that is not an array");
    }
    auto is_error = result.find("isError");
    call.is_error = is_error != result.end() && is_error->is_boolean() && is_error->get<bool>();
    call.result = std::move(result);
    return call;
  }

  Status Ping() override {
    return Request("ping", nullptr, options_.request_timeout, nullptr).status();
  }

  void Close() override {
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (closed_) return;
      closed_ = true;
    }
    transport_->Close();
    Break(UnavailableError("the MCP session with " + options_.name + " is closed"));
  }

  bool tools_changed() const override { return tools_changed_.load(); }
  bool alive() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return broken_.ok();
  }
  Status broken() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return broken_;
  }
  std::string protocol_version() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return protocol_version_;
  }
  json server_info() const override {
    std::lock_guard<std::mutex> lock(mu_);
    return server_info_;
  }
  std::string session_id() const override { return transport_->SessionId(); }
  std::string stderr_tail() const override { return transport_->StderrTail(); }

 private:
  // Marks the session broken and returns `why`: nothing more is sent to a server that answered
  // nonsense.
  Status Broke(Status why) {
    Break(why);
    return why;
  }

  // A transport's error as the caller should read it: which server, and the last thing it logged.
  Status Named(const Status& why) const {
    std::string text = "MCP server " + options_.name + ": " + std::string(why.message());
    std::string tail = transport_->StderrTail();
    while (!tail.empty() && tail.back() == '\n') tail.pop_back();
    const size_t start = tail.rfind('\n');
    if (!tail.empty()) {
      text += "; its stderr ended with: " + tail.substr(start == std::string::npos ? 0 : start + 1);
    }
    return Status(why.code(), text);
  }

  void Break(Status why) {
    std::lock_guard<std::mutex> lock(mu_);
    if (broken_.ok()) broken_ = std::move(why);
    cv_.notify_all();
  }

  void OnMessage(std::string text) {
    Result<RpcMessage> parsed = ParseRpcMessage(text);
    if (!parsed.ok()) {
      Break(UnavailableError("MCP server " + options_.name + " wrote a " +
                             std::string(parsed.status().message())));
      return;
    }
    RpcMessage& m = *parsed;
    switch (m.kind) {
      case RpcMessage::Kind::kResult:
      case RpcMessage::Kind::kError: {
        std::lock_guard<std::mutex> lock(mu_);
        if (!broken_.ok()) return;
        if (!m.id.is_number_integer() && !m.id.is_number_unsigned()) return;
        auto it = pending_.find(m.id.get<int64_t>());
        // A late answer to a call given up on (cancelled) is dropped.
        if (it == pending_.end() || it->second.has_value()) return;
        it->second = std::move(m);
        cv_.notify_all();
        return;
      }
      case RpcMessage::Kind::kNotification:
        if (m.method == "notifications/tools/list_changed") tools_changed_.store(true);
        return;
      case RpcMessage::Kind::kRequest: {
        // mend declares no client capabilities (roots, sampling, elicitation): only ping is
        // answered.
        RpcMessage answer =
            m.method == "ping"
                ? RpcMessage::Result(m.id, json::object())
                : RpcMessage::Error(m.id, kMethodNotFound, "mend does not offer " + m.method);
        (void)transport_->Send(SerializeRpcMessage(answer));
        return;
      }
    }
  }

  Result<json> Request(const std::string& method, json params, std::chrono::milliseconds timeout,
                       const std::atomic<bool>* stop) {
    int64_t id = 0;
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (!broken_.ok()) return broken_;
      id = next_id_++;
      pending_[id] = std::nullopt;
    }
    Status sent =
        transport_->Send(SerializeRpcMessage(RpcMessage::Request(id, method, std::move(params))));
    std::unique_lock<std::mutex> lock(mu_);
    if (!sent.ok()) {
      pending_.erase(id);
      // A server that died may have broken the session already, which says more.
      return broken_.ok() ? Named(sent) : broken_;
    }
    const auto deadline = SteadyClock::now() + timeout;
    for (;;) {
      auto it = pending_.find(id);
      // A broken session answers nothing more, even what arrived after the break.
      if (!broken_.ok()) {
        pending_.erase(it);
        return broken_;
      }
      if (it->second.has_value()) {
        RpcMessage answer = std::move(*it->second);
        pending_.erase(it);
        if (answer.kind == RpcMessage::Kind::kError) {
          return StatusOfRpcError(options_.name, method, answer.error);
        }
        return std::move(answer.result);
      }
      const bool stopped = stop != nullptr && stop->load();
      if (stopped || SteadyClock::now() >= deadline) {
        pending_.erase(it);
        lock.unlock();
        const std::string reason = stopped ? "the run stopped" : "timed out";
        (void)transport_->Send(SerializeRpcMessage(RpcMessage::Notification(
            "notifications/cancelled", {{"requestId", id}, {"reason", reason}})));
        if (stopped) {
          return CancelledError("the call of " + method + " on MCP server " + options_.name +
                                " was cancelled: the run stopped");
        }
        return DeadlineExceededError("MCP server " + options_.name + " did not answer " + method +
                                     " within " + std::to_string(timeout.count()) +
                                     " ms; the request was cancelled");
      }
      auto wake = deadline;
      if (stop != nullptr) wake = std::min(wake, SteadyClock::now() + options_.stop_poll);
      cv_.wait_until(lock, wake);
    }
  }

  std::unique_ptr<Transport> transport_;
  const ClientOptions options_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  int64_t next_id_ = 1;                                   // guarded by mu_
  std::map<int64_t, std::optional<RpcMessage>> pending_;  // guarded by mu_
  Status broken_;                                         // guarded by mu_
  bool closed_ = false;                                   // guarded by mu_
  std::string protocol_version_;                          // guarded by mu_
  json server_info_ = json::object();                     // guarded by mu_
  std::atomic<bool> tools_changed_{false};
};

// A string member of `obj`, or "" when it is absent or not a string (json::value would throw).
std::string StringOr(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string Summarise(const json& block) {
  const std::string type = StringOr(block, "type");
  const auto field = [&](const char* key) { return StringOr(block, key); };
  if (type == "image" || type == "audio") {
    const size_t bytes = field("data").size() / 4 * 3;
    return "[" + type + ": " + field("mimeType") + ", about " + std::to_string(bytes) +
           " bytes, not shown]";
  }
  if (type == "resource_link") {
    return "[resource link: " + field("name") + " " + field("uri") + "]";
  }
  if (type == "resource") {
    auto resource = block.find("resource");
    if (resource == block.end() || !resource->is_object()) return "[resource]";
    const std::string uri = StringOr(*resource, "uri");
    auto text = resource->find("text");
    if (text != resource->end() && text->is_string()) {
      return "[resource " + uri + "]\n" + text->get<std::string>();
    }
    auto blob = resource->find("blob");
    const size_t bytes = blob != resource->end() && blob->is_string()
                             ? blob->get_ref<const std::string&>().size() / 4 * 3
                             : 0;
    const std::string type_of_blob = StringOr(*resource, "mimeType");
    return "[resource " + uri + ": " + (type_of_blob.empty() ? "binary" : type_of_blob) +
           ", about " + std::to_string(bytes) + " bytes, not shown]";
  }
  return "[" + (type.empty() ? std::string("untyped") : type) + " content, not shown]";
}

}  // namespace

bool IsSupportedProtocolVersion(const std::string& version) {
  for (const char* v : kProtocolVersions) {
    if (version == v) return true;
  }
  return false;
}

Result<std::unique_ptr<Client>> Client::Connect(std::unique_ptr<Transport> transport,
                                                ClientOptions options) {
  if (transport == nullptr) return InvalidArgumentError("no transport");
  auto client = std::make_unique<ClientImpl>(std::move(transport), std::move(options));
  Status opened = client->Open();
  if (!opened.ok()) {
    client->Close();
    return opened;
  }
  return std::unique_ptr<Client>(std::move(client));
}

std::string RenderToolResult(const json& result, size_t max_bytes) {
  std::string text;
  bool any_text = false;
  if (result.is_object()) {
    auto content = result.find("content");
    if (content != result.end() && content->is_array()) {
      for (const json& block : *content) {
        if (!block.is_object()) continue;
        if (!text.empty()) text += "\n";
        auto t = block.find("text");
        if (StringOr(block, "type") == "text" && t != block.end() && t->is_string()) {
          text += t->get<std::string>();
          any_text = true;
        } else {
          text += Summarise(block);
        }
      }
    }
    auto structured = result.find("structuredContent");
    if (!any_text && structured != result.end() && !structured->is_null()) {
      if (!text.empty()) text += "\n";
      text += DumpJson(*structured);
    }
  }
  text = SanitizeUtf8(text);
  if (text.size() <= max_bytes) return text;
  const std::string note = "\n[mend: the result was cut to " + std::to_string(max_bytes) +
                           " of its " + std::to_string(text.size()) + " bytes]";
  const size_t keep = max_bytes > note.size() ? max_bytes - note.size() : 0;
  return TruncateUtf8Bytes(text, keep) + note;
}

}  // namespace mend::mcp
