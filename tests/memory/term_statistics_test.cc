#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::Gt;

TEST(PorterStemTest, FollowsThePublishedAlgorithm) {
  const std::vector<std::pair<std::string_view, std::string_view>> pairs = {
      {"caresses", "caress"},
      {"ponies", "poni"},
      {"ties", "ti"},
      {"caress", "caress"},
      {"cats", "cat"},
      {"feed", "feed"},
      {"agreed", "agre"},
      {"plastered", "plaster"},
      {"motoring", "motor"},
      {"sing", "sing"},
      {"conflated", "conflat"},
      {"troubled", "troubl"},
      {"sized", "size"},
      {"hopping", "hop"},
      {"falling", "fall"},
      {"hissing", "hiss"},
      {"filing", "file"},
      {"happy", "happi"},
      {"sky", "sky"},
      {"relational", "relat"},
      {"conditional", "condit"},
      {"rational", "ration"},
      {"generalization", "gener"},
      {"controlling", "control"},
      {"connections", "connect"},
      {"connecting", "connect"},
      {"deployment", "deploy"},
  };
  for (const auto& [word, stem] : pairs) EXPECT_EQ(PorterStem(word), stem) << word;
}

TEST(PorterStemTest, GroupsTheFormsOfAWord) {
  EXPECT_EQ(PorterStem("migrations"), PorterStem("migrate"));
  EXPECT_EQ(PorterStem("migration"), PorterStem("migrated"));
  EXPECT_EQ(PorterStem("running"), PorterStem("run"));
  EXPECT_EQ(PorterStem("databases"), PorterStem("database"));
}

TEST(PorterStemTest, LeavesShortWordsNumbersAndOtherScriptsAlone) {
  EXPECT_EQ(PorterStem("is"), "is");
  EXPECT_EQ(PorterStem("utf8"), "utf8");
  EXPECT_EQ(PorterStem("v2ing"), "v2ing");
  EXPECT_EQ(PorterStem("Running"), "Running");  // callers lower-case first
  EXPECT_EQ(PorterStem("migrações"), "migrações");
  EXPECT_EQ(PorterStem(""), "");
}

std::unique_ptr<TermStatistics> Build(const std::vector<std::string>& texts) {
  std::vector<std::vector<std::string_view>> docs;
  for (const std::string& t : texts) docs.push_back({t});
  return TermStatistics::Build(docs);
}

// What TermStatistics::Match relies on to stem only the tokens that may have a query's stem: a
// stem is never longer than its token, keeps its first byte, and its first two when it has three
// or more. Every token of up to three letters and digits, and words made of stems and the
// suffixes Porter's rules take off, one or two of them.
TEST(PorterStemTest, KeepsAStemsFirstTwoBytes) {
  std::vector<std::string> tokens;
  const std::string letters = "abcdefghijklmnopqrstuvwxyz0";
  for (char a : letters) {
    tokens.push_back({a});
    for (char b : letters) {
      tokens.push_back({a, b});
      for (char c : letters) tokens.push_back({a, b, c});
    }
  }
  const char* stems[] = {"",    "a",   "y",    "ay",   "by",  "o",    "ab", "at",
                         "bl",  "iz",  "ho",   "hop",  "ra",  "rel",  "tr", "gener",
                         "cry", "fly", "agre", "prob", "val", "happ", "ie", "oe"};
  const char* suffixes[] = {
      "",      "ational", "tional",  "enci",  "anci",  "izer",  "bli",     "alli",    "entli",
      "eli",   "ousli",   "ization", "ation", "ator",  "alism", "iveness", "fulness", "ousness",
      "aliti", "iviti",   "biliti",  "logi",  "icate", "ative", "alize",   "iciti",   "ical",
      "ful",   "ness",    "al",      "ance",  "ence",  "er",    "ic",      "able",    "ible",
      "ant",   "ement",   "ment",    "ent",   "ion",   "ou",    "ism",     "ate",     "iti",
      "ous",   "ive",     "ize",     "sses",  "ies",   "ss",    "s",       "eed",     "ed",
      "ing",   "y",       "e",       "ll",    "ly",    "bly",   "ied",     "ying",    "eing"};
  for (const char* stem : stems) {
    for (const char* first : suffixes) {
      for (const char* second : suffixes) tokens.push_back(std::string(stem) + first + second);
    }
  }
  for (const std::string& token : tokens) {
    if (token.empty()) continue;
    const std::string stem = PorterStem(token);
    ASSERT_FALSE(stem.empty()) << token;
    EXPECT_LE(stem.size(), token.size()) << token << " -> " << stem;
    EXPECT_EQ(stem[0], token[0]) << token << " -> " << stem;
    if (stem.size() >= 3) {
      EXPECT_EQ(stem.substr(0, 2), token.substr(0, 2)) << token << " -> " << stem;
    }
  }
}

