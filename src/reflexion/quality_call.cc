#include "reflexion/quality_call.h"

#include <utility>

#include "mend/obs/trace.h"
#include "reflexion/quality_prompts.h"

namespace mend::reflexion::internal {

Result<llm::Completion> AskModel(llm::LlmProvider& provider, const std::string& model,
                                 std::string system, std::string user, int max_tokens) {
  llm::CompletionRequest call;
  call.model = model;
  call.messages.push_back(llm::Message::System(std::move(system)));
  call.messages.push_back(llm::Message::User(std::move(user)));
  call.temperature = kQualityTemperature;
  call.max_tokens = max_tokens;
  return TracedComplete(provider, std::move(call));
}

Result<llm::Completion> TracedComplete(llm::LlmProvider& provider, llm::CompletionRequest request) {
  obs::Span span = obs::StartSpan(request.model.empty() ? "chat" : "chat " + request.model,
                                  obs::SpanKind::kClient);
  if (!span.recording()) return provider.Complete(request);
  span.SetAttribute("gen_ai.operation.name", "chat")
      .SetAttribute("gen_ai.provider.name", std::string(provider.name()));
  if (!request.model.empty()) span.SetAttribute("gen_ai.request.model", request.model);
  request.traceparent = obs::FormatTraceparent(span.context());
  Result<llm::Completion> completion = provider.Complete(request);
  if (!completion.ok()) {
    std::string_view detail = completion.status().detail_code();
    span.SetError(detail.empty() ? StatusCodeName(completion.status().code()) : detail,
                  completion.status().message());
    return completion;
  }
  if (!completion->model.empty()) span.SetAttribute("gen_ai.response.model", completion->model);
  span.SetAttribute("gen_ai.usage.input_tokens", completion->usage.input_tokens)
      .SetAttribute("gen_ai.usage.output_tokens", completion->usage.output_tokens)
      .SetAttribute(
          "gen_ai.response.finish_reasons",
          std::vector<std::string>{std::string(FinishReasonName(completion->finish_reason))})
      .SetAttribute("mend.cost_usd", completion->cost_usd)
      .SetOk();
  return completion;
}

}  // namespace mend::reflexion::internal
