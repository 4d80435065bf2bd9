#pragma once

// Reflexion's post-run hooks (docs/reflexion.md): ReflexionHook queues a lesson job when a trigger
// matches (IsTaskFailure, TriggerFor); VerifyHook checks an answer by chain-of-verification;
// RefineHook critiques and revises it.

#include <optional>
#include <string>
#include <string_view>

#include "mend/agent/hooks.h"
#include "mend/lessonq/lesson_queue.h"
#include "mend/llm/provider.h"

namespace mend::reflexion {

///@{
/// Flags of RunOutcome::flags that reflexion reads (docs/reflexion.md).
inline constexpr std::string_view kFlagVerifiedWithDiscrepancy = "verified_with_discrepancy";
inline constexpr std::string_view kFlagRefineLowQuality = "refine_low_quality";
///@}
/// Set on an outcome to reflect on a run that did not fail (trigger "manual").
inline constexpr std::string_view kFlagForceReflexion = "force_reflexion";

/// Which triggers are on (the reflexion.* keys).
struct TriggerOptions {
  bool enabled = true;           ///< false: no trigger fires
  bool on_error = true;          ///< a task failure (IsTaskFailure)
  bool on_hallucination = true;  ///< flag verified_with_discrepancy
  bool on_low_quality = false;   ///< flag refine_low_quality
};

/// True when `error` is a failure of the task, one the agent could have avoided and a lesson can
/// help with: class permanent (ClassOf), such as a tool or check failure, a limit reached, the
/// progress guard stopping the run, or a model request the run made unusable (a context too
/// long). Not one: OK; errors of class transient (a provider outage, 5xx, 429, a timeout, a refused
/// connection, a DNS failure, no network), auth (401, 403) and internal (mend's own failures); and
/// permanent errors of the provider's account or configuration (detail codes insufficient_quota,
/// http_404 and MEND_CONFIG_INVALID). Decided on the class and detail code only; allocation-free.
bool IsTaskFailure(const Status& error);

/// The trigger for `outcome`, checked in order forced → error (a task failure, IsTaskFailure) →
/// hallucination → low_quality; std::nullopt when no gate matches. Pure, allocation-free:
/// "manual", "error", "hallucination" or "low_quality".
std::optional<std::string_view> TriggerFor(const agent::RunOutcome& outcome,
                                           const TriggerOptions& options);

/// The outcome text a lesson request carries for `trigger`: the error's code and message, or
/// the flag and the final answer.
std::string OutcomeText(const agent::RunOutcome& outcome, std::string_view trigger);

/// The provider a run's lessons are to be generated with, recorded in each of its jobs
/// (LessonRequest::provider, base_url, model): the run's provider kind and base URL, and its model
/// or the configured lesson model. Never an API key.
struct LessonProvider {
  std::string provider;  ///< the provider kind
  std::string base_url;  ///< its base URL; "" = the public default
  std::string model;     ///< the model lessons are generated with
};

/// Post-run hook "reflexion": when a trigger matches, hands a LessonRequest {task, attempt,
/// outcome, trigger, run id, traceparent, `provider`} to the enqueuer (the durable queue writes
/// its WAL record and returns; the lesson is generated later by a worker). When no gate matches it
/// returns without I/O.
class ReflexionHook final : public agent::PostRunHook {
 public:
  /// `enqueuer` must outlive the hook.
  ReflexionHook(TriggerOptions options, lessonq::LessonEnqueuer& enqueuer,
                LessonProvider provider = {});
  std::string_view name() const override { return "reflexion"; }
  Status AfterRun(agent::RunOutcome& outcome) override;

 private:
  TriggerOptions options_;
  lessonq::LessonEnqueuer& enqueuer_;
  LessonProvider provider_;
};

/// How VerifyHook checks an answer.
struct VerifyOptions {
  std::string model;            ///< "" = the provider's
  int max_questions = 3;        ///< verification questions planned at most
  bool replace_answer = false;  ///< on a discrepancy, replace the output with the verified answer
};

/// Post-run hook "verify" (chain-of-verification): for a completed run, the model (1) plans up to
/// max_questions verification questions about the draft answer, (2) answers them independently of
/// the draft, and (3) compares; a discrepancy sets the flag verified_with_discrepancy (and, with
/// replace_answer, replaces the output with the revised answer). Runs without output are left
/// alone. Model errors are returned (the run goes on: hook.failed).
class VerifyHook final : public agent::PostRunHook {
 public:
  /// `provider` is borrowed and must outlive the hook.
  VerifyHook(llm::LlmProvider& provider, VerifyOptions options);
  std::string_view name() const override { return "verify"; }
  Status AfterRun(agent::RunOutcome& outcome) override;

 private:
  Status Verify(agent::RunOutcome& outcome);
  llm::LlmProvider& provider_;
  VerifyOptions options_;
};

/// How RefineHook critiques and revises.
struct RefineOptions {
  std::string model;           ///< "" = the provider's
  int low_quality_below = 6;   ///< a critique score (1-10) below this flags refine_low_quality
  bool replace_answer = true;  ///< replace the output with the revision of a low-scored draft
};

/// Post-run hook "refine" (critique and revise): for a completed run, the model scores the draft
/// 1-10 with a critique; below low_quality_below the flag refine_low_quality is set and the model
/// revises the draft (the revision replaces the output when replace_answer). Model errors are
/// returned (the run goes on: hook.failed).
class RefineHook final : public agent::PostRunHook {
 public:
  /// `provider` is borrowed and must outlive the hook.
  RefineHook(llm::LlmProvider& provider, RefineOptions options);
  std::string_view name() const override { return "refine"; }
  Status AfterRun(agent::RunOutcome& outcome) override;

 private:
  Status Refine(agent::RunOutcome& outcome);
  llm::LlmProvider& provider_;
  RefineOptions options_;
};

}  // namespace mend::reflexion
