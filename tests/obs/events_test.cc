#include "mend/obs/events.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <limits>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/json.h"
#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/base/time_format.h"
#include "tests/support/status_matchers.h"

namespace mend::obs {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

Time At(std::string_view rfc3339) { return ParseRfc3339(rfc3339).value(); }

Event HealAction(std::string_view run, int64_t step) {
  Event e("heal.action");
  e.AddString("run", run).AddInt("step", step).AddString("tool", "edit_file");
  e.AddString("action", "hint").AddString("reason", "same error 3 times");
  return e;
}

// Splits file contents into lines, dropping the empty string after the final newline.
std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  size_t start = 0;
  for (size_t nl; (nl = text.find('\n', start)) != std::string::npos; start = nl + 1) {
    lines.push_back(text.substr(start, nl - start));
  }
  if (start < text.size()) lines.push_back(text.substr(start));
  return lines;
}

class ThrowingSink final : public EventSink {
 public:
  Status Write(const Event&) override { throw std::runtime_error("sink exploded"); }
};

class OpaqueThrowingSink final : public EventSink {
 public:
  Status Write(const Event&) override { throw 42; }
};

class FailingSink final : public EventSink {
 public:
  Status Write(const Event&) override { return UnavailableError("disk gone"); }
  Status Flush() override { return UnavailableError("disk still gone"); }
};

TEST(EventTest, FieldsKeepOrderAndReplaceDuplicates) {
  Event e("t");
  e.AddString("b", "x").AddInt("a", 1).AddBool("c", true).AddString("b", "y");
  e.AddDouble("d", 0.5).AddDouble("nan", std::numeric_limits<double>::quiet_NaN());
  e.AddJson("obj", R"({"k": [1, 2]})").AddJson("bad", "{not json");
  std::vector<std::string> keys;
  for (const EventField& f : e.fields()) keys.push_back(f.key);
  EXPECT_THAT(keys, ElementsAre("b", "a", "c", "d", "nan", "obj", "bad"));
  EXPECT_THAT(e.Find("b"), Optional(std::string_view("\"y\"")));
  EXPECT_THAT(e.Find("nan"), Optional(std::string_view("null")));
  EXPECT_THAT(e.Find("obj"), Optional(std::string_view(R"({"k":[1,2]})")));
  EXPECT_THAT(e.Find("bad"), Optional(std::string_view(R"("{not json")")));
  EXPECT_EQ(e.Find("missing"), std::nullopt);
}

TEST(EventTest, ReservedKeysAreIgnored) {
  Event e("t");
  e.AddString("type", "spoofed").AddString("time", "yesterday").AddInt("n", 1);
  ASSERT_EQ(e.fields().size(), 1u);
  EXPECT_EQ(e.fields()[0].key, "n");
}

TEST(EventTest, SerializesEnvelopeThenFields) {
  Event e = HealAction("r1", 3);
  e.AddString("quote", "a\"b\\c\n");
  e.set_time(At("2024-05-06T07:08:09.5Z"));
  EXPECT_EQ(EventToJson(e),
            R"({"type":"heal.action","time":"2024-05-06T07:08:09.5Z","run":"r1","step":3,)"
            R"("tool":"edit_file","action":"hint","reason":"same error 3 times",)"
            R"("quote":"a\"b\\c\n"})");
}

TEST(EventBusTest, FansOutToEverySinkStampedWithTheClock) {
  ManualClock clock(At("2030-01-02T03:04:05Z"));
  EventBus bus(clock);
  auto a = std::make_shared<MemorySink>();
  auto b = std::make_shared<MemorySink>();
  bus.Subscribe(a);
  bus.Subscribe(b);
  bus.Publish(HealAction("r1", 1));
  clock.Advance(std::chrono::seconds(2));
  bus.Publish(HealAction("r1", 2));
  for (const auto& sink : {a, b}) {
    const std::vector<Event> events = sink->events();
    ASSERT_EQ(events.size(), 2u);
    EXPECT_EQ(events[0].type(), "heal.action");
    EXPECT_EQ(events[0].time(), At("2030-01-02T03:04:05Z"));
    EXPECT_EQ(events[1].time(), At("2030-01-02T03:04:07Z"));
    EXPECT_THAT(events[1].Find("step"), Optional(std::string_view("2")));
  }
  EXPECT_EQ(bus.error_count(), 0u);
}

