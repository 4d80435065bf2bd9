#include "mend/app/mcp_serve.h"

#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "mend/agent/run_origin.h"
#include "mend/agent/run_view.h"
#include "mend/app/lesson_admin.h"
#include "mend/app/memory_view.h"
#include "mend/app/run_inspector.h"
#include "mend/app/run_json.h"
#include "mend/app/runtime.h"
#include "mend/base/home_layout.h"
#include "mend/base/json.h"
#include "mend/base/utf8.h"
#include "mend/reflexion/lesson.h"
#include "mend/reflexion/lesson_sink.h"

namespace mend::app {
namespace {

using json = nlohmann::json;

constexpr char kLessonsUri[] = "mend://lessons/LESSONS.md";
constexpr char kTranscriptPrefix[] = "mend://runs/";
constexpr char kTranscriptSuffix[] = "/transcript";
constexpr size_t kSummaryChars = 400;

// A string argument: required ones must be present and not empty.
Result<std::string> Text(const json& args, const char* key, bool required) {
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) {
    if (required) return InvalidArgumentError(std::string(key) + " is required");
    return std::string();
  }
  if (!it->is_string()) return InvalidArgumentError(std::string(key) + " must be a string");
  std::string value = it->get<std::string>();
  if (required && Trim(value).empty()) {
    return InvalidArgumentError(std::string(key) + " must not be empty");
  }
  return value;
}

Result<int64_t> Int(const json& args, const char* key, int64_t fallback, int64_t min, int64_t max) {
  auto it = args.find(key);
  if (it == args.end() || it->is_null()) return fallback;
  if (!it->is_number_integer() || it->get<int64_t>() < min || it->get<int64_t>() > max) {
    return InvalidArgumentError(std::string(key) + " must be an integer between " +
                                std::to_string(min) + " and " + std::to_string(max));
  }
  return it->get<int64_t>();
}

Result<std::vector<std::string>> Tags(const json& args) {
  std::vector<std::string> tags;
  auto it = args.find("tags");
  if (it == args.end() || it->is_null()) return tags;
  if (!it->is_array()) return InvalidArgumentError("tags must be an array of strings");
  for (const json& tag : *it) {
    if (!tag.is_string()) return InvalidArgumentError("tags must be an array of strings");
    tags.push_back(tag.get<std::string>());
  }
  return memory::NormalizeTags(tags);
}

json Schema(json properties, std::vector<std::string> required) {
  json schema = {{"type", "object"}, {"properties", std::move(properties)}};
  if (!required.empty()) schema["required"] = std::move(required);
  return schema;
}

json Hints(bool read_only, bool idempotent) {
  return {{"readOnlyHint", read_only},
          {"destructiveHint", false},
          {"idempotentHint", idempotent},
          {"openWorldHint", false}};
}

const json kString = {{"type", "string"}};
const json kObject = {{"type", "object"}};

mcp::ServedTool Recall(Runtime& runtime) {
  return {"recall",
          "Recall for a task",
          "What a mend run for this task would be given from long-term memory: the memory "
          "section and its facts, or why nothing would be given.",
          Schema({{"task", kString}, {"workspace", kString}}, {"task"}),
          kObject,
          Hints(true, true),
          [&runtime](const json& args) -> Result<json> {
            MEND_ASSIGN_OR_RETURN(std::string task, Text(args, "task", true));
            MEND_ASSIGN_OR_RETURN(std::string workspace, Text(args, "workspace", false));
            MEND_ASSIGN_OR_RETURN(RecallAnswer answer, ExplainRecall(runtime, task, workspace));
            return RecallAnswerJson(answer);
          }};
}

mcp::ServedTool Search(Runtime& runtime) {
  return {
      "search",
      "Search memory",
      "Facts and lessons of long-term memory that match a query, best first.",
      Schema({{"query", kString}, {"k", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}}}},
             {"query"}),
      kObject,
      Hints(true, true),
      [&runtime](const json& args) -> Result<json> {
        MEND_ASSIGN_OR_RETURN(std::string query, Text(args, "query", true));
        MEND_ASSIGN_OR_RETURN(int64_t k, Int(args, "k", 10, 1, 100));
        MEND_ASSIGN_OR_RETURN(std::vector<memory::ScoredFact> hits,
                              runtime.retriever->Search(query, static_cast<size_t>(k)));
        json results = SearchResultsJson(hits);
        return results.is_object() ? results : json{{"results", std::move(results)}};
      }};
}

