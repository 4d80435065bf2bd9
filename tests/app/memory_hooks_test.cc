// Long-term memory in runs: the section the model sees, the helped/hurt feedback, and that
// RecallForTask answers exactly what the hook injects.
#include "mend/app/memory_hooks.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "memory/memory_section.h"
#include "mend/app/runtime.h"
#include "mend/llm/scripted_provider.h"
#include "mend/obs/events.h"
#include "tests/app/agent_home_test.h"
#include "tests/support/status_matchers.h"

namespace mend::app {
namespace {

using ::mend::testing::IsOk;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kLesson[] =
    "Before deploying the payments service, run the database migrations first.";
constexpr char kRelatedTask[] = "deploying the payments service, with its database migrations";
constexpr char kUnrelatedTask[] = "write a haiku about autumn leaves";
constexpr const char* kFillers[] = {
    "The team prefers tabs over spaces in Makefiles.",
    "Use the staging cluster name blue-7 for load tests.",
    "Release notes are written in the CHANGELOG file at the repository root.",
    "Unit tests must not sleep; use the manual clock instead.",
};

// A real fact store whose RecordInjection fails, to show that memory cannot fail a run.
class InjectionFailsStore final : public memory::FactStore {
 public:
  explicit InjectionFailsStore(std::unique_ptr<memory::FactStore> real) : real_(std::move(real)) {}
  Result<memory::AddResult> Add(const memory::NewFact& f) override { return real_->Add(f); }
  Result<memory::Fact> Get(const std::string& id) override { return real_->Get(id); }
  Result<std::vector<memory::Fact>> List(const memory::ListOptions& o) override {
    return real_->List(o);
  }
  Status Remove(const std::string& id) override { return real_->Remove(id); }
  Status Supersede(const std::string& a, const std::string& b) override {
    return real_->Supersede(a, b);
  }
  Result<ImportCounts> Import(const std::vector<memory::Fact>& f) override {
    return real_->Import(f);
  }
  Result<std::vector<memory::LexicalHit>> SearchLexical(const std::vector<std::string>& q,
                                                        size_t limit,
                                                        const std::string& ws) override {
    return real_->SearchLexical(q, limit, ws);
  }
  Result<memory::TermStatistics::Counts> CountTerms(
      const std::vector<std::string>& stems) override {
    return real_->CountTerms(stems);
  }
  Result<std::vector<memory::TagMatch>> MatchTags(const std::vector<std::string>& keys,
                                                  const std::string& ws,
                                                  size_t max_postings) override {
    return real_->MatchTags(keys, ws, max_postings);
  }
  Result<int64_t> Generation() override { return real_->Generation(); }
  Result<int64_t> VectorGeneration() override { return real_->VectorGeneration(); }
  Result<int64_t> Count() override { return real_->Count(); }
  Status RecordInjection(const std::string&, const std::vector<memory::InjectedFact>&) override {
    return UnavailableError("database is locked");
  }
  Result<std::vector<std::string>> InjectedInto(const std::string& run_id) override {
    return real_->InjectedInto(run_id);
  }
  Result<std::vector<memory::Injection>> InjectionsOfRun(const std::string& run_id) override {
    return real_->InjectionsOfRun(run_id);
  }
  Result<std::vector<memory::Injection>> InjectionsOfFact(const std::string& fact_id,
                                                          size_t limit) override {
    return real_->InjectionsOfFact(fact_id, limit);
  }
  Status RecordOutcome(const std::string& run_id, bool completed) override {
    return real_->RecordOutcome(run_id, completed);
  }
  Status PutEmbedding(const memory::FactVector& v, const std::string& model) override {
    return real_->PutEmbedding(v, model);
  }
  Result<std::vector<memory::FactVector>> Embeddings(const std::string& model) override {
    return real_->Embeddings(model);
  }
  Result<int64_t> PutEmbeddings(const std::vector<memory::FactVector>& v,
                                const std::string& model) override {
    return real_->PutEmbeddings(v, model);
  }
  Result<std::vector<memory::EmbeddingWork>> MissingEmbeddings(const std::string& model,
                                                               size_t limit,
                                                               int64_t from) override {
    return real_->MissingEmbeddings(model, limit, from);
  }
  Result<std::vector<memory::EmbeddingWork>> MissingEmbeddingsOf(
      const std::string& model, const std::vector<std::string>& ids) override {
    return real_->MissingEmbeddingsOf(model, ids);
  }
  Result<std::vector<memory::EmbeddingCoverage>> Coverage(const std::string& model) override {
    return real_->Coverage(model);
  }
  Result<memory::FactCounts> CountFacts() override { return real_->CountFacts(); }

