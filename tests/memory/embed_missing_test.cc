// EmbedMissing: batches, retries with their pauses (in virtual time), and what stays when it stops.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "mend/base/manual_clock.h"
#include "mend/llm/embedder.h"
#include "mend/memory/backfill.h"
#include "mend/memory/fact_store.h"
#include "tests/memory/sqlite_fact_store_harness.h"
#include "tests/support/status_matchers.h"

namespace mend::memory::testing {
namespace {

using ::mend::testing::StatusIs;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// The hashing embedder, failing the calls it was told to (numbered from 0); records the size of
// every call.
class ScriptedEmbedder final : public llm::Embedder {
 public:
  void FailCall(size_t call, Status error) {
    std::lock_guard<std::mutex> lock(mu_);
    failures_[call] = std::move(error);
  }
  Result<std::vector<std::vector<float>>> Embed(const std::vector<std::string>& texts) override {
    std::lock_guard<std::mutex> lock(mu_);
    const size_t call = calls_.size();
    calls_.push_back(texts.size());
    called_.notify_all();
    auto it = failures_.find(call);
    if (it != failures_.end()) return it->second;
    return hashing_.Embed(texts);
  }
  int dimension() const override { return hashing_.dimension(); }
  std::string model_id() const override { return "scripted-4"; }
  std::vector<size_t> calls() const {
    std::lock_guard<std::mutex> lock(mu_);
    return calls_;
  }
  void WaitForCalls(size_t n) {
    std::unique_lock<std::mutex> lock(mu_);
    called_.wait(lock, [&] { return calls_.size() >= n; });
  }

 private:
  llm::HashingEmbedder hashing_{4};
  mutable std::mutex mu_;
  std::condition_variable called_;
  std::map<size_t, Status> failures_;
  std::vector<size_t> calls_;
};

// One request in flight at a time, so calls come in the order of the batches.
EmbedOptions Sequential() {
  EmbedOptions options;
  options.concurrency = 1;
  return options;
}

class EmbedMissingTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto store = harness_.Open(clock_);
    ASSERT_TRUE(store.ok()) << store.status();
    store_ = std::move(store).value();
  }

  std::vector<std::string> AddFacts(int n) {
    std::vector<std::string> ids;
    for (int i = 0; i < n; ++i) {
      auto added = store_->Add({"fact " + std::to_string(i) + " about step " +
                                std::to_string(i * 7919) + " of the release"});
      EXPECT_TRUE(added.ok()) << added.status();
      ids.push_back(added.ok() ? added->id : "");
    }
    return ids;
  }

  EmbeddingCoverage CoverageOf(const std::string& model) {
    auto coverage = store_->Coverage(model);
    EXPECT_TRUE(coverage.ok()) << coverage.status();
    for (const EmbeddingCoverage& c : *coverage) {
      if (c.model_id == model) return c;
    }
    return {};
  }

  // EmbedMissing on another thread, so the test can move the clock while it pauses.
  void StartInBackground(EmbedOptions options) {
    thread_ = std::thread(
        [this, options] { report_ = EmbedMissing(*store_, embedder_, clock_, nullptr, options); });
  }
  void Join() { thread_.join(); }

  ManualClock clock_;
  SqliteFactStoreHarness harness_;
  std::unique_ptr<FactStore> store_;
  ScriptedEmbedder embedder_;
  std::thread thread_;
  EmbedReport report_;
};

TEST_F(EmbedMissingTest, EmbedsEveryPartInBatchesAndReportsProgressPerBatch) {
  AddFacts(9);
  NewFact lesson{"Quote variables in shell scripts", "lesson", {"bash"}};
  lesson.episode = Episode{"rename photos", "not a directory", clock_.Now()};
  ASSERT_TRUE(store_->Add(lesson).ok());  // two parts
  EmbedOptions options = Sequential();
  options.batch = 4;
  std::vector<EmbedProgress> seen;
  EmbedReport report = EmbedMissing(*store_, embedder_, clock_, nullptr, options,
                                    [&](const EmbedProgress& p) { seen.push_back(p); });
  MEND_EXPECT_OK(report.error);
  EXPECT_THAT(embedder_.calls(), ElementsAre(4, 4, 3));
  EXPECT_EQ(report.progress.facts_total, 10);
  EXPECT_EQ(report.progress.facts_done, 10);
  EXPECT_EQ(report.progress.texts, 11);
  EXPECT_EQ(report.progress.requests, 3);
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].facts_done, 4);
  EXPECT_EQ(seen[1].facts_done, 8);
  EXPECT_EQ(CoverageOf("scripted-4").uncovered, 0);
  EXPECT_EQ(CoverageOf("scripted-4").covered, 10);

  // Nothing is missing any more: no request.
  report = EmbedMissing(*store_, embedder_, clock_, nullptr, options);
  MEND_EXPECT_OK(report.error);
  EXPECT_EQ(report.progress.requests, 0);
  EXPECT_EQ(embedder_.calls().size(), 3u);
}

