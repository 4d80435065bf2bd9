#pragma once

// A proxied conversation as the proxy understands it (docs/proxy.md): what a request's history
// shows (the task, the tool calls and their results), which results are failures, and the
// state kept between requests: the memory section sent on the first request, the failures seen
// and which of them already became lesson jobs.

#include <cstdint>
#include <memory>
#include <nlohmann/json_fwd.hpp>
#include <optional>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/pattern.h"
#include "mend/base/result.h"
#include "mend/lessonq/job.h"
#include "proxy/api_shape.h"

namespace mend::proxy {

// One tool call of the history and its result, in the order the history has them.
struct ToolExchange {
  std::string call_id;
  std::string tool;
  std::string arguments;  // the call's arguments as JSON text, canonical (keys sorted, compact)
  bool has_result = false;
  std::string result;          // the result's text (text blocks / parts joined with "\n")
  bool flagged_error = false;  // the API itself marked it (Anthropic's is_error: true)
};

// What the proxy reads from a request body (already checked to be a JSON object).
struct RequestView {
  std::string model;
  bool stream = false;
  std::string system_text;      // the system prompt's text before any edit ("" when none)
  std::string first_user_text;  // the first user message's text: the conversation's task
  std::vector<ToolExchange> exchanges;
  // The request ends with results the model has not answered yet (tool / tool_result last).
  bool ends_with_tool_results = false;
};

// kInvalidArgument with a message in the API's words when a required field is missing or has
// the wrong type: chat and messages need a `messages` array whose elements are objects with a
// string `role`; responses need `input` (a string or an array). Unknown fields are ignored.
Result<RequestView> ReadRequest(ApiShape shape, const nlohmann::json& body);

// Decides whether a tool result is a failure. Built-in rules: the API's own flag (is_error); a
// JSON object result with a non-null, non-false `error` field (or `"isError": true`, or
// `"ok": false`, or `"success": false`); a JSON `exit_code` / `exitCode` / `returncode` other than
// 0; a first line that looks like an error ("error:", "Error:", "ERROR", "Traceback (most recent
// call last)", "exception", "failed", "fatal:", "permission denied", "command not found", "No such
// file or directory", an "exit code N"/"exit status N" with N != 0). Plus the configured RE2
// patterns, matched anywhere in the result.
class FailureRules {
 public:
  // kInvalidArgument naming the pattern that does not compile.
  static Result<FailureRules> Create(const std::vector<std::string>& patterns);
  // The failure's error text (the result, trimmed and cut to 2,000 bytes at a UTF-8 boundary),
  // or nullopt when `exchange` has no result or its result is no failure.
  std::optional<std::string> Classify(const ToolExchange& exchange) const;

 private:
  std::vector<Pattern> patterns_;
};

// A distinct failing call: the same tool, the same (canonical) arguments and the same error.
struct FailureRecord {
  std::string key;  // hex of sha256(tool \0 arguments \0 error), first 16 bytes
  std::string tool;
  std::string arguments;
  std::string error;
  int64_t count = 0;  // times the history showed it (the latest request's count)
  Time first_seen{};
  // What worked after it: "" while unresolved.
  std::string what_worked;
  bool enqueued = false;  // its lesson job was enqueued (never twice)

  bool operator==(const FailureRecord&) const = default;
};

struct Conversation {
  std::string id;
  std::string workspace;
  std::string task;  // the first user message (or X-Mend-Task)
  bool has_section = false;
  std::string section;  // the memory section of its first request, sent again byte for byte
  std::vector<FailureRecord> failures;
  Time created_at{};
  Time updated_at{};

  bool operator==(const Conversation&) const = default;
};

// The id of a conversation without X-Mend-Session: hex of sha256(workspace \0 system \0 first
// user message), first 16 bytes. With X-Mend-Session: hex of sha256(workspace \0 "session" \0
// session), so one client's session id never names another scope's conversation.
std::string ConversationIdFor(const std::string& workspace, const std::string& system_text,
                              const std::string& first_user_text);
std::string SessionConversationId(const std::string& workspace, const std::string& session);

// What a request showed about progress.
struct ProgressView {
  // The failing call seen most often in this request's history, and how often (0: none).
  int64_t repeats = 0;
  std::string tool;
  std::string error;
};

// Updates `conversation` with what `view`'s history shows (failures are added or their counts
// updated; a later result of the same tool that is no failure resolves the failures of that tool
// with "a later call of <tool> with arguments <args> succeeded"). Returns the progress view.
ProgressView ObserveRequest(Conversation& conversation, const RequestView& view,
                            const FailureRules& rules, Time now);

// After the upstream answered: a final answer (text, no tool calls) resolves every open failure
// with "the conversation ended with the answer: <text, cut to 500 bytes>".
void ObserveReply(Conversation& conversation, const std::string& text, bool has_tool_calls);

// The lesson jobs due now, each failure once (it is marked enqueued): resolved ones, and open
// ones first seen at least `lesson_after` before `now` (what worked: "nothing worked within
// <lesson_after>"). Trigger "error"; task = the conversation's task; attempt = "called <tool>
// with <arguments>"; outcome = "<error>\nWhat worked: <what_worked>".
std::vector<lessonq::LessonRequest> TakeDueLessons(Conversation& conversation, Time now,
                                                   Duration lesson_after);

// `d` as the configuration writes it: "10m", "2h", "45s".
std::string FormatLessonAfter(Duration d);

// The hint added to the system prompt while a failing call repeats (after the memory section).
std::string ProgressHint(const ProgressView& progress);
// The assistant's answer when proxy.stop_after is reached.
std::string NoProgressMessage(const ProgressView& progress);

// The conversations table in mend.db (docs/proxy.md): one row per conversation, its state as
// JSON, expiring `ttl` after its last request. Thread-safe; each call is one transaction. Files
// it creates are 0600.
class ConversationStore {
 public:
  // Opens (creating when needed) the table `proxy_conversations` in the SQLite database at
  // `path`. Errors of opening the database.
  static Result<std::unique_ptr<ConversationStore>> Open(const std::string& path);
  virtual ~ConversationStore() = default;

  // nullopt when there is none, or it expired by `now`. kDataLoss for a row that does not decode.
  virtual Result<std::optional<Conversation>> Load(const std::string& id, Time now) = 0;
  // Inserts or replaces; the row expires at updated_at + ttl.
  virtual Status Save(const Conversation& conversation, Duration ttl) = 0;
  // The conversations with a failure that is neither enqueued nor younger than `first_seen_before`
  // allows (first_seen <= first_seen_before), at most `limit`.
  virtual Result<std::vector<Conversation>> WithOpenFailures(Time first_seen_before,
                                                             size_t limit) = 0;
  // Deletes expired rows; how many.
  virtual Result<int64_t> DeleteExpired(Time now) = 0;
};

}  // namespace mend::proxy