TEST(EventBusTest, FailingAndThrowingSinksDoNotStopOthers) {
  ManualClock clock;
  EventBus bus(clock);
  auto memory = std::make_shared<MemorySink>();
  bus.Subscribe(std::make_shared<ThrowingSink>());
  bus.Subscribe(std::make_shared<OpaqueThrowingSink>());
  bus.Subscribe(std::make_shared<FailingSink>());
  bus.Subscribe(memory);
  bus.Publish(Event("one"));
  bus.Publish(Event("two"));
  EXPECT_EQ(memory->size(), 2u);
  EXPECT_EQ(bus.error_count(), 6u);
  EXPECT_THAT(bus.last_error(), StatusIs(StatusCode::kUnavailable, HasSubstr("disk gone")));
  EXPECT_THAT(bus.Flush(), StatusIs(StatusCode::kUnavailable, HasSubstr("disk still gone")));
  EXPECT_EQ(bus.error_count(), 7u);
}

TEST(EventBusTest, ThrownExceptionIsReportedAsInternal) {
  ManualClock clock;
  EventBus bus(clock);
  bus.Subscribe(std::make_shared<ThrowingSink>());
  bus.Publish(Event("x"));
  EXPECT_THAT(bus.last_error(), StatusIs(StatusCode::kInternal, HasSubstr("sink exploded")));
}

TEST(EventBusTest, UnsubscribeStopsDelivery) {
  ManualClock clock;
  EventBus bus(clock);
  auto kept = std::make_shared<MemorySink>();
  auto removed = std::make_shared<MemorySink>();
  bus.Subscribe(kept);
  const SubscriptionId id = bus.Subscribe(removed);
  bus.Publish(Event("before"));
  MEND_ASSERT_OK(bus.Unsubscribe(id));
  bus.Publish(Event("after"));
  EXPECT_EQ(kept->size(), 2u);
  ASSERT_EQ(removed->size(), 1u);
  EXPECT_EQ(removed->events()[0].type(), "before");
  EXPECT_THAT(bus.Unsubscribe(id), StatusIs(StatusCode::kNotFound));
}

TEST(EventBusTest, RedactsSecretsInTypeKeysAndValues) {
  ManualClock clock;
  EventBus bus(clock);
  auto memory = std::make_shared<MemorySink>();
  bus.Subscribe(memory);
  const std::string key = "sk-live-0123456789";
  bus.AddRedactor(key);
  bus.AddRedactor("4242424242");
  bus.AddRedactor("pa\"ss\\word");
  bus.AddRedactor("");  // ignored: would otherwise match everywhere
  Event e("auth." + key);
  e.AddString("header", "Bearer " + key);
  e.AddInt(key + "_field", 1);
  e.AddJson("nested", R"({"k":[")" + key + R"("], ")" + key + R"(": 4242424242})");
  e.AddString("quoted", "x pa\"ss\\word y");
  e.AddString("plain", "nothing secret");
  bus.Publish(std::move(e));

  ASSERT_EQ(memory->size(), 1u);
  const std::string line = EventToJson(memory->events()[0]);
  EXPECT_THAT(line, Not(HasSubstr(key)));
  EXPECT_THAT(line, Not(HasSubstr("4242424242")));
  EXPECT_THAT(line, Not(HasSubstr("ss\\\\word")));
  Result<nlohmann::json> parsed = ParseJson(line);
  MEND_ASSERT_OK(parsed);
  const nlohmann::json& j = *parsed;
  EXPECT_EQ(j["type"], "auth.[REDACTED]");
  EXPECT_EQ(j["header"], "Bearer [REDACTED]");
  EXPECT_EQ(j["[REDACTED]_field"], 1);
  EXPECT_EQ(j["nested"]["k"][0], "[REDACTED]");
  EXPECT_EQ(j["nested"]["[REDACTED]"], "[REDACTED]");
  EXPECT_EQ(j["quoted"], "x [REDACTED] y");
  EXPECT_EQ(j["plain"], "nothing secret");
}