TEST_F(EmbedMissingTest, ALongTextGoesAloneAndTheBatchStaysWithinItsBytes) {
  AddFacts(2);
  ASSERT_TRUE(store_->Add({std::string(3000, 'x') + " a long fact"}).ok());
  EmbedOptions options = Sequential();
  options.batch = 10;
  options.batch_bytes = 1000;
  EmbedReport report = EmbedMissing(*store_, embedder_, clock_, nullptr, options);
  MEND_EXPECT_OK(report.error);
  // The two short facts together; the long one, over the bytes of a batch, alone.
  EXPECT_THAT(embedder_.calls(), ElementsAre(2, 1));
  EXPECT_EQ(report.progress.facts_done, 3);
}

TEST_F(EmbedMissingTest, OnlyTheFactsAskedForWithIds) {
  std::vector<std::string> ids = AddFacts(6);
  EmbedOptions options = Sequential();
  options.batch = 2;
  const std::vector<std::string> wanted = {ids[4], ids[1], ids[5]};
  EmbedReport report = EmbedMissing(*store_, embedder_, clock_, &wanted, options);
  MEND_EXPECT_OK(report.error);
  EXPECT_THAT(embedder_.calls(), ElementsAre(2, 1));
  EXPECT_EQ(report.progress.facts_total, 3);
  EXPECT_EQ(report.progress.facts_done, 3);
  EXPECT_EQ(CoverageOf("scripted-4").covered, 3);
  EXPECT_EQ(CoverageOf("scripted-4").uncovered, 3);
}

TEST_F(EmbedMissingTest, ATransientFailureIsRetriedAfterADoublingPause) {
  AddFacts(3);
  embedder_.FailCall(0, UnavailableError("503 from the endpoint"));
  embedder_.FailCall(1, UnavailableError("503 from the endpoint"));
  EmbedOptions options = Sequential();
  options.batch = 10;
  options.first_delay = seconds(1);
  StartInBackground(options);
  clock_.BlockUntilWaiters(1);
  EXPECT_EQ(embedder_.calls().size(), 1u);
  clock_.Advance(seconds(1));
  embedder_.WaitForCalls(2);
  clock_.BlockUntilWaiters(1);  // the second failure: now two seconds
  clock_.Advance(milliseconds(1999));
  clock_.BlockUntilWaiters(1);  // still pausing
  EXPECT_EQ(embedder_.calls().size(), 2u);
  clock_.Advance(milliseconds(1));
  Join();
  MEND_EXPECT_OK(report_.error);
  EXPECT_EQ(embedder_.calls().size(), 3u);
  EXPECT_EQ(report_.progress.retries, 2);
  EXPECT_EQ(report_.progress.facts_done, 3);
}

