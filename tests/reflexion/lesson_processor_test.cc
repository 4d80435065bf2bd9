#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "mend/base/manual_clock.h"
#include "mend/base/memory_file_system.h"
#include "mend/llm/scripted_provider.h"
#include "mend/reflexion/lesson_sink.h"
#include "tests/support/status_matchers.h"

namespace mend::reflexion {
namespace {

using ::mend::testing::IsOk;
using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;

constexpr std::string_view kLessonReply =
    "<situation>s</situation><mistake>m</mistake><correction>c</correction><tags>x</tags>";

// A fact store whose writes fail with a chosen status; everything else is unimplemented.
class FailingFactStore final : public memory::FactStore {
 public:
  explicit FailingFactStore(Status error) : error_(std::move(error)) {}
  Result<memory::AddResult> Add(const memory::NewFact&) override { return error_; }
  Result<memory::Fact> Get(const std::string&) override { return Unimplemented(); }
  Result<std::vector<memory::Fact>> List(const memory::ListOptions&) override {
    return Unimplemented();
  }
  Status Remove(const std::string&) override { return Unimplemented(); }
  Status Supersede(const std::string&, const std::string&) override { return Unimplemented(); }
  Result<ImportCounts> Import(const std::vector<memory::Fact>&) override { return Unimplemented(); }
  Result<std::vector<memory::LexicalHit>> SearchLexical(const std::vector<std::string>&, size_t,
                                                        const std::string&) override {
    return Unimplemented();
  }
  Result<memory::TermStatistics::Counts> CountTerms(const std::vector<std::string>&) override {
    return Unimplemented();
  }
  Result<std::vector<memory::TagMatch>> MatchTags(const std::vector<std::string>&,
                                                  const std::string&, size_t) override {
    return Unimplemented();
  }
  Result<int64_t> Generation() override { return Unimplemented(); }
  Result<int64_t> VectorGeneration() override { return Unimplemented(); }
  Result<int64_t> Count() override { return Unimplemented(); }
  Status RecordInjection(const std::string&, const std::vector<memory::InjectedFact>&) override {
    return Unimplemented();
  }
  Result<std::vector<std::string>> InjectedInto(const std::string&) override {
    return Unimplemented();
  }
  Result<std::vector<memory::Injection>> InjectionsOfRun(const std::string&) override {
    return Unimplemented();
  }
  Result<std::vector<memory::Injection>> InjectionsOfFact(const std::string&, size_t) override {
    return Unimplemented();
  }
  Status RecordOutcome(const std::string&, bool) override { return Unimplemented(); }
  Status PutEmbedding(const memory::FactVector&, const std::string&) override {
    return Unimplemented();
  }
  Result<std::vector<memory::FactVector>> Embeddings(const std::string&) override {
    return Unimplemented();
  }
  Result<int64_t> PutEmbeddings(const std::vector<memory::FactVector>&,
                                const std::string&) override {
    return Unimplemented();
  }
  Result<std::vector<memory::EmbeddingWork>> MissingEmbeddings(const std::string&, size_t,
                                                               int64_t) override {
    return Unimplemented();
  }
  Result<std::vector<memory::EmbeddingWork>> MissingEmbeddingsOf(
      const std::string&, const std::vector<std::string>&) override {
    return Unimplemented();
  }
  Result<std::vector<memory::EmbeddingCoverage>> Coverage(const std::string&) override {
    return Unimplemented();
  }
  Result<memory::FactCounts> CountFacts() override { return Unimplemented(); }

