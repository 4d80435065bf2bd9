#pragma once

#include <string>
#include <utility>
#include <vector>

#include "mend/memory/fact_store.h"

namespace mend::app::internal {

// Stands in for a fact store that could not be opened (e.g. written by a newer mend): every call
// returns the error of the open, so memory commands report it and runs go on without memory (their
// memory hook fails, which is a hook.failed event), while commands that never touch memory
// (pending, fork, recover) are not stopped by it.
class UnavailableFactStore final : public memory::FactStore {
 public:
  explicit UnavailableFactStore(Status error) : error_(std::move(error)) {}

  Result<memory::AddResult> Add(const memory::NewFact&) override { return error_; }
  Result<memory::Fact> Get(const std::string&) override { return error_; }
  Result<std::vector<memory::Fact>> List(const memory::ListOptions&) override { return error_; }
  Status Remove(const std::string&) override { return error_; }
  Status Supersede(const std::string&, const std::string&) override { return error_; }
  Result<ImportCounts> Import(const std::vector<memory::Fact>&) override { return error_; }
  Result<std::vector<memory::LexicalHit>> SearchLexical(const std::vector<std::string>&, size_t,
                                                        const std::string&) override {
    return error_;
  }
  Result<memory::TermStatistics::Counts> CountTerms(const std::vector<std::string>&) override {
    return error_;
  }
  Result<std::vector<memory::TagMatch>> MatchTags(const std::vector<std::string>&,
                                                  const std::string&, size_t) override {
    return error_;
  }
  Result<int64_t> Generation() override { return error_; }
  Result<int64_t> VectorGeneration() override { return error_; }
  Result<int64_t> Count() override { return error_; }
  Status RecordInjection(const std::string&, const std::vector<memory::InjectedFact>&) override {
    return error_;
  }
  Result<std::vector<std::string>> InjectedInto(const std::string&) override { return error_; }
  Result<std::vector<memory::Injection>> InjectionsOfRun(const std::string&) override {
    return error_;
  }
  Result<std::vector<memory::Injection>> InjectionsOfFact(const std::string&, size_t) override {
    return error_;
  }
  Status RecordOutcome(const std::string&, bool) override { return error_; }
  Status PutEmbedding(const memory::FactVector&, const std::string&) override { return error_; }
  Result<std::vector<memory::FactVector>> Embeddings(const std::string&) override { return error_; }
  Result<int64_t> PutEmbeddings(const std::vector<memory::FactVector>&,
                                const std::string&) override {
    return error_;
  }
  Result<std::vector<memory::EmbeddingWork>> MissingEmbeddings(const std::string&, size_t,
                                                               int64_t) override {
    return error_;
  }
  Result<std::vector<memory::EmbeddingWork>> MissingEmbeddingsOf(
      const std::string&, const std::vector<std::string>&) override {
    return error_;
  }
  Result<std::vector<memory::EmbeddingCoverage>> Coverage(const std::string&) override {
    return error_;
  }
  Result<memory::FactCounts> CountFacts() override { return error_; }

 private:
  const Status error_;
};

}  // namespace mend::app::internal