TEST_F(EmbedMissingTest, RetryAfterIsHonouredUpToTheCap) {
  AddFacts(1);
  embedder_.FailCall(0, ResourceExhaustedError("429").WithRetryAfter(seconds(5)));
  embedder_.FailCall(1, ResourceExhaustedError("429").WithRetryAfter(std::chrono::hours(1)));
  EmbedOptions options = Sequential();
  options.first_delay = seconds(1);
  options.max_delay = seconds(30);
  StartInBackground(options);
  clock_.BlockUntilWaiters(1);
  clock_.Advance(milliseconds(4999));
  clock_.BlockUntilWaiters(1);
  EXPECT_EQ(embedder_.calls().size(), 1u);
  clock_.Advance(milliseconds(1));
  embedder_.WaitForCalls(2);
  clock_.BlockUntilWaiters(1);  // the hour is cut to 30 s
  clock_.Advance(milliseconds(29'999));
  clock_.BlockUntilWaiters(1);
  EXPECT_EQ(embedder_.calls().size(), 2u);
  clock_.Advance(milliseconds(1));
  Join();
  MEND_EXPECT_OK(report_.error);
  EXPECT_EQ(report_.progress.facts_done, 1);
}

TEST_F(EmbedMissingTest, APermanentErrorStopsAtOnceAndWhatWasStoredStays) {
  AddFacts(5);
  embedder_.FailCall(1, PermissionDeniedError("401 invalid api key ****1234"));
  EmbedOptions options = Sequential();
  options.batch = 2;
  EmbedReport report = EmbedMissing(*store_, embedder_, clock_, nullptr, options);
  EXPECT_THAT(report.error, StatusIs(StatusCode::kPermissionDenied, HasSubstr("invalid api key")));
  EXPECT_THAT(embedder_.calls(), ElementsAre(2, 2));  // no retry, no pause
  EXPECT_EQ(report.progress.retries, 0);
  EXPECT_EQ(report.progress.facts_done, 2);
  EXPECT_EQ(report.progress.facts_total, 5);
  EXPECT_EQ(CoverageOf("scripted-4").covered, 2);

  report = EmbedMissing(*store_, embedder_, clock_, nullptr, options);
  MEND_EXPECT_OK(report.error);
  EXPECT_THAT(embedder_.calls(), ElementsAre(2, 2, 2, 1));  // only what was missing
  EXPECT_EQ(report.progress.facts_total, 3);
  EXPECT_EQ(CoverageOf("scripted-4").covered, 5);
}

TEST_F(EmbedMissingTest, ExhaustedAttemptsStopWithTheLastErrorAndAFollowingCallFinishes) {
  AddFacts(6);
  for (size_t call : {1u, 2u, 3u}) {
    embedder_.FailCall(call, UnavailableError("500 attempt " + std::to_string(call)));
  }
  EmbedOptions options = Sequential();
  options.batch = 2;
  options.max_attempts = 3;
  options.first_delay = milliseconds(0);
  EmbedReport report = EmbedMissing(*store_, embedder_, clock_, nullptr, options);
  EXPECT_THAT(report.error, StatusIs(StatusCode::kUnavailable, HasSubstr("attempt 3")));
  EXPECT_THAT(embedder_.calls(), ElementsAre(2, 2, 2, 2));
  EXPECT_EQ(report.progress.retries, 2);
  EXPECT_EQ(CoverageOf("scripted-4").covered, 2);

  report = EmbedMissing(*store_, embedder_, clock_, nullptr, options);
  MEND_EXPECT_OK(report.error);
  EXPECT_EQ(report.progress.texts, 4);
  EXPECT_EQ(CoverageOf("scripted-4").covered, 6);
}

TEST_F(EmbedMissingTest, ConcurrentRequestsStoreEveryBatchOnce) {
  AddFacts(50);
  EmbedOptions options;
  options.batch = 3;
  options.concurrency = 4;
  std::vector<int64_t> done;
  EmbedReport report = EmbedMissing(*store_, embedder_, clock_, nullptr, options,
                                    [&](const EmbedProgress& p) { done.push_back(p.facts_done); });
  MEND_EXPECT_OK(report.error);
  std::vector<size_t> calls = embedder_.calls();
  EXPECT_EQ(calls.size(), 17u);
  EXPECT_EQ(std::accumulate(calls.begin(), calls.end(), size_t{0}), 50u);  // no text twice
  EXPECT_EQ(report.progress.facts_done, 50);
  EXPECT_EQ(report.progress.requests, 17);
  EXPECT_TRUE(std::is_sorted(done.begin(), done.end()));
  EXPECT_EQ(CoverageOf("scripted-4").covered, 50);
}

TEST_F(EmbedMissingTest, AFailureAmongConcurrentRequestsKeepsTheOthersAnswers) {
  std::vector<std::string> ids = AddFacts(40);
  embedder_.FailCall(4, PermissionDeniedError("401"));
  EmbedOptions options;
  options.batch = 3;
  options.concurrency = 4;
  EmbedReport report = EmbedMissing(*store_, embedder_, clock_, &ids, options);
  EXPECT_THAT(report.error, StatusIs(StatusCode::kPermissionDenied));
  // Every answered request was stored: what is covered is what was counted.
  const size_t calls = embedder_.calls().size();
  EXPECT_GE(calls, 5u);
  EXPECT_EQ(report.progress.requests, static_cast<int64_t>(calls) - 1);
  EXPECT_EQ(CoverageOf("scripted-4").covered, report.progress.facts_done);
  EXPECT_LT(report.progress.facts_done, 40);
  report = EmbedMissing(*store_, embedder_, clock_, &ids, options);
  MEND_EXPECT_OK(report.error);
  EXPECT_EQ(CoverageOf("scripted-4").covered, 40);
}

TEST_F(EmbedMissingTest, AnotherModelEmbedsEverythingAgainAndKeepsTheFirstModelsVectors) {
  AddFacts(3);
  MEND_EXPECT_OK(EmbedMissing(*store_, embedder_, clock_, nullptr, Sequential()).error);
  llm::HashingEmbedder other(8);
  EmbedReport report = EmbedMissing(*store_, other, clock_, nullptr, Sequential());
  MEND_EXPECT_OK(report.error);
  EXPECT_EQ(report.progress.facts_done, 3);
  EXPECT_EQ(CoverageOf("scripted-4").covered, 3);
  EXPECT_EQ(CoverageOf(other.model_id()).covered, 3);
  EXPECT_EQ(CoverageOf(other.model_id()).dimension, 8);
}

}  // namespace
}  // namespace mend::memory::testing
