#include "tests/support/fake_llm_routes.h"

#include <algorithm>

namespace mend::testing::fake_llm {
namespace {

using Json = nlohmann::json;

// OpenAI content parts, Anthropic content blocks and system blocks carry their text under "text";
// messages, Responses input items and Anthropic tool_result blocks nest theirs under "content".
// Recursing through these two keys covers every shape without naming block types, and leaves out
// roles, ids, tool names and tool-call arguments. The one text elsewhere is a Responses tool
// result: the "output" of a function_call_output item.
void CollectTexts(const Json& value, std::vector<std::string>& out) {
  if (value.is_string()) {
    out.push_back(value.get<std::string>());
  } else if (value.is_array()) {
    for (const Json& item : value) CollectTexts(item, out);
  } else if (value.is_object()) {
    auto text = value.find("text");
    if (text != value.end() && text->is_string()) out.push_back(text->get<std::string>());
    auto content = value.find("content");
    if (content != value.end()) CollectTexts(*content, out);
    auto output = value.find("output");
    if (output != value.end() && output->is_string() &&
        value.value("type", Json()) == "function_call_output") {
      out.push_back(output->get<std::string>());
    }
  }
}

}  // namespace

std::vector<std::string> RequestTexts(const Json& request) {
  std::vector<std::string> texts;
  auto system = request.find("system");
  if (system != request.end()) CollectTexts(*system, texts);
  auto instructions = request.find("instructions");
  if (instructions != request.end() && instructions->is_string()) {
    texts.push_back(instructions->get<std::string>());
  }
  for (const char* key : {"messages", "input"}) {
    auto value = request.find(key);
    if (value != request.end()) CollectTexts(*value, texts);
  }
  return texts;
}

bool RouteMatches(const std::vector<std::string>& contains, const std::vector<std::string>& texts) {
  return std::all_of(contains.begin(), contains.end(), [&texts](const std::string& needle) {
    return std::any_of(texts.begin(), texts.end(), [&needle](const std::string& text) {
      return text.find(needle) != std::string::npos;
    });
  });
}

std::optional<FakeResponse> Routes::Answer(const std::vector<std::string>& texts,
                                           const FakeResponse& fallback) {
  for (Entry& entry : routes_) {
    if (!RouteMatches(entry.route.contains, texts)) continue;
    const std::vector<FakeResponse>& responses = entry.route.responses;
    const size_t turn = static_cast<size_t>(entry.hits++);
    if (responses.empty()) return fallback;
    if (entry.route.after_last == FakeRoute::AfterLast::kCycle) {
      return responses[turn % responses.size()];
    }
    return responses[std::min(turn, responses.size() - 1)];
  }
  return std::nullopt;
}

int64_t Routes::Hits(std::string_view name) const {
  int64_t hits = 0;
  for (const Entry& entry : routes_) {
    if (entry.route.name == name) hits += entry.hits;
  }
  return hits;
}

}  // namespace mend::testing::fake_llm