// Match stems only the tokens that start like a query stem, and finds what stemming every token
// finds: stems shorter than their tokens' first two bytes allow ("ays" is "ai"), and words that
// Porter's rules shorten to a query's stem.
TEST(TermStatisticsTest, MatchFindsWhatStemmingEveryTokenFinds) {
  const std::string text =
      "ays ties tie relational conditional happy agreed feed by sky probably hoping hopping";
  const std::vector<std::string> words = {"ai",        "ti",    "tying", "relate", "conditions",
                                          "happiness", "agree", "fed",   "bye",    "skies",
                                          "probable",  "hope",  "hop"};
  auto stats = TermStatistics::Build({{text}});
  const auto query = stats->Query(words);
  size_t expected = 0;
  std::istringstream tokens_in(text);
  std::vector<std::string> stems;
  for (std::string token; tokens_in >> token;) stems.push_back(PorterStem(token));
  for (const auto& q : query) {
    expected += std::find(stems.begin(), stems.end(), q.term) != stems.end();
  }
  EXPECT_EQ(expected, 9u);  // all but "ty", "fed", "bye" and "ski"
  EXPECT_EQ(stats->Match(query, text).matched, expected);
}

TEST(TermStatisticsTest, AWordInEveryDocumentStillWeighsSomething) {
  auto stats = Build({"deploy payments", "deploy the database", "deploy smoke tests"});
  EXPECT_EQ(stats->documents(), 3u);
  const auto query = stats->Query(QueryTerms("deploy payments"));
  ASSERT_EQ(query.size(), 2u);
  EXPECT_EQ(query[0].term, PorterStem("deploy"));
  EXPECT_THAT(query[0].idf, Gt(0.0));
  EXPECT_THAT(query[0].idf, DoubleNear(std::log(1 + 0.5 / 3.5), 1e-12));
  EXPECT_THAT(query[1].idf, DoubleNear(stats->RareIdf(), 1e-12));
  EXPECT_GT(query[1].idf, query[0].idf);
}

TEST(TermStatisticsTest, IdfIsLucenes) {
  auto stats = Build({"a1 x", "a2 x", "a3 x", "a4 x", "a5 x"});
  EXPECT_THAT(stats->Idf(0), DoubleNear(std::log(1 + 5.5 / 0.5), 1e-12));
  EXPECT_THAT(stats->Idf(1), DoubleNear(std::log(1 + 4.5 / 1.5), 1e-12));
  EXPECT_THAT(stats->Idf(5), DoubleNear(std::log(1 + 0.5 / 5.5), 1e-12));
  EXPECT_GT(stats->Idf(5), 0.0);
}

TEST(TermStatisticsTest, ADocumentCountsOncePerStem) {
  auto stats = Build({"migration migrations migrated", "nothing here"});
  const auto query = stats->Query({"migrate"});
  ASSERT_EQ(query.size(), 1u);
  EXPECT_THAT(query[0].idf, DoubleNear(stats->Idf(1), 1e-12));
}

TEST(TermStatisticsTest, MatchCountsStemsCoverageAndMatchedWords) {
  auto stats = Build({"Deploy payments after running the database migrations",
                      "Rotate the API keys of the payments service monthly",
                      "The staging database is reset every night"});
  const auto query = stats->Query(QueryTerms("deploying payments; the migration did not run"));
  // deploy, payment, migrat, run: "did" and "not" are stop words.
  ASSERT_EQ(query.size(), 4u);
  LexicalMatch first = stats->Match(query, "Deploy payments after running the database migrations");
  EXPECT_EQ(first.matched, 4u);
  EXPECT_THAT(first.coverage, DoubleNear(1.0, 1e-12));
  EXPECT_GT(first.bm25, 0.0);
  LexicalMatch keys = stats->Match(query, "Rotate the API keys of the payments service monthly");
  EXPECT_EQ(keys.matched, 1u);
  EXPECT_LT(keys.coverage, 0.25);
  EXPECT_LT(keys.bm25, first.bm25);
  LexicalMatch none = stats->Match(query, "The staging database is reset every night");
  EXPECT_EQ(none.matched, 0u);
  EXPECT_EQ(none.bm25, 0.0);
  EXPECT_EQ(none.coverage, 0.0);
}