TEST(EventBusTest, LongerSecretIsRedactedWhole) {
  ManualClock clock;
  EventBus bus(clock);
  auto memory = std::make_shared<MemorySink>();
  bus.Subscribe(memory);
  bus.AddRedactor("abc");
  bus.AddRedactor("abcdef");
  bus.Publish(Event("x").AddString("v", "abcdef"));
  EXPECT_THAT(memory->events()[0].Find("v"), Optional(std::string_view("\"[REDACTED]\"")));
}

TEST(JsonlFileSinkTest, LinesParseBackWithFieldsAndRfc3339Time) {
  MemoryFileSystem fs;
  ManualClock clock(At("2031-07-08T09:10:11.25Z"));
  EventBus bus(clock);
  auto sink = JsonlFileSink::Open(fs, "home/events/events.jsonl");
  MEND_ASSERT_OK(sink);
  bus.Subscribe(std::move(sink).value());
  bus.Publish(HealAction("run-1", 4));
  clock.Advance(std::chrono::milliseconds(750));
  bus.Publish(Event("lessonq.job").AddString("outcome", "accepted"));

  Result<std::string> text = ReadFileToString(fs, "home/events/events.jsonl");
  MEND_ASSERT_OK(text);
  const std::vector<std::string> lines = Lines(*text);
  ASSERT_EQ(lines.size(), 2u);
  Result<nlohmann::json> first = ParseJson(lines[0]);
  Result<nlohmann::json> second = ParseJson(lines[1]);
  MEND_ASSERT_OK(first);
  MEND_ASSERT_OK(second);
  EXPECT_EQ((*first)["type"], "heal.action");
  EXPECT_EQ((*first)["run"], "run-1");
  EXPECT_EQ((*first)["step"], 4);
  EXPECT_EQ((*first)["tool"], "edit_file");
  EXPECT_EQ((*first)["action"], "hint");
  EXPECT_EQ((*first)["reason"], "same error 3 times");
  EXPECT_EQ((*first)["time"], "2031-07-08T09:10:11.25Z");
  Result<Time> second_time = ParseRfc3339((*second)["time"].get<std::string>());
  MEND_ASSERT_OK(second_time);
  EXPECT_EQ(*second_time, At("2031-07-08T09:10:12Z"));
  EXPECT_EQ((*second)["outcome"], "accepted");
  EXPECT_EQ(bus.error_count(), 0u);
}

TEST(JsonlFileSinkTest, ReopeningAppends) {
  MemoryFileSystem fs;
  for (int i = 0; i < 2; ++i) {
    auto sink = JsonlFileSink::Open(fs, "events.jsonl");
    MEND_ASSERT_OK(sink);
    MEND_ASSERT_OK((*sink)->Write(Event("e" + std::to_string(i))));
  }
  Result<std::string> text = ReadFileToString(fs, "events.jsonl");
  MEND_ASSERT_OK(text);
  EXPECT_EQ(Lines(*text).size(), 2u);
}

TEST(JsonlFileSinkTest, OnFlushSyncsOnlyWhenFlushed) {
  MemoryFileSystem fs;
  auto sink = JsonlFileSink::Open(fs, "events.jsonl", JsonlSync::kOnFlush);
  MEND_ASSERT_OK(sink);
  MEND_ASSERT_OK((*sink)->Write(Event("synced")));
  MEND_ASSERT_OK((*sink)->Flush());
  MEND_ASSERT_OK((*sink)->Write(Event("lost")));
  fs.DropUnsyncedData();
  Result<std::string> text = ReadFileToString(fs, "events.jsonl");
  MEND_ASSERT_OK(text);
  ASSERT_EQ(Lines(*text).size(), 1u);
  EXPECT_THAT(*text, HasSubstr("\"synced\""));
}

