#include "mend/memory/lexical.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <string>
#include <vector>

namespace mend::memory {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(QueryTermsTest, DropsStopWordsAndLowerCases) {
  EXPECT_THAT(QueryTerms("Please make the Parser handle YAML files"),
              ElementsAre("parser", "handle", "yaml", "files"));
}

TEST(QueryTermsTest, DropsGenericTaskWordsAndContractionFragments) {
  EXPECT_THAT(QueryTerms("I need to get it working via curl, don't use wget"),
              ElementsAre("working", "curl", "wget"));
}

TEST(QueryTermsTest, DropsOneCharacterTerms) {
  EXPECT_THAT(QueryTerms("x y z go C++ é"), ElementsAre("go"));
}

TEST(QueryTermsTest, RemovesDuplicatesKeepingFirstAppearance) {
  EXPECT_THAT(QueryTerms("timeout Retry TIMEOUT retry backoff timeout"),
              ElementsAre("timeout", "retry", "backoff"));
}

TEST(QueryTermsTest, SplitsOnPunctuationAndKeepsDigits) {
  EXPECT_THAT(QueryTerms("main.go:42 returned HTTP-429 (rate_limit)"),
              ElementsAre("main", "go", "42", "returned", "http", "429", "rate", "limit"));
}

TEST(QueryTermsTest, CapsTheNumberOfTermsAfterFiltering) {
  EXPECT_THAT(QueryTerms("the alpha and beta or gamma delta", 2), ElementsAre("alpha", "beta"));
  EXPECT_THAT(QueryTerms("alpha beta alpha gamma", 0), ElementsAre("alpha", "beta", "gamma"));
}

TEST(QueryTermsTest, KeepsUtf8WordsWhole) {
  EXPECT_THAT(QueryTerms("Übersetzung für café 東京"),
              ElementsAre("Übersetzung", "für", "café", "東京"));
}

TEST(QueryTermsTest, EmptyOrOnlyStopWordsGivesNoTerms) {
  EXPECT_THAT(QueryTerms(""), IsEmpty());
  EXPECT_THAT(QueryTerms("  the of and, it's --- ?!"), IsEmpty());
}

TEST(IsStopWordTest, KnowsCommonWordsContractionsAndTaskWords) {
  for (const char* word : {"the", "and", "is", "don't", "don", "isn", "ll", "get", "make", "use",
                           "need", "please", "via"}) {
    EXPECT_TRUE(IsStopWord(word)) << word;
  }
  for (const char* word : {"parser", "sqlite", "timeout", "go", "", "The"}) {
    EXPECT_FALSE(IsStopWord(word)) << word;
  }
}

TEST(IsStopWordTest, KnowsTheLongestAndShortestAndNotTheirLookalikes) {
  for (const char* word :
       {"a", "i", "o", "yourselves", "themselves", "shouldn't", "shouldn", "i'd", "etc"}) {
    EXPECT_TRUE(IsStopWord(word)) << word;
  }
  for (const char* word :
       {"yourselvez", "themselvess", "b", "etcd", "oo", "aa", "youryourselves", "tthe"}) {
    EXPECT_FALSE(IsStopWord(word)) << word;
  }
}

TEST(BuildFtsQueryTest, OrsQuotedTerms) {
  EXPECT_EQ(BuildFtsQuery({"alpha", "beta", "gamma"}), R"("alpha" OR "beta" OR "gamma")");
  EXPECT_EQ(BuildFtsQuery({"alpha"}), R"("alpha")");
}

TEST(BuildFtsQueryTest, EmptyWhenNoTerms) {
  EXPECT_EQ(BuildFtsQuery({}), "");
  EXPECT_EQ(BuildFtsQuery({""}), "");
}

TEST(BuildFtsQueryTest, DoublesEmbeddedQuotesAndQuotesSyntax) {
  EXPECT_EQ(BuildFtsQuery({"say\"hi", "a*", "NEAR(a b)", "content:x"}),
            R"q("say""hi" OR "a*" OR "NEAR(a b)" OR "content:x")q");
}

// An in-memory FTS5 table that runs MATCH expressions through the real parser.
class Fts5Table {
 public:
  Fts5Table() {
    sqlite3_open(":memory:", &db_);
    Exec("CREATE VIRTUAL TABLE facts USING fts5(content, tags, tokenize = 'porter unicode61')");
    Exec("INSERT INTO facts VALUES ('retry the request with backoff', 'http')");
    Exec("INSERT INTO facts VALUES ('content near the end', 'and or not')");
  }
  ~Fts5Table() { sqlite3_close(db_); }

  void Exec(const char* sql) {
    ASSERT_EQ(sqlite3_exec(db_, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db_);
  }

  // The number of matching rows, or -1 with the error in `error` when SQLite rejects the query.
  int Count(const std::string& match, std::string* error) {
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db_, "SELECT count(*) FROM facts WHERE facts MATCH ?", -1, &stmt, nullptr);
    sqlite3_bind_text(stmt, 1, match.data(), static_cast<int>(match.size()), SQLITE_TRANSIENT);
    int rc = sqlite3_step(stmt);
    int count = rc == SQLITE_ROW ? sqlite3_column_int(stmt, 0) : -1;
    if (rc != SQLITE_ROW) *error = sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
    return count;
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST(BuildFtsQueryTest, HostileTermsAreAcceptedByFts5) {
  Fts5Table table;
  const std::vector<std::vector<std::string>> hostile = {{"\""},
                                                         {"\"\""},
                                                         {"*"},
                                                         {"a*"},
                                                         {"NEAR(a b)"},
                                                         {"("},
                                                         {")"},
                                                         {"content:x"},
                                                         {"AND"},
                                                         {"OR"},
                                                         {"NOT"},
                                                         {"^retry"},
                                                         {"-retry"},
                                                         {"{content}:x"},
                                                         {"+"},
                                                         {"retry\"OR"},
                                                         {std::string("nul\0x", 5)},
                                                         {"\"", "*", "AND"},
                                                         {"retry", "("},
                                                         {"NEAR"}};
  for (const auto& terms : hostile) {
    std::string query = BuildFtsQuery(terms);
    std::string error;
    EXPECT_GE(table.Count(query, &error), 0) << query << ": " << error;
  }
}

TEST(BuildFtsQueryTest, HostileUserTextThroughQueryTermsIsAcceptedByFts5) {
  Fts5Table table;
  for (const char* text :
       {"\"unbalanced", "retry*", "NEAR(retry backoff, 2)", "(retry", "content:retry",
        "retry AND NOT backoff", "^retry", "", "\"\" OR *", "tags:http OR content:x"}) {
    std::string query = BuildFtsQuery(QueryTerms(text));
    if (query.empty()) continue;  // callers skip the MATCH when there are no terms
    std::string error;
    EXPECT_GE(table.Count(query, &error), 0) << text << " -> " << query << ": " << error;
  }
}

TEST(BuildFtsQueryTest, QuotedOperatorWordsMatchAsPlainWords) {
  Fts5Table table;
  std::string error;
  // As operators these would be syntax errors; quoted they are ordinary tokens.
  EXPECT_EQ(table.Count(BuildFtsQuery({"AND"}), &error), 1) << error;
  EXPECT_EQ(table.Count(BuildFtsQuery({"content:near"}), &error), 1) << error;
  EXPECT_EQ(table.Count(BuildFtsQuery({"retry", "end"}), &error), 2) << error;
  EXPECT_EQ(table.Count(BuildFtsQuery({"missing"}), &error), 0) << error;
}

}  // namespace
}  // namespace mend::memory
