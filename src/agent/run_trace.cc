#include "agent/run_trace.h"

#include <utility>

namespace mend::agent {

obs::Span StartAttemptSpan(const AgentOptions& options, const AgentSpec& spec,
                           const std::string& run_id, const RunOrigin& origin,
                           std::string_view attempt, const std::string& fork_parent,
                           const std::optional<obs::SpanContext>& caller) {
  if (options.tracer == nullptr) return obs::Span();
  obs::SpanStart start;
  start.run_id = run_id;
  if (caller.has_value() && caller->valid()) {
    start.parent = *caller;
  } else {
    start.trace_id = origin.trace_id;
  }
  if (!fork_parent.empty()) {
    obs::SpanContext root{origin.trace_id, origin.trace_root_span_id};
    if (root.valid()) {
      start.links.push_back(obs::SpanLink{
          std::move(root), {{"mend.link", std::string("fork_of")}, {"mend.run.id", fork_parent}}});
    }
  }
  obs::Span span = options.tracer->StartSpan("invoke_agent " + spec.name, std::move(start));
  const RunModel& model = origin.model.empty() ? options.run_model : origin.model;
  span.SetAttribute("gen_ai.operation.name", "invoke_agent")
      .SetAttribute("gen_ai.agent.name", spec.name)
      .SetAttribute("mend.attempt", std::string(attempt))
      .SetAttribute("mend.run.status", "running");
  if (!model.provider.empty()) span.SetAttribute("gen_ai.provider.name", model.provider);
  std::string requested = !options.model.empty() ? options.model : model.model;
  if (requested.empty()) requested = spec.model;
  if (!requested.empty()) span.SetAttribute("gen_ai.request.model", requested);
  if (!fork_parent.empty()) span.SetAttribute("mend.fork.parent_run_id", fork_parent);
  if (!origin.arm.empty()) {
    span.SetAttribute("mend.canary.arm", origin.arm)
        .SetAttribute("mend.canary.proposal", origin.canary);
  }
  span.Announce();
  return span;
}

bool AdoptTrace(RunOrigin& origin, const obs::Span* span, const std::string& run_id) {
  if (!origin.trace_id.empty() || span == nullptr || !span->recording()) return false;
  if (span->run_id() != run_id) return false;
  obs::SpanContext context = span->context();
  origin.trace_id = context.trace_id;
  origin.trace_root_span_id = context.span_id;
  return true;
}

void EndAttemptSpan(obs::Span& span, Result<RunResult>& result) {
  if (!span.recording()) return;
  if (result.ok()) result->trace_id = span.context().trace_id;
  if (!result.ok()) {
    const Status& s = result.status();
    std::string_view detail = s.detail_code();
    span.SetError(detail.empty() ? StatusCodeName(s.code()) : detail, s.message());
    span.End();
    return;
  }
  span.SetAttribute("mend.run.status", std::string(store::RunStatusName(result->status)))
      .SetAttribute("mend.step", result->steps)
      .SetAttribute("mend.cost_usd", result->cost_usd)
      .SetAttribute("gen_ai.usage.input_tokens", result->input_tokens)
      .SetAttribute("gen_ai.usage.output_tokens", result->output_tokens);
  if (!result->waiting.empty()) span.SetAttribute("mend.run.waiting", result->waiting);
  if (result->error.has_value()) {
    span.SetError(result->error->code, result->error->message);
  } else {
    span.SetOk();
  }
  span.End();
}

}  // namespace mend::agent