 private:
  std::unique_ptr<memory::FactStore> real_;
};

class MemoryHooksTest : public AgentHomeTest {
 protected:
  // A runtime whose model answers with `steps`; `provider_` observes its requests.
  void Open(std::vector<llm::ScriptedStep> steps, std::map<std::string, std::string> flags = {},
            std::unique_ptr<memory::FactStore> facts = nullptr) {
    ConfigSources sources;
    sources.flags = std::move(flags);
    sources.flags["home"] = dir_ + "/home";
    Result<Config> config = LoadConfig(sources, *env_.fs);
    MEND_ASSERT_OK(config);
    auto provider = std::make_unique<llm::ScriptedProvider>(std::move(steps));
    provider_ = provider.get();
    RuntimeOptions options;
    options.provider = std::move(provider);
    options.event_log = EventLog::kNone;
    options.facts = std::move(facts);
    auto runtime = OpenRuntime(*config, env_, std::move(options));
    MEND_ASSERT_OK(runtime);
    runtime_ = std::move(runtime).value();
    runtime_->events->Subscribe(events_);
  }

  // A memory with some unrelated facts, as a real one has: BM25 weighs a word by how few facts
  // contain it, so a lone fact in an empty memory carries almost no lexical weight.
  void AddFillers() {
    for (const char* text : kFillers) {
      memory::NewFact filler;
      filler.content = text;
      MEND_ASSERT_OK(runtime_->facts->Add(filler));
    }
  }

  std::string AddLesson() {
    AddFillers();
    memory::NewFact fact;
    fact.content = kLesson;
    fact.category = "lesson";
    fact.tags = {"deploy", "payments"};
    auto added = runtime_->facts->Add(fact);
    EXPECT_THAT(added, IsOk());
    return added.ok() ? added->id : "";
  }

  Result<agent::RunResult> Run(const std::string& task, const std::string& run_id) {
    MEND_ASSIGN_OR_RETURN(std::unique_ptr<agent::Agent> agent, OpenAgent(*runtime_, agent_dir_));
    agent::SendOptions send;
    send.run_id = run_id;
    return agent->Send(task, send);
  }

  std::string SystemPromptOfRequest(size_t i) const {
    const std::vector<llm::CompletionRequest> requests = provider_->requests();
    if (i >= requests.size() || requests[i].messages.empty()) return "";
    return requests[i].messages.front().content;
  }

  static std::vector<llm::ScriptedStep> Answer(const std::string& text) {
    std::vector<llm::ScriptedStep> steps(1);
    steps[0].text = text;
    return steps;
  }