TEST(TermStatisticsTest, RepeatsSaturateAndLongTextsWeighLess) {
  auto stats = Build({"alpha beta gamma", "delta epsilon zeta", "eta theta iota"});
  const auto query = stats->Query({"alpha"});
  const double once = stats->Match(query, "alpha beta gamma").bm25;
  const double twice = stats->Match(query, "alpha alpha gamma").bm25;
  const double diluted = stats->Match(query, "alpha beta gamma delta epsilon zeta eta").bm25;
  EXPECT_GT(twice, once);
  EXPECT_LT(twice, 2 * once);
  EXPECT_LT(diluted, once);
}

TEST(TermStatisticsTest, ASingleDocumentMemoryScores) {
  auto stats = Build({"Deploy payments after running the database migrations"});
  const auto query = stats->Query(QueryTerms("deploy payments"));
  LexicalMatch match = stats->Match(query, "Deploy payments after running the database migrations");
  EXPECT_EQ(match.matched, 2u);
  EXPECT_THAT(match.coverage, DoubleNear(1.0, 1e-12));
  // Each word is a rare word here; at the average length the tf part is exactly 1.
  EXPECT_THAT(match.bm25 / stats->RareIdf(), DoubleNear(2.0, 1e-9));
}

TEST(TermStatisticsTest, StopWordsLengthenATextForFtsBm25Only) {
  auto stats = Build({"alpha beta", "gamma delta", "epsilon zeta"});
  const auto query = stats->Query({"alpha"});
  const LexicalMatch terse = stats->Match(query, "alpha beta");
  const LexicalMatch wordy = stats->Match(query, "the alpha of the beta and to it");
  EXPECT_THAT(wordy.bm25, DoubleNear(terse.bm25, 1e-12));
  EXPECT_LT(wordy.fts_bm25, terse.fts_bm25);
}

TEST(TermStatisticsTest, AStopWordWithAQueryWordsStemMatchesForFtsBm25Only) {
  // FTS5 indexes "on" and stems "ones" to "on"; the query word matches the stop word there.
  auto stats = Build({"put it on the shelf", "alpha beta", "gamma delta", "epsilon zeta"});
  const auto query = stats->Query({"ones"});
  ASSERT_EQ(query.size(), 1u);
  EXPECT_THAT(query[0].fts_idf, DoubleNear(stats->FtsIdf(1), 1e-12));
  EXPECT_THAT(query[0].idf, DoubleNear(stats->Idf(0), 1e-12));
  const LexicalMatch match = stats->Match(query, "put it on the shelf");
  EXPECT_GT(match.fts_bm25, 0.0);
  EXPECT_EQ(match.bm25, 0.0);
  EXPECT_EQ(match.matched, 0u);
}

TEST(TermStatisticsTest, EmptyQueryOrTextMatchesNothing) {
  auto stats = Build({"alpha"});
  EXPECT_EQ(stats->Match({}, "alpha").matched, 0u);
  EXPECT_EQ(stats->Match(stats->Query({"alpha"}), "").matched, 0u);
  EXPECT_THAT(stats->Query({}), ElementsAre());
}

TEST(TermStatisticsTest, PunctuationOfAnyScriptSeparatesWordsAsInFts5) {
  auto stats = Build({"/usr/bin/env: 'python3\\r': No such file or directory",
                      "\xEF\xBB\xBFid,name starts with a byte order mark", "the café opens"});
  // QueryTerms keeps "‘python3" whole; FTS5 reads it as "python3", and so does the scoring.
  const auto query = stats->Query(QueryTerms("env: ‘python3\\r’ is missing"));
  LexicalMatch match = stats->Match(query, "/usr/bin/env: 'python3\\r': No such file or directory");
  EXPECT_EQ(match.matched, 3u);  // env, python3, r
  EXPECT_EQ(stats->Match(stats->Query({"id"}), "\xEF\xBB\xBFid,name").matched, 1u);
  EXPECT_EQ(stats->Match(stats->Query({"café"}), "the café opens").matched, 1u);
}

}  // namespace
}  // namespace mend::memory
