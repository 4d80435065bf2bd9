// Every attempt on a run is spans of one trace (docs/observe.md).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "mend/obs/span_store.h"
#include "mend/obs/span_writer.h"
#include "mend/obs/trace.h"
#include "tests/agent/agent_test_support.h"
#include "tests/obs/fault_vfs.h"
#include "tests/support/status_matchers.h"

namespace mend::agent::testing {
namespace {

using ::testing::ElementsAre;
using ::testing::SizeIs;

// The value of `r`; a failed expectation (and a default value) when it is an error.
template <typename T>
T Must(Result<T> r) {
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? std::move(r).value() : T{};
}

std::string Str(const obs::SpanData& span, std::string_view key) {
  const obs::AttributeValue* v = obs::FindAttribute(span.attributes, key);
  if (v == nullptr) return "<none>";
  if (const auto* s = std::get_if<std::string>(v)) return *s;
  if (const auto* i = std::get_if<int64_t>(v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(v)) return *b ? "true" : "false";
  return "<other>";
}

class DenyHook final : public PreToolHook {
 public:
  explicit DenyHook(PreToolDecision d) : decision_(std::move(d)) {}
  std::string_view name() const override { return "deny"; }
  Result<PreToolDecision> BeforeTool(const ToolCallInfo&) override {
    obs::AddActiveSpanEvent("heal.action", {{"heal.action", std::string("deny")}});
    return decision_;
  }

 private:
  PreToolDecision decision_;
};

class ReplaceHook final : public PostToolHook {
 public:
  std::string_view name() const override { return "replace"; }
  Result<PostToolAction> AfterTool(const ToolCallInfo&, const ToolResult&) override {
    PostToolAction a;
    a.replacement = ToolResult::Ok("a shorter result");
    return a;
  }
};

struct Traced {
  Harness h;
  std::shared_ptr<obs::MemorySpanProcessor> spans = std::make_shared<obs::MemorySpanProcessor>();
  obs::Tracer tracer{obs::TracerOptions{&h.clock, &h.random}};
  TurnProvider model;
  std::unique_ptr<Agent> agent;

  explicit Traced(std::vector<Result<llm::Completion>> turns) : model(std::move(turns)) {
    tracer.AddProcessor(spans);
    AgentOptions options = h.Options(model);
    options.tracer = &tracer;
    options.run_model.provider = "scripted";
    options.run_model.model = "m1";
    options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
    agent = std::move(Agent::Create(Harness::Spec(), options)).value();
  }

  std::vector<obs::SpanData> Named(std::string_view prefix) const {
    std::vector<obs::SpanData> out;
    for (const obs::SpanData& s : spans->spans()) {
      if (s.name.rfind(prefix, 0) == 0) out.push_back(s);
    }
    return out;
  }
};

TEST(AgentTraceTest, APlainRunIsOneTraceOfAttemptTurnsAndTools) {
  Traced t({Calls({Call("c1", "touch", "{\"secret\":1}")}), Answer("done", 10, 5, 0.5)});
  RunResult r = Must(t.agent->Send("do it", {}));
  ASSERT_EQ(r.status, store::RunStatus::kCompleted);

  std::vector<obs::SpanData> attempts = t.Named("invoke_agent");
  ASSERT_THAT(attempts, SizeIs(1));
  const obs::SpanData& run = attempts[0];
  EXPECT_EQ(run.name, "invoke_agent helper");
  EXPECT_EQ(run.parent_span_id, "");
  EXPECT_EQ(run.run_id, r.run_id);
  EXPECT_EQ(r.trace_id, run.context.trace_id);
  EXPECT_EQ(run.status, obs::SpanStatus::kOk);
  EXPECT_EQ(Str(run, "mend.attempt"), "send");
  EXPECT_EQ(Str(run, "mend.run.status"), "completed");
  EXPECT_EQ(Str(run, "gen_ai.agent.name"), "helper");
  EXPECT_EQ(Str(run, "gen_ai.provider.name"), "scripted");
  EXPECT_EQ(Str(run, "mend.step"), "2");

  std::vector<obs::SpanData> chats = t.Named("chat");
  ASSERT_THAT(chats, SizeIs(2));
  for (const obs::SpanData& chat : chats) {
    EXPECT_EQ(chat.parent_span_id, run.context.span_id);
    EXPECT_EQ(chat.context.trace_id, run.context.trace_id);
    EXPECT_EQ(chat.kind, obs::SpanKind::kClient);
    EXPECT_EQ(Str(chat, "gen_ai.operation.name"), "chat");
    EXPECT_EQ(Str(chat, "gen_ai.request.model"), "m1");
  }
  EXPECT_EQ(Str(chats[1], "gen_ai.usage.input_tokens"), "10");
  EXPECT_EQ(Str(chats[1], "gen_ai.usage.output_tokens"), "5");
  EXPECT_EQ(Str(chats[1], "mend.step"), "2");
  EXPECT_EQ(std::get<double>(*obs::FindAttribute(chats[1].attributes, "mend.cost_usd")), 0.5);
  EXPECT_EQ(std::get<std::vector<std::string>>(
                *obs::FindAttribute(chats[1].attributes, "gen_ai.response.finish_reasons")),
            std::vector<std::string>{"stop"});
  // The provider request carried the chat span as its traceparent.
  EXPECT_EQ(t.model.requests().at(1).traceparent, obs::FormatTraceparent(chats[1].context));

  std::vector<obs::SpanData> tools = t.Named("execute_tool");
  ASSERT_THAT(tools, SizeIs(1));
  EXPECT_EQ(tools[0].name, "execute_tool touch");
  EXPECT_EQ(tools[0].parent_span_id, run.context.span_id);
  EXPECT_EQ(Str(tools[0], "gen_ai.tool.name"), "touch");
  EXPECT_EQ(Str(tools[0], "gen_ai.tool.call.id"), "c1");
  EXPECT_EQ(tools[0].status, obs::SpanStatus::kOk);
  // Content is not captured by default.
  EXPECT_EQ(obs::FindAttribute(tools[0].attributes, "gen_ai.tool.call.arguments"), nullptr);
  EXPECT_EQ(obs::FindAttribute(chats[1].attributes, "gen_ai.output.messages"), nullptr);
}

TEST(AgentTraceTest, DeniedCallIsAnErrorSpanWithTheHealEvent) {
  Traced t({Calls({Call("c1", "touch", "{}")}), Answer("done")});
  t.agent->AddPreToolHook(std::make_shared<DenyHook>(PreToolDecision::Deny("not here")));
  RunResult r = Must(t.agent->Send("do it", {}));
  std::vector<obs::SpanData> tools = t.Named("execute_tool");
  ASSERT_THAT(tools, SizeIs(1));
  EXPECT_EQ(tools[0].status, obs::SpanStatus::kError);
  EXPECT_EQ(tools[0].status_message, "not here");
  EXPECT_EQ(Str(tools[0], "error.type"), "denied");
  EXPECT_EQ(Str(tools[0], "mend.tool.hook_decision"), "denied");
  ASSERT_THAT(tools[0].events, SizeIs(1));
  EXPECT_EQ(tools[0].events[0].name, "heal.action");
}

TEST(AgentTraceTest, ReplacedResultIsMarked) {
  Traced t({Calls({Call("c1", "touch", "{}")}), Answer("done")});
  t.agent->AddPostToolHook(std::make_shared<ReplaceHook>());
  RunResult r = Must(t.agent->Send("do it", {}));
  std::vector<obs::SpanData> tools = t.Named("execute_tool");
  ASSERT_THAT(tools, SizeIs(1));
  EXPECT_EQ(Str(tools[0], "mend.tool.replaced_by_hook"), "true");
}

TEST(AgentTraceTest, AStoppedRunEndsTheToolSpanWithTheStopCode) {
  Traced t({Calls({Call("c1", "touch", "{}")}), Answer("done")});
  t.agent->AddPreToolHook(
      std::make_shared<DenyHook>(PreToolDecision::StopRun("no progress", "MEND_RUN_NO_PROGRESS")));
  RunResult r = Must(t.agent->Send("do it", {}));
  ASSERT_EQ(r.status, store::RunStatus::kFailed);
  std::vector<obs::SpanData> tools = t.Named("execute_tool");
  ASSERT_THAT(tools, SizeIs(1));
  EXPECT_EQ(tools[0].status, obs::SpanStatus::kError);
  EXPECT_EQ(Str(tools[0], "error.type"), "MEND_RUN_NO_PROGRESS");
  std::vector<obs::SpanData> attempts = t.Named("invoke_agent");
  ASSERT_THAT(attempts, SizeIs(1));
  EXPECT_EQ(attempts[0].status, obs::SpanStatus::kError);
  EXPECT_EQ(Str(attempts[0], "error.type"), "MEND_RUN_NO_PROGRESS");
  EXPECT_EQ(Str(attempts[0], "mend.run.status"), "failed");
}

TEST(AgentTraceTest, AResumeAddsAnAttemptToTheSameTrace) {
  // The second turn is missing at first: the run fails at its model turn, then resumes.
  Traced t({Calls({Call("c1", "touch", "{}")}), Result<llm::Completion>(UnavailableError("down"))});
  RunResult failed = Must(t.agent->Send("do it", {}));
  ASSERT_EQ(failed.status, store::RunStatus::kFailed);
  t.model.SetTurn(1, Answer("done"));
  RunResult resumed = Must(t.agent->Resume(failed.run_id));
  ASSERT_EQ(resumed.status, store::RunStatus::kCompleted);
  EXPECT_EQ(resumed.trace_id, failed.trace_id);

  std::vector<obs::SpanData> attempts = t.Named("invoke_agent");
  ASSERT_THAT(attempts, SizeIs(2));
  EXPECT_EQ(Str(attempts[0], "mend.attempt"), "send");
  EXPECT_EQ(Str(attempts[1], "mend.attempt"), "resume");
  EXPECT_EQ(attempts[1].context.trace_id, attempts[0].context.trace_id);
  EXPECT_EQ(attempts[1].parent_span_id, "");
  std::vector<obs::SpanData> chats = t.Named("chat");
  ASSERT_THAT(chats, SizeIs(3));
  EXPECT_EQ(chats[1].status, obs::SpanStatus::kError);  // the failed turn
  EXPECT_EQ(chats[1].parent_span_id, attempts[0].context.span_id);
  EXPECT_EQ(chats[2].parent_span_id, attempts[1].context.span_id);
}

TEST(AgentTraceTest, ACallerTraceparentMakesTheRunItsChild) {
  Traced t({Answer("done")});
  SendOptions options;
  options.trace_parent = obs::SpanContext{"4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"};
  RunResult r = Must(t.agent->Send("do it", options));
  std::vector<obs::SpanData> attempts = t.Named("invoke_agent");
  ASSERT_THAT(attempts, SizeIs(1));
  EXPECT_EQ(attempts[0].context.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
  EXPECT_EQ(attempts[0].parent_span_id, "00f067aa0ba902b7");
  EXPECT_EQ(r.trace_id, "4bf92f3577b34da6a3ce929d0e0e4736");
}

TEST(AgentTraceTest, ForksJoinTheTraceAndLinkTheRunTheyCameFrom) {
  Traced t({Calls({Call("c1", "touch", "{}")}), Answer("done"), Answer("again")});
  RunResult r = Must(t.agent->Send("do it", {}));
  std::string fork = Must(t.agent->Fork(r.run_id, 2));
  RunResult forked = Must(t.agent->Resume(fork));
  std::vector<obs::SpanData> attempts = t.Named("invoke_agent");
  ASSERT_THAT(attempts, SizeIs(2));
  const obs::SpanData& f = attempts[1];
  EXPECT_EQ(f.run_id, fork);
  EXPECT_EQ(f.context.trace_id, attempts[0].context.trace_id);
  EXPECT_EQ(Str(f, "mend.fork.parent_run_id"), r.run_id);
  ASSERT_THAT(f.links, SizeIs(1));
  EXPECT_EQ(f.links[0].context.span_id, attempts[0].context.span_id);
}

TEST(AgentTraceTest, CapturedContentIsRedactedToo) {
  Harness h;
  TurnProvider model{{Calls({Call("c1", "touch", "{\"key\":\"sk-live-123\"}")}),
                      Answer("the key is sk-live-123")}};
  auto spans = std::make_shared<obs::MemorySpanProcessor>();
  obs::Tracer tracer(obs::TracerOptions{&h.clock, &h.random, /*capture_content=*/true});
  tracer.AddProcessor(spans);
  tracer.AddRedactor("sk-live-123");
  AgentOptions options = h.Options(model);
  options.tracer = &tracer;
  options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
  auto agent = std::move(Agent::Create(Harness::Spec(), options)).value();
  RunResult r = Must(agent->Send("use the key", {}));
  ASSERT_EQ(r.status, store::RunStatus::kCompleted);
  int captured = 0;
  for (const obs::SpanData& s : spans->spans()) {
    for (const obs::Attribute& a : s.attributes) {
      const auto* text = std::get_if<std::string>(&a.value);
      if (text == nullptr) continue;
      EXPECT_EQ(text->find("sk-live-123"), std::string::npos) << s.name << " " << a.key;
      if (a.key == "gen_ai.tool.call.arguments" || a.key == "gen_ai.output.messages") {
        captured += text->find("[REDACTED]") != std::string::npos;
      }
    }
  }
  EXPECT_EQ(captured, 2);  // the arguments and the answer were captured, redacted
}

TEST(AgentTraceTest, RunsCompleteWhenObserveDbWritesFail) {
  obs::testing::FaultVfs& vfs = obs::testing::RegisterFaultVfs();
  vfs.Reset();
  Harness h(StoreKind::kSqlite);
  auto store = obs::SpanStore::Open(h.dir + "/observe.db", obs::testing::kFaultVfsName);
  ASSERT_TRUE(store.ok()) << store.status();
  vfs.fail_writes = true;
  obs::BatchSpanWriterOptions writer_options;
  writer_options.clock = &h.clock;
  auto writer = std::make_shared<obs::BatchSpanWriter>(std::move(store).value(), writer_options);
  obs::Tracer tracer(obs::TracerOptions{&h.clock, &h.random});
  tracer.AddProcessor(writer);
  TurnProvider model{{Calls({Call("c1", "touch", "{}")}), Answer("done")}};
  AgentOptions options = h.Options(model);
  options.tracer = &tracer;
  options.extra_tools = {std::make_shared<RecordingTool>("touch", h.log)};
  auto agent = std::move(Agent::Create(Harness::Spec(), options)).value();
  RunResult r = Must(agent->Send("do it", {}));
  EXPECT_EQ(r.status, store::RunStatus::kCompleted);
  EXPECT_EQ(r.output, "done");
  writer->Flush(std::chrono::seconds(20)).IgnoreError();
  EXPECT_GT(writer->dropped(), 0u);  // the spans were lost and counted, the run was not
  EXPECT_GT(writer->write_errors(), 0u);
  vfs.Reset();
  writer->Shutdown(std::chrono::seconds(20));
}

TEST(AgentTraceTest, WithoutATracerNothingIsTracedAndRunsWork) {
  Harness h;
  TurnProvider model{{Answer("done")}};
  auto agent = std::move(Agent::Create(Harness::Spec(), h.Options(model))).value();
  RunResult r = Must(agent->Send("do it", {}));
  EXPECT_EQ(r.status, store::RunStatus::kCompleted);
  EXPECT_EQ(r.trace_id, "");
  EXPECT_EQ(model.requests().at(0).traceparent, "");
}

}  // namespace
}  // namespace mend::agent::testing
