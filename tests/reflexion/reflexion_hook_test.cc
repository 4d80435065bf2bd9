#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <new>
#include <string>
#include <vector>

#include "mend/reflexion/hooks.h"
#include "tests/support/status_matchers.h"

// Counts heap allocations made on this thread while counting is on, to prove the no-trigger path
// of the hook allocates nothing.
namespace {
thread_local bool counting_allocations = false;
thread_local int allocations = 0;
}  // namespace

// Every non-aligned form is replaced so that allocation and release always pair malloc with free
// (sanitizers check the pairing); the aligned forms keep their defaults, which pair among
// themselves.
namespace {
void* CountedAlloc(std::size_t size) noexcept {
  if (counting_allocations) ++allocations;
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace

void* operator new(std::size_t size) {
  if (void* p = CountedAlloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) {
  if (void* p = CountedAlloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return CountedAlloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept {
  return CountedAlloc(size);
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace mend::reflexion {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Optional;

class FakeEnqueuer final : public lessonq::LessonEnqueuer {
 public:
  Result<lessonq::EnqueueResult> Enqueue(const lessonq::LessonRequest& request) override {
    requests.push_back(request);
    if (!error.ok()) return error;
    return lessonq::EnqueueResult{"0123456789abcdef", true, lessonq::EnqueueOutcome::kAccepted};
  }
  std::vector<lessonq::LessonRequest> requests;
  Status error;
};

// A task failure: the run used up its steps.
agent::RunOutcome Failed() {
  agent::RunOutcome outcome;
  outcome.error = FailedPreconditionError("run reached max_steps (8)")
                      .WithDetailCode("MEND_RUN_MAX_STEPS")
                      .WithClass(ErrorClass::kPermanent);
  return outcome;
}

agent::RunOutcome FailedWith(Status error) {
  agent::RunOutcome outcome;
  outcome.error = std::move(error);
  return outcome;
}

TEST(TriggerForTest, NothingMatchesACleanRun) {
  EXPECT_EQ(TriggerFor(agent::RunOutcome{}, TriggerOptions{}), std::nullopt);
}

TEST(TriggerForTest, NoTriggerPathDoesNotAllocate) {
  FakeEnqueuer enqueuer;
  ReflexionHook hook(TriggerOptions{}, enqueuer);
  agent::RunOutcome clean;
  clean.output = "done";
  agent::RunOutcome flagged;
  flagged.flags["refine_low_quality"] = true;  // a flag that is off by default
  flagged.flags["verified_with_discrepancy"] = false;
  allocations = 0;
  counting_allocations = true;
  Status a = hook.AfterRun(clean);
  Status b = hook.AfterRun(flagged);
  std::optional<std::string_view> t = TriggerFor(flagged, TriggerOptions{});
  counting_allocations = false;
  EXPECT_EQ(allocations, 0);
  EXPECT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(t, std::nullopt);
  EXPECT_THAT(enqueuer.requests, IsEmpty());
}

TEST(TriggerForTest, DefaultsTable) {
  struct Case {
    bool error;
    std::vector<std::string> flags;
    std::optional<std::string_view> want;
  };
  const std::vector<Case> cases = {
      {true, {}, "error"},
      {false, {"verified_with_discrepancy"}, "hallucination"},
      {false, {"refine_low_quality"}, std::nullopt},  // off by default
      {false, {"force_reflexion"}, "manual"},
      {true, {"force_reflexion", "verified_with_discrepancy"}, "manual"},
      {true, {"verified_with_discrepancy", "refine_low_quality"}, "error"},
      {false, {"unrelated"}, std::nullopt},
  };
  for (const Case& c : cases) {
    agent::RunOutcome outcome = c.error ? Failed() : agent::RunOutcome{};
    for (const std::string& f : c.flags) outcome.flags[f] = true;
    EXPECT_EQ(TriggerFor(outcome, TriggerOptions{}), c.want) << c.error << " " << c.flags.size();
  }
}

TEST(TriggerForTest, FalseFlagsDoNotTrigger) {
  agent::RunOutcome outcome;
  outcome.flags["verified_with_discrepancy"] = false;
  outcome.flags["force_reflexion"] = false;
  EXPECT_EQ(TriggerFor(outcome, TriggerOptions{}), std::nullopt);
}

TEST(TriggerForTest, OptionsGateEachTrigger) {
  agent::RunOutcome outcome = Failed();
  outcome.flags["verified_with_discrepancy"] = true;
  outcome.flags["refine_low_quality"] = true;
  TriggerOptions options;
  options.on_low_quality = true;
  EXPECT_THAT(TriggerFor(outcome, options), Optional(std::string_view("error")));
  options.on_error = false;
  EXPECT_THAT(TriggerFor(outcome, options), Optional(std::string_view("hallucination")));
  options.on_hallucination = false;
  EXPECT_THAT(TriggerFor(outcome, options), Optional(std::string_view("low_quality")));
  options.on_low_quality = false;
  EXPECT_EQ(TriggerFor(outcome, options), std::nullopt);
  outcome.flags["force_reflexion"] = true;
  EXPECT_THAT(TriggerFor(outcome, options), Optional(std::string_view("manual")));
  options.enabled = false;
  EXPECT_EQ(TriggerFor(outcome, options), std::nullopt);
}

TEST(TriggerForTest, InfrastructureFailuresAreNotLessons) {
  // The agent could not have done better: the provider or mend itself failed.
  const std::vector<Status> infrastructure = {
      UnauthenticatedError("openai HTTP 401: Incorrect API key provided.")
          .WithDetailCode("http_401"),
      PermissionDeniedError("openai HTTP 403: forbidden").WithDetailCode("http_403"),
      UnavailableError("connect to 127.0.0.1:9 failed: Connection refused")
          .WithDetailCode("transport"),
      UnavailableError("could not resolve host api.example").WithDetailCode("transport"),
      UnavailableError("openai HTTP 503: overloaded").WithDetailCode("http_503"),
      DeadlineExceededError("request timed out").WithDetailCode("timeout"),
      ResourceExhaustedError("openai HTTP 429: slow down").WithDetailCode("http_429"),
      ResourceExhaustedError("openai HTTP 429: quota")
          .WithDetailCode("insufficient_quota")
          .WithClass(ErrorClass::kPermanent),
      NotFoundError("openai HTTP 404: no such model").WithDetailCode("http_404"),
      InvalidArgumentError("provider.model is not set").WithDetailCode("MEND_CONFIG_INVALID"),
      InternalError("disk I/O error"),
      AbortedError("the run's lease was lost"),
  };
  for (const Status& error : infrastructure) {
    EXPECT_FALSE(IsTaskFailure(error)) << error;
    EXPECT_EQ(TriggerFor(FailedWith(error), TriggerOptions{}), std::nullopt) << error;
  }
  // Failures of the task itself are lessons.
  const std::vector<Status> task = {
      FailedPreconditionError("run reached max_steps (8)")
          .WithDetailCode("MEND_RUN_MAX_STEPS")
          .WithClass(ErrorClass::kPermanent),
      FailedPreconditionError("the same tool call failed 3 times")
          .WithDetailCode("MEND_RUN_NO_PROGRESS")
          .WithClass(ErrorClass::kPermanent),
      InvalidArgumentError("openai HTTP 400: context length exceeded")
          .WithDetailCode("context_length_exceeded"),
      InvalidArgumentError("the deploy tool rejected the manifest"),
  };
  for (const Status& error : task) {
    EXPECT_TRUE(IsTaskFailure(error)) << error;
    EXPECT_THAT(TriggerFor(FailedWith(error), TriggerOptions{}),
                Optional(std::string_view("error")))
        << error;
  }
  EXPECT_FALSE(IsTaskFailure(OkStatus()));
  // A reflection asked for by hand still happens whatever the error.
  agent::RunOutcome forced = FailedWith(UnauthenticatedError("bad key"));
  forced.flags["force_reflexion"] = true;
  EXPECT_THAT(TriggerFor(forced, TriggerOptions{}), Optional(std::string_view("manual")));
}

TEST(ReflexionHookTest, ProviderOutageEnqueuesNothing) {
  FakeEnqueuer enqueuer;
  ReflexionHook hook(TriggerOptions{}, enqueuer);
  agent::RunOutcome outcome =
      FailedWith(UnavailableError("provider timed out").WithDetailCode("timeout"));
  MEND_ASSERT_OK(hook.AfterRun(outcome));
  EXPECT_THAT(enqueuer.requests, IsEmpty());
}

TEST(OutcomeTextTest, PerTrigger) {
  agent::RunOutcome failed =
      FailedWith(UnavailableError("provider timed out").WithDetailCode("timeout"));
  EXPECT_EQ(OutcomeText(failed, "error"), "UNAVAILABLE: provider timed out (detail timeout)");
  failed.error = InvalidArgumentError("bad tool call");
  EXPECT_EQ(OutcomeText(failed, "error"), "INVALID_ARGUMENT: bad tool call");
  EXPECT_EQ(OutcomeText(failed, "manual"),
            "reflection requested on a run that ended: INVALID_ARGUMENT: bad tool call");

  agent::RunOutcome done;
  done.output = "Paris is the capital of Italy.";
  EXPECT_EQ(OutcomeText(done, "hallucination"),
            "verification found a discrepancy in the answer:\nParis is the capital of Italy.");
  EXPECT_EQ(OutcomeText(done, "low_quality"),
            "the draft answer was judged low quality:\nParis is the capital of Italy.");
  EXPECT_EQ(OutcomeText(done, "manual"),
            "reflection requested on a run that ended: Paris is the capital of Italy.");
  done.output = std::string(2000, 'x');
  EXPECT_EQ(OutcomeText(done, "low_quality").size(),
            std::string("the draft answer was judged low quality:\n").size() + 800);
}

TEST(ReflexionHookTest, EnqueuesTheRequestFields) {
  FakeEnqueuer enqueuer;
  ReflexionHook hook(TriggerOptions{}, enqueuer);
  EXPECT_EQ(hook.name(), "reflexion");
  agent::RunInfo run{"run-1", "Edit main.go", nullptr, ""};
  agent::RunOutcome outcome = Failed();
  outcome.run = &run;
  outcome.attempt = "called write with the whole file";
  MEND_ASSERT_OK(hook.AfterRun(outcome));
  ASSERT_EQ(enqueuer.requests.size(), 1u);
  EXPECT_EQ(enqueuer.requests[0],
            (lessonq::LessonRequest{"Edit main.go", "called write with the whole file",
                                    "FAILED_PRECONDITION: run reached max_steps (8) (detail "
                                    "MEND_RUN_MAX_STEPS)",
                                    "error", "run-1", /*traceparent=*/""}));
}

TEST(ReflexionHookTest, TheJobRecordsTheRunsProvider) {
  FakeEnqueuer enqueuer;
  ReflexionHook hook(TriggerOptions{}, enqueuer,
                     LessonProvider{"openai", "http://127.0.0.1:11434/v1", "llama3"});
  agent::RunOutcome outcome = Failed();
  MEND_ASSERT_OK(hook.AfterRun(outcome));
  ASSERT_EQ(enqueuer.requests.size(), 1u);
  EXPECT_EQ(enqueuer.requests[0].provider, "openai");
  EXPECT_EQ(enqueuer.requests[0].base_url, "http://127.0.0.1:11434/v1");
  EXPECT_EQ(enqueuer.requests[0].model, "llama3");
}

TEST(ReflexionHookTest, NoTriggerNoEnqueue) {
  FakeEnqueuer enqueuer;
  ReflexionHook hook(TriggerOptions{}, enqueuer);
  agent::RunOutcome outcome;
  outcome.output = "done";
  MEND_ASSERT_OK(hook.AfterRun(outcome));
  TriggerOptions off;
  off.enabled = false;
  ReflexionHook disabled(off, enqueuer);
  agent::RunOutcome failed = Failed();
  MEND_ASSERT_OK(disabled.AfterRun(failed));
  EXPECT_THAT(enqueuer.requests, IsEmpty());
}

TEST(ReflexionHookTest, EnqueueErrorIsReturned) {
  FakeEnqueuer enqueuer;
  enqueuer.error = ResourceExhaustedError("disk full");
  ReflexionHook hook(TriggerOptions{}, enqueuer);
  agent::RunOutcome outcome = Failed();
  EXPECT_THAT(hook.AfterRun(outcome), StatusIs(StatusCode::kResourceExhausted));
  ASSERT_EQ(enqueuer.requests.size(), 1u);
  EXPECT_EQ(enqueuer.requests[0].task, "");  // no RunInfo: empty task
}

}  // namespace
}  // namespace mend::reflexion