mcp::ServedTool AddFact(Runtime& runtime) {
  return {"add_fact",
          "Add a fact",
          "Stores a fact in long-term memory. The same text again reinforces the fact instead of "
          "adding a copy.",
          Schema({{"content", kString},
                  {"category", kString},
                  {"tags", {{"type", "array"}, {"items", kString}}}},
                 {"content"}),
          kObject,
          Hints(false, true),
          [&runtime](const json& args) -> Result<json> {
            memory::NewFact fact;
            MEND_ASSIGN_OR_RETURN(fact.content, Text(args, "content", true));
            MEND_ASSIGN_OR_RETURN(fact.category, Text(args, "category", false));
            if (fact.category.empty()) fact.category = "general";
            MEND_ASSIGN_OR_RETURN(fact.tags, Tags(args));
            fact.source = "mcp";
            MEND_ASSIGN_OR_RETURN(memory::AddResult added, runtime.facts->Add(fact));
            if (runtime.backfill != nullptr) runtime.backfill->Notify();
            return json{{"fact_id", added.id},
                        {"result", std::string(memory::AddResultKindName(added.kind))}};
          }};
}

mcp::ServedTool AddLesson(Runtime& runtime) {
  return {"add_lesson",
          "Add a lesson",
          "Stores a lesson (when it applies, what went wrong, what to do instead) as mend's "
          "reflexion does; later runs on similar tasks receive it. The same lesson again is "
          "reinforced, not duplicated.",
          Schema({{"situation", kString},
                  {"mistake", kString},
                  {"correction", kString},
                  {"tags", {{"type", "array"}, {"items", kString}}}},
                 {"situation", "correction"}),
          kObject,
          Hints(false, true),
          [&runtime](const json& args) -> Result<json> {
            if (runtime.lessons.sink == nullptr) {
              return FailedPreconditionError("lessons are not available in this home");
            }
            reflexion::Lesson lesson;
            MEND_ASSIGN_OR_RETURN(lesson.situation, Text(args, "situation", true));
            MEND_ASSIGN_OR_RETURN(lesson.mistake, Text(args, "mistake", false));
            if (lesson.mistake.empty()) lesson.mistake = std::string(reflexion::kManualMistake);
            MEND_ASSIGN_OR_RETURN(lesson.correction, Text(args, "correction", true));
            MEND_ASSIGN_OR_RETURN(lesson.tags, Tags(args));
            lesson.trigger = "manual";
            lesson.created_at = runtime.env.clock->Now();
            MEND_ASSIGN_OR_RETURN(std::string id, runtime.lessons.sink->Persist(lesson, nullptr));
            return json{{"fact_id", id}};
          }};
}

mcp::ServedTool ReportFailure(Runtime& runtime) {
  return {"report_failure",
          "Report a failure",
          "Queues a lesson job for a failed attempt, exactly as a failed mend run does: mend's "
          "lesson workers have the model write the lesson. The same failure again is not queued "
          "twice.",
          Schema({{"task", kString}, {"attempt", kString}, {"outcome", kString}},
                 {"task", "attempt", "outcome"}),
          kObject,
          Hints(false, true),
          [&runtime](const json& args) -> Result<json> {
            lessonq::LessonRequest request;
            MEND_ASSIGN_OR_RETURN(request.task, Text(args, "task", true));
            MEND_ASSIGN_OR_RETURN(request.attempt, Text(args, "attempt", true));
            MEND_ASSIGN_OR_RETURN(request.outcome, Text(args, "outcome", true));
            request.trigger = "error";
            MEND_ASSIGN_OR_RETURN(lessonq::EnqueueResult queued, EnqueueLesson(runtime, request));
            return json{{"job_id", queued.id},
                        {"result", std::string(lessonq::EnqueueOutcomeName(queued.outcome))}};
          }};
}