 private:
  static Status Unimplemented() { return UnimplementedError("not in this fake"); }
  Status error_;
};

class LessonProcessorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "mend_lessonproc_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    auto store = memory::FactStore::Open(dir_ + "/mend.db", memory::FactStoreOptions{&clock_});
    ASSERT_THAT(store.status(), IsOk());
    facts_ = std::move(store).value();
  }
  void TearDown() override {
    facts_.reset();
    std::filesystem::remove_all(dir_);
  }
  Result<lessonq::ProcessResult> Process(llm::ScriptedStep step, memory::FactStore* facts,
                                         int* persist_failures = nullptr) {
    llm::ScriptedProvider provider({std::move(step)});
    LessonGenerator generator(provider, "", clock_);
    LessonSink sink(facts, Env{&fs_, &clock_, nullptr}, nullptr, LessonSinkOptions{});
    std::function<void()> on_failure;
    if (persist_failures != nullptr) on_failure = [persist_failures] { ++*persist_failures; };
    lessonq::Processor processor = MakeLessonProcessor(generator, sink, on_failure);
    lessonq::Job job;
    job.id = "0123456789abcdef";
    job.request = {"Edit main.go", "rewrite", "ERROR: too large", "error"};
    return processor(job, lessonq::JobContext{});
  }

  ManualClock clock_;
  MemoryFileSystem fs_;
  std::string dir_;
  std::unique_ptr<memory::FactStore> facts_;
};

TEST_F(LessonProcessorTest, SkipIsSkippedAndStoresNothing) {
  EXPECT_THAT(Process({.text = "<skip>nothing actionable</skip>"}, facts_.get()),
              IsOkAndHolds(lessonq::ProcessResult::kSkipped));
  EXPECT_THAT(facts_->Count(), IsOkAndHolds(0));
}

TEST_F(LessonProcessorTest, LessonIsStoredWithTheJobAsProvenance) {
  EXPECT_THAT(Process({.text = std::string(kLessonReply)}, facts_.get()),
              IsOkAndHolds(lessonq::ProcessResult::kSuccess));
  auto list = facts_->List(memory::ListOptions{});
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].content, "LESSON: s\nMISTAKE: m\nCORRECTION: c\nTRIGGER: error");
  ASSERT_EQ((*list)[0].provenance.size(), 1u);
  EXPECT_EQ((*list)[0].provenance[0].task, "Edit main.go");
}

TEST_F(LessonProcessorTest, TransientProviderErrorStaysRetryable) {
  auto r = Process({.error = UnavailableError("503")}, facts_.get());
  EXPECT_THAT(r, StatusIs(StatusCode::kUnavailable));
  EXPECT_TRUE(IsRetryable(r.status()));
}

TEST_F(LessonProcessorTest, AuthErrorIsNotRetryable) {
  auto r = Process({.error = UnauthenticatedError("bad key")}, facts_.get());
  EXPECT_THAT(r, StatusIs(StatusCode::kUnauthenticated));
  EXPECT_FALSE(IsRetryable(r.status()));
}

TEST_F(LessonProcessorTest, ParseErrorIsPermanent) {
  auto r = Process({.text = "no blocks here"}, facts_.get());
  EXPECT_THAT(r, StatusIs(StatusCode::kInvalidArgument));
  EXPECT_FALSE(IsRetryable(r.status()));
}

TEST_F(LessonProcessorTest, PersistFailureBecomesTransientAndIsCounted) {
  for (Status error : {UnavailableError("database is locked"), InternalError("disk I/O error"),
                       InvalidArgumentError("rejected")}) {
    FailingFactStore failing(error);
    int failures = 0;
    auto r = Process({.text = std::string(kLessonReply)}, &failing, &failures);
    EXPECT_THAT(r, StatusIs(error.code())) << error;
    EXPECT_TRUE(IsRetryable(r.status())) << error;
    EXPECT_EQ(failures, 1) << error;
  }
}

TEST_F(LessonProcessorTest, PersistFailureWithoutCallbackIsFine) {
  FailingFactStore failing(InternalError("boom"));
  auto r = Process({.text = std::string(kLessonReply)}, &failing);
  EXPECT_TRUE(IsRetryable(r.status()));
}

}  // namespace
}  // namespace mend::reflexion