  llm::ScriptedProvider* provider_ = nullptr;
  std::shared_ptr<obs::MemorySink> events_ = std::make_shared<obs::MemorySink>();
  std::unique_ptr<Runtime> runtime_;
};

TEST_F(MemoryHooksTest, MatchingFactIsInTheSystemPromptAndHelpsOnCompletion) {
  Open(Answer("done"));
  const std::string id = AddLesson();
  auto result = Run(kRelatedTask, "r1");
  MEND_ASSERT_OK(result);
  ASSERT_EQ(result->status, store::RunStatus::kCompleted);

  const std::string prompt = SystemPromptOfRequest(0);
  EXPECT_THAT(prompt, HasSubstr(memory::kMemorySectionHeading));
  EXPECT_THAT(prompt, HasSubstr(std::string("- [lesson] ") + kLesson));
  auto injected = runtime_->facts->InjectedInto("r1");
  MEND_ASSERT_OK(injected);
  ASSERT_FALSE(injected->empty());
  EXPECT_EQ(injected->front(), id);  // the best match comes first

  auto fact = runtime_->facts->Get(id);
  MEND_ASSERT_OK(fact);
  EXPECT_EQ(fact->helped, 1);
  EXPECT_EQ(fact->hurt, 0);
}

TEST_F(MemoryHooksTest, UnrelatedTaskGetsNoSection) {
  Open(Answer("done"));
  const std::string id = AddLesson();
  auto result = Run(kUnrelatedTask, "r1");
  MEND_ASSERT_OK(result);
  ASSERT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_THAT(SystemPromptOfRequest(0), Not(HasSubstr(memory::kMemorySectionHeading)));
  EXPECT_THAT(SystemPromptOfRequest(0), Not(HasSubstr(kLesson)));
  auto fact = runtime_->facts->Get(id);
  MEND_ASSERT_OK(fact);
  EXPECT_EQ(fact->helped, 0);  // it was not received, so the outcome says nothing about it
}

TEST_F(MemoryHooksTest, FailedRunCountsAsHurt) {
  std::vector<llm::ScriptedStep> steps(1);
  steps[0].error = InvalidArgumentError("the model rejected the request");
  Open(std::move(steps));
  const std::string id = AddLesson();
  auto result = Run(kRelatedTask, "r1");
  MEND_ASSERT_OK(result);
  ASSERT_EQ(result->status, store::RunStatus::kFailed);
  EXPECT_THAT(SystemPromptOfRequest(0), HasSubstr(kLesson));
  auto fact = runtime_->facts->Get(id);
  MEND_ASSERT_OK(fact);
  EXPECT_EQ(fact->hurt, 1);
  EXPECT_EQ(fact->helped, 0);
}

TEST_F(MemoryHooksTest, RecallForTaskIsWhatTheHookInjects) {
  Open(Answer("done"));
  AddLesson();
  auto recalled = RecallForTask(*runtime_, kRelatedTask, "");
  MEND_ASSERT_OK(recalled);
  ASSERT_FALSE(recalled->section.empty());
  std::vector<std::string> selected;
  for (const memory::ScoredFact& s : recalled->selected) selected.push_back(s.fact.id);

  MEND_ASSERT_OK(Run(kRelatedTask, "r1"));
  EXPECT_THAT(SystemPromptOfRequest(0), HasSubstr(recalled->section));
  auto injected = runtime_->facts->InjectedInto("r1");
  MEND_ASSERT_OK(injected);
  EXPECT_THAT(*injected, ::testing::UnorderedElementsAreArray(selected));

  // The hook itself, on the state the run left behind.
  auto again = RecallForTask(*runtime_, kRelatedTask, "");
  MEND_ASSERT_OK(again);
  agent::RunInfo info;
  info.run_id = "r2";
  info.task = kRelatedTask;
  MemoryContextHook hook(*runtime_);
  auto section = hook.ContextSection(info);
  MEND_ASSERT_OK(section);
  EXPECT_EQ(*section, again->section);
}

TEST_F(MemoryHooksTest, StoreErrorIsAHookFailureAndTheRunGoesOn) {
  MEND_ASSERT_OK(env_.fs->CreateDirs(dir_ + "/home"));
  memory::FactStoreOptions store_options;
  store_options.clock = env_.clock;
  auto real = memory::FactStore::Open(dir_ + "/home/mend.db", store_options);
  MEND_ASSERT_OK(real);
  Open(Answer("done"), {}, std::make_unique<InjectionFailsStore>(std::move(real).value()));
  AddLesson();
  auto result = Run(kRelatedTask, "r1");
  MEND_ASSERT_OK(result);
  EXPECT_EQ(result->status, store::RunStatus::kCompleted);
  EXPECT_THAT(SystemPromptOfRequest(0), Not(HasSubstr(memory::kMemorySectionHeading)));
  int failures = 0;
  for (const obs::Event& e : events_->events()) {
    if (e.type() != "hook.failed") continue;
    ++failures;
    EXPECT_EQ(e.Find("hook").value_or(""), "\"memory\"");
    EXPECT_THAT(std::string(e.Find("error").value_or("")), HasSubstr("database is locked"));
  }
  EXPECT_EQ(failures, 1);
}

TEST_F(MemoryHooksTest, DisabledMemoryInjectsNothing) {
  Open(Answer("done"), {{"memory.enabled", "false"}});
  const std::string id = AddLesson();
  MEND_ASSERT_OK(Run(kRelatedTask, "r1"));
  EXPECT_THAT(SystemPromptOfRequest(0), Not(HasSubstr(kLesson)));
  auto recalled = RecallForTask(*runtime_, kRelatedTask, "");
  MEND_ASSERT_OK(recalled);
  EXPECT_EQ(recalled->section, "");
  auto injected = runtime_->facts->InjectedInto("r1");
  MEND_ASSERT_OK(injected);
  EXPECT_TRUE(injected->empty());
}

TEST_F(MemoryHooksTest, FactOfAnotherWorkspaceIsNotInjected) {
  Open(Answer("done"));
  AddFillers();
  memory::NewFact fact;
  fact.content = kLesson;
  fact.workspace = dir_ + "/other";
  MEND_ASSERT_OK(runtime_->facts->Add(fact));
  auto elsewhere = RecallForTask(*runtime_, kRelatedTask, dir_ + "/mine");
  MEND_ASSERT_OK(elsewhere);
  EXPECT_EQ(elsewhere->section, "");
  auto there = RecallForTask(*runtime_, kRelatedTask, dir_ + "/other");
  MEND_ASSERT_OK(there);
  EXPECT_THAT(there->section, HasSubstr(kLesson));
}

TEST_F(MemoryHooksTest, HydeWithAnUnbuildableProviderDegradesInsteadOfFailing) {
  // No provider injected: the configured one (openai without a model) cannot be built, so HyDE's
  // request fails and retrieval falls back to the lexical signals.
  ConfigSources sources;
  sources.flags = {{"home", dir_ + "/home"}, {"memory.hyde", "true"}, {"provider.name", "openai"}};
  Result<Config> config = LoadConfig(sources, *env_.fs);
  MEND_ASSERT_OK(config);
  RuntimeOptions options;
  options.event_log = EventLog::kNone;
  auto runtime = OpenRuntime(*config, env_, std::move(options));
  MEND_ASSERT_OK(runtime);
  runtime_ = std::move(runtime).value();
  AddLesson();
  auto recalled = RecallForTask(*runtime_, kRelatedTask, "");
  MEND_ASSERT_OK(recalled);
  EXPECT_THAT(recalled->section, HasSubstr(kLesson));
  EXPECT_EQ(recalled->hyde_text, "");
}

TEST_F(MemoryHooksTest, EmbeddingsUrlBuildsEmbedderAndBackfill) {
  Open(Answer("done"), {{"memory.embeddings.url", "http://127.0.0.1:9/v1"}});
  EXPECT_NE(runtime_->embedder, nullptr);
  EXPECT_NE(runtime_->backfill, nullptr);
  EXPECT_THAT(runtime_->embedder->model_id(), HasSubstr("text-embedding-3-small"));
}

TEST_F(MemoryHooksTest, EmbeddingsKeyIsRedactedFromEvents) {
  constexpr char kKey[] = "emb-key-0123456789abcdefSECRET";
  ConfigSources sources;
  sources.flags = {{"home", dir_ + "/home"},
                   {"memory.embeddings.url", "http://127.0.0.1:9/v1"},
                   {"memory.embeddings.api_key", kKey}};
  Result<Config> config = LoadConfig(sources, *env_.fs);
  MEND_ASSERT_OK(config);
  {
    auto runtime = OpenRuntime(*config, env_);
    MEND_ASSERT_OK(runtime);
    obs::Event event("test.event");
    event.AddString("detail", std::string("key=") + kKey);
    (*runtime)->events->Publish(std::move(event));
    MEND_ASSERT_OK((*runtime)->events->Flush());
  }
  auto text = ReadFileToString(*env_.fs, dir_ + "/home/events.jsonl");
  MEND_ASSERT_OK(text);
  EXPECT_THAT(*text, HasSubstr("[REDACTED]"));
  EXPECT_THAT(*text, Not(HasSubstr(kKey)));
}

TEST_F(MemoryHooksTest, NoEmbeddingsUrlMeansLexicalOnly) {
  Open(Answer("done"));
  EXPECT_EQ(runtime_->embedder, nullptr);
  EXPECT_EQ(runtime_->backfill, nullptr);
  ASSERT_NE(runtime_->retriever, nullptr);
  EXPECT_EQ(runtime_->retriever->options().max_facts, 5u);
  EXPECT_EQ(runtime_->retriever->options().budget_chars, 4000u);
}

}  // namespace
}  // namespace mend::app
