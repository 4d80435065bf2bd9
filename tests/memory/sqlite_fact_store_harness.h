#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <memory>
#include <string>

#include "mend/memory/fact_store.h"
#include "tests/memory/fact_store_conformance.h"

namespace mend::memory::testing {

// A fresh temporary directory holding one SQLite database, removed with the harness.
class SqliteFactStoreHarness : public FactStoreHarness {
 public:
  SqliteFactStoreHarness() {
    std::string pattern = ::testing::TempDir() + "mend_facts_XXXXXX";
    const char* made = mkdtemp(pattern.data());
    EXPECT_NE(made, nullptr) << pattern;
    dir_ = pattern;
    path_ = dir_ + "/mend.db";
  }
  ~SqliteFactStoreHarness() override {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }

  Result<std::unique_ptr<FactStore>> Open(Clock& clock) override {
    return FactStore::Open(path_, FactStoreOptions{&clock});
  }

  const std::string& dir() const { return dir_; }
  const std::string& path() const { return path_; }

 private:
  std::string dir_;
  std::string path_;
};

}  // namespace mend::memory::testing