TEST(JsonlFileSinkTest, EveryEventSyncsEachLine) {
  MemoryFileSystem fs;
  auto sink = JsonlFileSink::Open(fs, "events.jsonl", JsonlSync::kEveryEvent);
  MEND_ASSERT_OK(sink);
  MEND_ASSERT_OK((*sink)->Write(Event("a")));
  MEND_ASSERT_OK((*sink)->Write(Event("b")));
  fs.DropUnsyncedData();
  Result<std::string> text = ReadFileToString(fs, "events.jsonl");
  MEND_ASSERT_OK(text);
  EXPECT_EQ(Lines(*text).size(), 2u);
}

TEST(JsonlFileSinkTest, TornWriteDoesNotSwallowTheNextLine) {
  MemoryFileSystem memory;
  FaultInjectionFileSystem fs(&memory);
  ManualClock clock;
  EventBus bus(clock);
  auto sink = JsonlFileSink::Open(fs, "events.jsonl");
  MEND_ASSERT_OK(sink);
  bus.Subscribe(std::move(sink).value());
  fs.SetTornWrites(true);
  fs.FailNext(FsOp::kWrite, EIO);
  bus.Publish(Event("torn").AddString("pad", std::string(64, 'x')));
  bus.Publish(Event("whole"));
  EXPECT_EQ(bus.error_count(), 1u);
  EXPECT_THAT(bus.last_error(), StatusIs(StatusCode::kInternal));

  Result<std::string> text = ReadFileToString(memory, "events.jsonl");
  MEND_ASSERT_OK(text);
  const std::vector<std::string> lines = Lines(*text);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_THAT(ParseJson(lines[0]), StatusIs(StatusCode::kInvalidArgument));
  Result<nlohmann::json> whole = ParseJson(lines[1]);
  MEND_ASSERT_OK(whole);
  EXPECT_EQ((*whole)["type"], "whole");
}

TEST(JsonlFileSinkTest, OpenFailureIsReturned) {
  MemoryFileSystem memory;
  FaultInjectionFileSystem fs(&memory);
  fs.FailNext(FsOp::kOpen, EACCES);
  EXPECT_THAT(JsonlFileSink::Open(fs, "events.jsonl"), StatusIs(StatusCode::kPermissionDenied));
}

TEST(EventBusTest, ConcurrentPublishersDeliverEveryEvent) {
  MemoryFileSystem fs;
  ManualClock clock;
  EventBus bus(clock);
  auto memory = std::make_shared<MemorySink>();
  bus.Subscribe(memory);
  auto file = JsonlFileSink::Open(fs, "events.jsonl");
  MEND_ASSERT_OK(file);
  bus.Subscribe(std::move(file).value());
  bus.AddRedactor("secret");
  constexpr int kThreads = 4;
  constexpr int kPerThread = 500;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&bus, t] {
      for (int i = 0; i < kPerThread; ++i) {
        bus.Publish(Event("tick").AddInt("thread", t).AddString("v", "secret"));
      }
    });
  }
  for (std::thread& th : threads) th.join();
  EXPECT_EQ(memory->size(), static_cast<size_t>(kThreads * kPerThread));
  Result<std::string> text = ReadFileToString(fs, "events.jsonl");
  MEND_ASSERT_OK(text);
  const std::vector<std::string> lines = Lines(*text);
  ASSERT_EQ(lines.size(), static_cast<size_t>(kThreads * kPerThread));
  for (const std::string& line : lines) {
    Result<nlohmann::json> j = ParseJson(line);
    MEND_ASSERT_OK(j);
    ASSERT_EQ((*j)["v"], "[REDACTED]");
  }
}

}  // namespace
}  // namespace mend::obs
