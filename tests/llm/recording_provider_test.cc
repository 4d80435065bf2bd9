#include "mend/llm/recording_provider.h"

#include <errno.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <deque>
#include <filesystem>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/memory_file_system.h"
#include "mend/llm/scripted_provider.h"
#include "tests/llm/llm_test_util.h"
#include "tests/support/status_matchers.h"

namespace mend::llm {
namespace {

using ::mend::testing::FakeResponse;
using ::mend::testing::StatusIs;
using ::testing::HasSubstr;

// Answers with a fixed queue of results, one per call, and remembers nothing else: a stand-in for
// a real model that can return any status.
class QueuedProvider final : public LlmProvider {
 public:
  explicit QueuedProvider(std::vector<Result<Completion>> results)
      : results_(results.begin(), results.end()) {}
  Result<Completion> Complete(const CompletionRequest&) override {
    std::lock_guard<std::mutex> lock(mu_);
    if (results_.empty()) return InternalError("queue empty");
    Result<Completion> r = results_.front();
    results_.pop_front();
    return r;
  }
  std::string_view name() const override { return "queued"; }

 private:
  std::mutex mu_;
  std::deque<Result<Completion>> results_;
};

Completion Answer(std::string text, std::vector<ToolCall> calls, int64_t in, int64_t out) {
  Completion c;
  c.text = std::move(text);
  c.tool_calls = std::move(calls);
  c.finish_reason = c.tool_calls.empty() ? FinishReason::kStop : FinishReason::kToolCalls;
  c.usage = {in, out};
  c.usage_reported = true;
  return c;
}

// A request in a conversation that has had `turns` assistant answers.
CompletionRequest AtTurn(size_t turns) {
  CompletionRequest r = test::UserAsks("task");
  for (size_t i = 0; i < turns; ++i) r.messages.push_back(Message::Assistant("turn"));
  return r;
}

// Everything a cassette promises to keep of a result.
void ExpectSameResult(const Result<Completion>& replayed, const Result<Completion>& recorded,
                      const std::string& where) {
  SCOPED_TRACE(where);
  ASSERT_EQ(replayed.ok(), recorded.ok()) << replayed.status() << " vs " << recorded.status();
  if (!recorded.ok()) {
    const Status& a = replayed.status();
    const Status& b = recorded.status();
    EXPECT_EQ(a.code(), b.code());
    EXPECT_EQ(a.message(), b.message());
    EXPECT_EQ(a.retry_after(), b.retry_after());
    EXPECT_EQ(a.detail_code(), b.detail_code());
    EXPECT_EQ(ClassOf(a), ClassOf(b));
    return;
  }
  EXPECT_EQ(replayed->text, recorded->text);
  ASSERT_EQ(replayed->tool_calls.size(), recorded->tool_calls.size());
  for (size_t i = 0; i < recorded->tool_calls.size(); ++i) {
    EXPECT_EQ(replayed->tool_calls[i].id, recorded->tool_calls[i].id);
    EXPECT_EQ(replayed->tool_calls[i].name, recorded->tool_calls[i].name);
    EXPECT_EQ(replayed->tool_calls[i].arguments, recorded->tool_calls[i].arguments);
  }
  EXPECT_EQ(replayed->finish_reason, recorded->finish_reason);
  EXPECT_EQ(replayed->usage.input_tokens, recorded->usage.input_tokens);
  EXPECT_EQ(replayed->usage.output_tokens, recorded->usage.output_tokens);
}

// A conversation with retries: turn 0 calls a tool, turn 1 fails twice before its answer, turn 2
// fails with a class override and a cancellation, then answers.
std::vector<Result<Completion>> Conversation() {
  return {
      Answer("", {{"call_7", "read_file", R"({"path":"a.txt"})"}, {"call_8", "odd", "not json{"}},
             120, 30),
      UnavailableError("upstream reset").WithDetailCode("http_503"),
      ResourceExhaustedError("slow down", std::chrono::milliseconds(2000))
          .WithDetailCode("http_429"),
      Answer("line one\nline \"two\" \xC3\xA9", {}, 150, 12),
      ResourceExhaustedError("no credit")
          .WithDetailCode("insufficient_quota")
          .WithClass(ErrorClass::kPermanent),
      CancelledError("request cancelled"),
      Answer("done", {}, 0, 0),
  };
}
constexpr size_t kTurnOf[] = {0, 1, 1, 1, 2, 2, 2};

TEST(RecordingProviderTest, ACassetteReplaysTheSameCompletionsAndErrorsInOrder) {
  const std::vector<Result<Completion>> conversation = Conversation();
  MemoryFileSystem fs;
  QueuedProvider inner(conversation);
  RecordingProvider recorder(inner, fs, "/cassette.json");
  EXPECT_EQ(recorder.name(), "queued");
  for (size_t i = 0; i < conversation.size(); ++i) {
    ExpectSameResult(recorder.Complete(AtTurn(kTurnOf[i])), conversation[i],
                     "recording " + std::to_string(i));
  }
  MEND_EXPECT_OK(recorder.last_write_status());
  EXPECT_EQ(recorder.steps_recorded(), conversation.size());

  auto replay = ScriptedProvider::FromFile(fs, "/cassette.json");
  MEND_ASSERT_OK(replay);
  for (size_t i = 0; i < conversation.size(); ++i) {
    ExpectSameResult((*replay)->Complete(AtTurn(kTurnOf[i])), conversation[i],
                     "replay " + std::to_string(i));
  }
  EXPECT_EQ((*replay)->remaining(), 0u);
  EXPECT_THAT((*replay)->Complete(AtTurn(3)), StatusIs(StatusCode::kFailedPrecondition));
}

TEST(RecordingProviderTest, ACassetteContinuesAConversationInANewProcess) {
  const std::vector<Result<Completion>> conversation = Conversation();
  MemoryFileSystem fs;
  RecordingProvider recorder(std::make_unique<QueuedProvider>(conversation), fs, "/c.json");
  for (size_t i = 0; i < conversation.size(); ++i) (void)recorder.Complete(AtTurn(kTurnOf[i]));

  // A process that resumes the conversation at turn 2 gets turn 2's answer: neither turn 1's
  // steps nor turn 2's errors, which the recording process met before the run was resumed.
  auto replay = ScriptedProvider::FromFile(fs, "/c.json");
  MEND_ASSERT_OK(replay);
  ExpectSameResult((*replay)->Complete(AtTurn(2)), conversation.back(), "resumed");
  EXPECT_EQ((*replay)->remaining(), 0u);
}

TEST(RecordingProviderTest, ARecordingThatResumesAConversationRecordsItsHistoryFirst) {
  // The recording process picks a conversation up at turn 2: its first request carries two
  // answers of an earlier process.
  CompletionRequest resumed = test::UserAsks("task");
  resumed.messages.push_back(Message::Assistant("", {{"c1", "look", R"({"at":"a"})"}}));
  resumed.messages.push_back(Message::ToolResult("c1", "look", "seen a"));
  resumed.messages.push_back(Message::Assistant("thinking", {{"c2", "look", "{}"}}));
  resumed.messages.push_back(Message::ToolResult("c2", "look", "seen b"));
  MemoryFileSystem fs;
  QueuedProvider inner({UnavailableError("blip"), Answer("done", {}, 9, 2)});
  RecordingProvider recorder(inner, fs, "/c.json");
  EXPECT_THAT(recorder.Complete(resumed), StatusIs(StatusCode::kUnavailable));
  MEND_ASSERT_OK(recorder.Complete(resumed));
  EXPECT_EQ(recorder.steps_recorded(), 4u);

  // Replaying the resumption in a new process gets the recorded answer, not the history; the
  // error before it was an attempt of the recording process, which a new process does not repeat
  // (docs/scripted_provider_format.md).
  auto replay = ScriptedProvider::FromFile(fs, "/c.json");
  MEND_ASSERT_OK(replay);
  Result<Completion> done = (*replay)->Complete(resumed);
  MEND_ASSERT_OK(done);
  EXPECT_EQ(done->text, "done");

  // Replaying the conversation from its start gets the history's answers first.
  auto from_start = ScriptedProvider::FromFile(fs, "/c.json");
  MEND_ASSERT_OK(from_start);
  Result<Completion> first = (*from_start)->Complete(AtTurn(0));
  MEND_ASSERT_OK(first);
  ASSERT_EQ(first->tool_calls.size(), 1u);
  EXPECT_EQ(first->tool_calls[0].id, "c1");
  EXPECT_EQ(first->tool_calls[0].arguments, R"({"at":"a"})");
  Result<Completion> second = (*from_start)->Complete(AtTurn(1));
  MEND_ASSERT_OK(second);
  EXPECT_EQ(second->text, "thinking");
  EXPECT_EQ(second->usage.input_tokens, 0);
}

TEST(RecordingProviderTest, UnnamedCodesAreRecordedAsInternalWithTheirClass) {
  MemoryFileSystem fs;
  QueuedProvider inner({AbortedError("lost lease"), OutOfRangeError("past the end")});
  RecordingProvider recorder(inner, fs, "/c.json");
  (void)recorder.Complete(AtTurn(0));
  (void)recorder.Complete(AtTurn(0));
  auto replay = ScriptedProvider::FromFile(fs, "/c.json");
  MEND_ASSERT_OK(replay);
  Status aborted = (*replay)->Complete(AtTurn(0)).status();
  EXPECT_THAT(aborted, StatusIs(StatusCode::kInternal, "lost lease"));
  EXPECT_EQ(ClassOf(aborted), ClassOf(AbortedError("x")));
  Status range = (*replay)->Complete(AtTurn(0)).status();
  EXPECT_THAT(range, StatusIs(StatusCode::kInternal, "past the end"));
  EXPECT_EQ(ClassOf(range), ErrorClass::kPermanent);
}

TEST(RecordingProviderTest, TheCassetteIsWrittenAfterEveryResponseInTheScriptFormat) {
  MemoryFileSystem fs;
  QueuedProvider inner({Answer("hi", {{"c1", "look", R"({"q":1})"}}, 3, 4),
                        ResourceExhaustedError("wait", std::chrono::milliseconds(1500))});
  RecordingProvider recorder(inner, fs, "/c.json");
  EXPECT_FALSE(fs.Exists("/c.json"));  // nothing is written before the first response
  (void)recorder.Complete(AtTurn(0));
  auto one = ReadFileToString(fs, "/c.json");
  MEND_ASSERT_OK(one);
  EXPECT_EQ(nlohmann::json::parse(*one), nlohmann::json::parse(R"({"steps": [
      {"text": "hi", "tool_calls": [{"id": "c1", "name": "look", "arguments": "{\"q\":1}"}],
       "input_tokens": 3, "output_tokens": 4}]})"));
  (void)recorder.Complete(AtTurn(1));
  auto two = ReadFileToString(fs, "/c.json");
  MEND_ASSERT_OK(two);
  EXPECT_EQ(nlohmann::json::parse(*two)["steps"][1], nlohmann::json::parse(R"(
      {"error": {"code": "resource_exhausted", "message": "wait", "retry_after_ms": 1500}})"));
  auto names = fs.List("/");
  MEND_ASSERT_OK(names);
  EXPECT_EQ(*names, std::vector<std::string>{"c.json"});  // no temporary left behind
}

TEST(RecordingProviderTest, AFailedWriteKeepsThePreviousCassetteAndTheRunGoesOn) {
  MemoryFileSystem memory;
  FaultInjectionFileSystem fs(&memory);
  QueuedProvider inner({Answer("one", {}, 1, 1), Answer("two", {}, 1, 1), UnavailableError("down"),
                        Answer("three", {}, 1, 1)});
  RecordingProvider recorder(inner, fs, "/c.json");
  MEND_ASSERT_OK(recorder.Complete(AtTurn(0)));
  auto before = ReadFileToString(memory, "/c.json");
  MEND_ASSERT_OK(before);

  fs.FailNext(FsOp::kSync, ENOSPC);
  Result<Completion> two = recorder.Complete(AtTurn(1));
  MEND_ASSERT_OK(two);
  EXPECT_EQ(two->text, "two");
  EXPECT_THAT(recorder.last_write_status(),
              StatusIs(StatusCode::kResourceExhausted, HasSubstr("recording /c.json")));
  EXPECT_EQ(ReadFileToString(memory, "/c.json").value(), *before);

  fs.FailNext(FsOp::kRename, EIO);
  EXPECT_THAT(recorder.Complete(AtTurn(2)), StatusIs(StatusCode::kUnavailable, "down"));
  EXPECT_THAT(recorder.last_write_status(), StatusIs(StatusCode::kInternal));
  EXPECT_EQ(ReadFileToString(memory, "/c.json").value(), *before);

  // The next write carries every step, the ones whose writes failed included.
  MEND_ASSERT_OK(recorder.Complete(AtTurn(2)));
  MEND_EXPECT_OK(recorder.last_write_status());
  auto replay = ScriptedProvider::FromFile(memory, "/c.json");
  MEND_ASSERT_OK(replay);
  EXPECT_EQ((*replay)->remaining(), 4u);
}

TEST(RecordingProviderTest, AFailedFirstWriteLeavesNoFile) {
  MemoryFileSystem memory;
  FaultInjectionFileSystem fs(&memory);
  QueuedProvider inner({Answer("one", {}, 1, 1)});
  RecordingProvider recorder(inner, fs, "/c.json");
  fs.FailNext(FsOp::kOpen, EACCES);
  MEND_ASSERT_OK(recorder.Complete(AtTurn(0)));
  EXPECT_THAT(recorder.last_write_status(), StatusIs(StatusCode::kPermissionDenied));
  EXPECT_FALSE(memory.Exists("/c.json"));
}

TEST(RecordingProviderTest, ConcurrentResponsesAreAllRecorded) {
  constexpr int kThreads = 4;
  constexpr int kEach = 25;
  std::vector<Result<Completion>> answers;
  for (int i = 0; i < kThreads * kEach; ++i) answers.push_back(Answer("a", {}, i, 1));
  MemoryFileSystem fs;
  QueuedProvider inner(answers);
  RecordingProvider recorder(inner, fs, "/c.json");
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < kEach; ++i) (void)recorder.Complete(AtTurn(0));
    });
  }
  for (std::thread& t : threads) t.join();
  auto replay = ScriptedProvider::FromFile(fs, "/c.json");
  MEND_ASSERT_OK(replay);
  EXPECT_EQ((*replay)->remaining(), static_cast<size_t>(kThreads * kEach));
}

