// A conversation's bookkeeping (conversation.h): its id, the failures its history shows, what
// resolved them, and the lesson jobs and progress hints that follow.
#include "proxy/conversation.h"

#include <algorithm>
#include <map>
#include <utility>

#include "mend/base/hash.h"
#include "mend/base/utf8.h"

namespace mend::proxy {
namespace {

constexpr size_t kMaxAnswerBytes = 500;
constexpr size_t kMaxArgumentsInText = 1000;

std::string ShortHash(std::string_view data) { return Sha256Hex(data).substr(0, 32); }

std::string Joined(std::initializer_list<std::string_view> parts) {
  std::string out;
  for (std::string_view part : parts) {
    out.append(part);
    out.push_back('\0');
  }
  return out;
}

std::string FailureKey(const std::string& tool, const std::string& arguments,
                       const std::string& error) {
  return ShortHash(Joined({tool, arguments, error}));
}

std::string Shown(const std::string& arguments) {
  return TruncateUtf8Bytes(arguments, kMaxArgumentsInText);
}

FailureRecord* FindFailure(Conversation& conversation, const std::string& key) {
  for (FailureRecord& record : conversation.failures) {
    if (record.key == key) return &record;
  }
  return nullptr;
}

}  // namespace

std::string ConversationIdFor(const std::string& workspace, const std::string& system_text,
                              const std::string& first_user_text) {
  return ShortHash(Joined({workspace, system_text, first_user_text}));
}

std::string SessionConversationId(const std::string& workspace, const std::string& session) {
  return ShortHash(Joined({workspace, "session", session}));
}

ProgressView ObserveRequest(Conversation& conversation, const RequestView& view,
                            const FailureRules& rules, Time now) {
  // Counts come from this request's history alone: a client re-sends the whole history each
  // turn, so adding them up across requests would count one failure many times.
  std::map<std::string, int64_t> seen;
  for (size_t i = 0; i < view.exchanges.size(); ++i) {
    const ToolExchange& exchange = view.exchanges[i];
    if (!exchange.has_result) continue;
    std::optional<std::string> error = rules.Classify(exchange);
    if (!error.has_value()) {
      // A success resolves the open failures of the same tool that came before it.
      for (FailureRecord& record : conversation.failures) {
        if (record.tool == exchange.tool && record.what_worked.empty() && !record.enqueued) {
          record.what_worked = "a later call of " + exchange.tool + " with arguments " +
                               Shown(exchange.arguments) + " succeeded";
        }
      }
      continue;
    }
    const std::string key = FailureKey(exchange.tool, exchange.arguments, *error);
    const int64_t count = ++seen[key];
    FailureRecord* record = FindFailure(conversation, key);
    if (record == nullptr) {
      FailureRecord added;
      added.key = key;
      added.tool = exchange.tool;
      added.arguments = exchange.arguments;
      added.error = *std::move(error);
      added.first_seen = now;
      conversation.failures.push_back(std::move(added));
      record = &conversation.failures.back();
    }
    // A client that trims its history shows fewer; the conversation remembers the most.
    record->count = std::max(record->count, count);
  }
  ProgressView progress;
  for (const FailureRecord& record : conversation.failures) {
    if (!record.what_worked.empty() || record.enqueued) continue;
    auto it = seen.find(record.key);
    const int64_t repeats = it == seen.end() ? 0 : it->second;
    if (repeats > progress.repeats) {
      progress.repeats = repeats;
      progress.tool = record.tool;
      progress.error = record.error;
    }
  }
  return progress;
}

void ObserveReply(Conversation& conversation, const std::string& text, bool has_tool_calls) {
  if (has_tool_calls || Trim(text).empty()) return;
  const std::string answer = TruncateUtf8Bytes(Trim(text), kMaxAnswerBytes);
  for (FailureRecord& record : conversation.failures) {
    if (record.what_worked.empty() && !record.enqueued) {
      record.what_worked = "the conversation ended with the answer: " + answer;
    }
  }
}

std::vector<lessonq::LessonRequest> TakeDueLessons(Conversation& conversation, Time now,
                                                   Duration lesson_after) {
  std::vector<lessonq::LessonRequest> due;
  for (FailureRecord& record : conversation.failures) {
    if (record.enqueued) continue;
    std::string worked = record.what_worked;
    if (worked.empty()) {
      if (now - record.first_seen < lesson_after) continue;
      worked = "nothing worked within " + FormatLessonAfter(lesson_after);
    }
    lessonq::LessonRequest lesson;
    lesson.task = conversation.task;
    lesson.attempt = "called " + record.tool + " with " + Shown(record.arguments);
    lesson.outcome = record.error + "\nWhat worked: " + worked;
    lesson.trigger = "error";
    due.push_back(std::move(lesson));
    record.enqueued = true;
  }
  return due;
}

std::string FormatLessonAfter(Duration d) {
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(d).count();
  if (seconds % 3600 == 0 && seconds > 0) return std::to_string(seconds / 3600) + "h";
  if (seconds % 60 == 0 && seconds > 0) return std::to_string(seconds / 60) + "m";
  return std::to_string(seconds) + "s";
}

std::string ProgressHint(const ProgressView& progress) {
  return "## Progress\nThe tool `" + progress.tool + "` has failed " +
         std::to_string(progress.repeats) +
         " times in this conversation with the same arguments and the same error:\n" +
         TruncateUtf8Bytes(progress.error, 300) +
         "\nCalling it again the same way will fail again. Change the arguments, use another "
         "tool, or explain to the user what is blocking you.";
}

std::string NoProgressMessage(const ProgressView& progress) {
  return "I am not making progress: the tool `" + progress.tool + "` failed " +
         std::to_string(progress.repeats) + " times with the same arguments and the same error (" +
         TruncateUtf8Bytes(progress.error, 300) +
         "). I stopped here instead of calling it again; the task needs a different approach or "
         "help from you.";
}

}  // namespace mend::proxy