mcp::ServedTool LessonFeedback(Runtime& runtime) {
  return {"lesson_feedback",
          "Say whether a fact helped",
          "Counts one outcome for a fact or lesson that was given to an agent: helped (the work "
          "succeeded) or hurt (it failed). Retrieval ranks facts by these counts.",
          Schema({{"fact_id", kString},
                  {"outcome", {{"type", "string"}, {"enum", {"helped", "hurt"}}}}},
                 {"fact_id", "outcome"}),
          kObject,
          Hints(false, false),
          [&runtime](const json& args) -> Result<json> {
            MEND_ASSIGN_OR_RETURN(std::string id, Text(args, "fact_id", true));
            MEND_ASSIGN_OR_RETURN(std::string outcome, Text(args, "outcome", true));
            if (outcome != "helped" && outcome != "hurt") {
              return InvalidArgumentError("outcome must be \"helped\" or \"hurt\"");
            }
            MEND_RETURN_IF_ERROR(runtime.facts->Get(id).status());
            // The store counts outcomes per run that received facts: this feedback is a run of
            // its own that received this one fact.
            char suffix[17];
            std::snprintf(suffix, sizeof(suffix), "%016llx",
                          static_cast<unsigned long long>(runtime.env.random->Next64()));
            const std::string run = std::string("mcp-feedback-") + suffix;
            MEND_RETURN_IF_ERROR(runtime.facts->RecordInjection(run, {id}));
            MEND_RETURN_IF_ERROR(runtime.facts->RecordOutcome(run, outcome == "helped"));
            MEND_ASSIGN_OR_RETURN(memory::Fact fact, runtime.facts->Get(id));
            return json{{"fact_id", id}, {"helped", fact.helped}, {"hurt", fact.hurt}};
          }};
}

mcp::ServedTool Runs(Runtime& runtime) {
  return {"runs",
          "List mend runs",
          "mend's runs, newest first: status, agent, checkpoint, what a waiting run waits for, "
          "the last error.",
          Schema({{"status", kString},
                  {"limit", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}}}},
                 {}),
          kObject,
          Hints(true, true),
          [&runtime](const json& args) -> Result<json> {
            store::PendingQuery query;
            query.scope = store::RunScope::kAll;
            MEND_ASSIGN_OR_RETURN(int64_t limit, Int(args, "limit", 20, 1, 100));
            query.limit = static_cast<size_t>(limit);
            MEND_ASSIGN_OR_RETURN(std::string status, Text(args, "status", false));
            if (!status.empty()) {
              MEND_ASSIGN_OR_RETURN(store::RunStatus parsed, store::ParseRunStatus(status));
              query.statuses.push_back(parsed);
            }
            MEND_ASSIGN_OR_RETURN(store::PendingPage page, runtime.store->ListPending(query));
            json runs = json::array();
            for (const store::RunRecord& run : page.runs) {
              agent::RunOrigin origin =
                  agent::ParseRunOrigin(run.metadata, run.id).value_or(agent::RunOrigin{});
              runs.push_back(ListedRunJson(run, origin, InterruptionOf(runtime, run)));
            }
            return json{{"runs", std::move(runs)}, {"total", page.total}};
          }};
}

// A transcript entry in a line or a few: role, tool, and the start of the text.
json SummaryOf(const agent::TranscriptEntry& entry) {
  json item = TranscriptEntryJson(entry);
  if (item.contains("content") && item["content"].is_string()) {
    const std::string content = item["content"].get<std::string>();
    if (CountUtf8Chars(content) > kSummaryChars) {
      item["content"] = TruncateUtf8Chars(content, kSummaryChars) + " [...]";
    }
  }
  return item;
}