TEST(RecordingProviderTest, TheCassetteIsPrivateToItsUser) {
  std::string dir = JoinPath(::testing::TempDir(), "mend_cassette_XXXXXX");
  ASSERT_NE(::mkdtemp(dir.data()), nullptr);
  const std::string path = JoinPath(dir, "cassette.json");
  QueuedProvider inner({Answer("one", {}, 1, 1), Answer("two", {}, 1, 1)});
  RecordingProvider recorder(inner, *PosixFileSystem::Default(), path);
  MEND_ASSERT_OK(recorder.Complete(AtTurn(0)));
  MEND_ASSERT_OK(recorder.Complete(AtTurn(1)));
  MEND_EXPECT_OK(recorder.last_write_status());
  EXPECT_EQ(std::filesystem::status(path).permissions(),
            std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir),
                          std::filesystem::directory_iterator()),
            1);
  std::filesystem::remove_all(dir);
}

// The real OpenAI-compatible provider against the fake server: what the API returns is what the
// cassette holds, and the key it sent is not in it.
class RecordingOpenAiTest : public test::HttpProviderTest {
 protected:
  RecordingOpenAiTest() : HttpProviderTest("openai", "gpt-4o-mini") {}
};

TEST_F(RecordingOpenAiTest, RecordsToolCallsUsageAndHttpErrorsAsTheApiReturnsThem) {
  FakeResponse calls;
  calls.tool_calls = {{"call_abc", "read_file", R"({"path":"notes.txt"})"},
                      {"call_def", "list_dir", "{}"}};
  calls.input_tokens = 321;
  calls.output_tokens = 45;
  server_->Enqueue(calls);
  FakeResponse limited;
  limited.status = 429;
  limited.retry_after_seconds = 3;
  server_->Enqueue(limited);
  FakeResponse quota;
  quota.status = 429;
  quota.error_type = "insufficient_quota";
  server_->Enqueue(quota);
  FakeResponse answer;
  answer.text = "The notes are empty.";
  answer.input_tokens = 400;
  answer.output_tokens = 7;
  server_->Enqueue(answer);

  MemoryFileSystem fs;
  RecordingProvider recorder(*provider_, fs, "/c.json");
  EXPECT_EQ(recorder.name(), "openai");
  std::vector<Result<Completion>> seen;
  // The request carries a key-like string too; requests are never recorded.
  CompletionRequest first = test::UserAsks(std::string("my key is ") + test::kSecretKey);
  seen.push_back(recorder.Complete(first));
  for (int i = 0; i < 3; ++i) seen.push_back(recorder.Complete(AtTurn(1)));
  MEND_ASSERT_OK(seen[0]);
  ASSERT_EQ(seen[0]->tool_calls.size(), 2u);
  EXPECT_THAT(seen[1], StatusIs(StatusCode::kResourceExhausted));
  EXPECT_EQ(seen[2].status().detail_code(), "insufficient_quota");
  MEND_ASSERT_OK(seen[3]);
  MEND_EXPECT_OK(recorder.last_write_status());

  auto text = ReadFileToString(fs, "/c.json");
  MEND_ASSERT_OK(text);
  EXPECT_EQ(text->find(test::kSecretKey), std::string::npos) << *text;
  EXPECT_EQ(text->find("Bearer"), std::string::npos) << *text;
  const nlohmann::json steps = nlohmann::json::parse(*text)["steps"];
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0], nlohmann::json::parse(R"({"text": "", "tool_calls": [
      {"id": "call_abc", "name": "read_file", "arguments": "{\"path\":\"notes.txt\"}"},
      {"id": "call_def", "name": "list_dir", "arguments": "{}"}],
      "input_tokens": 321, "output_tokens": 45})"));
  EXPECT_EQ(steps[1]["error"]["code"], "resource_exhausted");
  EXPECT_EQ(steps[1]["error"]["retry_after_ms"], 3000);
  EXPECT_EQ(steps[1]["error"]["detail_code"], "http_429");
  EXPECT_EQ(steps[2]["error"]["class"], "permanent");
  EXPECT_EQ(steps[3]["text"], "The notes are empty.");

  auto replay = ScriptedProvider::FromFile(fs, "/c.json");
  MEND_ASSERT_OK(replay);
  ExpectSameResult((*replay)->Complete(first), seen[0], "replay 0");
  for (size_t i = 1; i < seen.size(); ++i) {
    ExpectSameResult((*replay)->Complete(AtTurn(1)), seen[i], "replay " + std::to_string(i));
  }
}

}  // namespace
}  // namespace mend::llm