mcp::ServedTool Run(Runtime& runtime) {
  return {"run",
          "Show a mend run",
          "One run: status, output or error, usage, and its transcript with each message cut to "
          "400 characters (the whole transcript is the resource mend://runs/{id}/transcript).",
          Schema({{"id", kString}}, {"id"}),
          kObject,
          Hints(true, true),
          [&runtime](const json& args) -> Result<json> {
            MEND_ASSIGN_OR_RETURN(std::string id, Text(args, "id", true));
            Result<agent::RunView> view = agent::ReadRunView(*runtime.store, id);
            if (!view.ok() && view.status().code() == StatusCode::kNotFound) {
              return NotFoundError("no run named " + id);
            }
            MEND_RETURN_IF_ERROR(view.status());
            json run = ListedRunJson(view->run, view->origin, InterruptionOf(runtime, view->run));
            run["output"] = view->output;
            run["question"] = view->question;
            run["steps"] = view->steps;
            run["usage"] = {{"input_tokens", view->input_tokens},
                            {"output_tokens", view->output_tokens}};
            run["cost_usd"] = view->cost_usd;
            json transcript = json::array();
            for (const agent::TranscriptEntry& entry : view->transcript) {
              transcript.push_back(SummaryOf(entry));
            }
            run["transcript"] = std::move(transcript);
            return run;
          }};
}

// The text of a resource: LESSONS.md, or a run's transcript as Markdown.
Result<std::string> ReadResource(Runtime& runtime, const std::string& uri) {
  if (uri == kLessonsUri) {
    const std::string path =
        home::LessonsFile(runtime.config.GetString("reflexion.queue.base_dir"));
    Result<std::string> text = ReadFileToString(*runtime.env.fs, path);
    if (!text.ok() && text.status().code() == StatusCode::kNotFound) {
      return std::string("# Lessons\n\n(none yet)\n");
    }
    return text;
  }
  const std::string prefix = kTranscriptPrefix;
  const std::string suffix = kTranscriptSuffix;
  if (uri.size() > prefix.size() + suffix.size() && uri.rfind(prefix, 0) == 0 &&
      uri.compare(uri.size() - suffix.size(), suffix.size(), suffix) == 0) {
    const std::string id = uri.substr(prefix.size(), uri.size() - prefix.size() - suffix.size());
    Result<agent::RunView> view = agent::ReadRunView(*runtime.store, id);
    if (!view.ok() && view.status().code() == StatusCode::kNotFound) {
      return NotFoundError("no run named " + id);
    }
    MEND_RETURN_IF_ERROR(view.status());
    std::string text =
        "# Run " + id + "\n\nstatus: " + std::string(store::RunStatusName(view->run.status)) + "\n";
    for (const agent::TranscriptEntry& entry : view->transcript) {
      const json item = TranscriptEntryJson(entry);
      text += "\n## " + item.value("role", std::string("message"));
      if (item.contains("name") && item["name"].is_string()) {
        text += " (" + item["name"].get<std::string>() + ")";
      }
      text += "\n\n" +
              (item["content"].is_string() ? item["content"].get<std::string>()
                                           : DumpJson(item["content"])) +
              "\n";
      if (item.contains("tool_calls"))
        text += "\ntool calls: " + DumpJson(item["tool_calls"]) + "\n";
    }
    return text;
  }
  return NotFoundError("no resource " + SanitizeUtf8(TruncateUtf8Bytes(uri, 200)));
}

}  // namespace

std::unique_ptr<mcp::McpServer> MakeMendMcpServer(Runtime& runtime, const std::string& version) {
  mcp::ServerIdentity identity;
  identity.version = version;
  identity.instructions =
      "mend's long-term memory and lessons. Before a task, call recall with the task to get what "
      "was learned; after a failure, call report_failure so a lesson is learned from it.";
  std::vector<mcp::ServedTool> tools = {
      Recall(runtime),        Search(runtime),         AddFact(runtime), AddLesson(runtime),
      ReportFailure(runtime), LessonFeedback(runtime), Runs(runtime),    Run(runtime)};
  mcp::ServedResources resources;
  resources.fixed.push_back(
      {kLessonsUri, "LESSONS.md", "Every lesson mend has learned, newest last", "text/markdown"});
  resources.templates.push_back({"mend://runs/{id}/transcript", "run transcript",
                                 "The whole transcript of one mend run", "text/markdown"});
  resources.read = [&runtime](const std::string& uri) { return ReadResource(runtime, uri); };
  return std::make_unique<mcp::McpServer>(std::move(identity), std::move(tools),
                                          std::move(resources));
}

}  // namespace mend::app
