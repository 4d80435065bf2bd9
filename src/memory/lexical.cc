#include "mend/memory/lexical.h"

#include <algorithm>
#include <array>
#include <bitset>
#include <string>
#include <unordered_set>

#include "mend/base/utf8.h"

namespace mend::memory {
namespace {

bool IsTermByte(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80;
}

// English function words, the fragments that splitting contractions on the apostrophe leaves
// behind ("don't" -> "don", "t"), the contractions themselves for callers that pass them whole,
// and words that appear in almost every task request and so carry no signal for retrieval.
constexpr std::string_view kStopWords[] = {
    "a",        "about",   "above",     "after",   "again",     "against",  "all",        "also",
    "am",       "an",      "and",       "any",     "are",       "aren",     "aren't",     "as",
    "at",       "be",      "because",   "been",    "before",    "being",    "below",      "between",
    "both",     "but",     "by",        "can",     "can't",     "cannot",   "could",      "couldn",
    "couldn't", "d",       "did",       "didn",    "didn't",    "do",       "does",       "doesn",
    "doesn't",  "doing",   "don",       "don't",   "down",      "during",   "each",       "etc",
    "few",      "for",     "from",      "further", "get",       "gets",     "getting",    "got",
    "had",      "hadn",    "hadn't",    "has",     "hasn",      "hasn't",   "have",       "haven",
    "haven't",  "having",  "he",        "her",     "here",      "hers",     "herself",    "him",
    "himself",  "his",     "how",       "i",       "i'd",       "i'll",     "i'm",        "i've",
    "if",       "in",      "into",      "is",      "isn",       "isn't",    "it",         "it's",
    "its",      "itself",  "just",      "kindly",  "let",       "let's",    "ll",         "m",
    "make",     "makes",   "making",    "me",      "might",     "more",     "most",       "must",
    "mustn",    "mustn't", "my",        "myself",  "need",      "needs",    "no",         "nor",
    "not",      "now",     "o",         "of",      "off",       "on",       "once",       "only",
    "or",       "other",   "our",       "ours",    "ourselves", "out",      "over",       "own",
    "please",   "re",      "s",         "same",    "shall",     "shan",     "shan't",     "she",
    "should",   "shouldn", "shouldn't", "so",      "some",      "such",     "t",          "than",
    "that",     "that's",  "the",       "their",   "theirs",    "them",     "themselves", "then",
    "there",    "there's", "these",     "they",    "they're",   "this",     "those",      "through",
    "to",       "too",     "under",     "until",   "up",        "us",       "use",        "used",
    "uses",     "using",   "ve",        "very",    "via",       "want",     "was",        "wasn",
    "wasn't",   "we",      "we're",     "were",    "weren",     "weren't",  "what",       "what's",
    "when",     "where",   "which",     "while",   "who",       "whom",     "why",        "will",
    "with",     "won",     "won't",     "would",   "wouldn",    "wouldn't", "you",        "you'd",
    "you'll",   "you're",  "you've",    "your",    "yours",     "yourself", "yourselves"};

const std::unordered_set<std::string_view>& StopWordSet() {
  static const auto* const set =
      new std::unordered_set<std::string_view>(std::begin(kStopWords), std::end(kStopWords));
  return *set;
}

// A bit per stop word, at a hash of its length and its first and last bytes: most words are ruled
// out with one look at a 512-byte table, before the set hashes all of them (retrieval asks for
// every token of every candidate).
constexpr size_t kMaxStopWordBytes = 10;
constexpr size_t kShapeBits = 4096;

size_t ShapeOf(std::string_view term) {
  return (term.size() * 131 + static_cast<unsigned char>(term.front())) * 131 +
         static_cast<unsigned char>(term.back());
}

const std::bitset<kShapeBits>& StopWordShapes() {
  static const auto* const shapes = [] {
    auto* bits = new std::bitset<kShapeBits>();
    for (std::string_view w : kStopWords) bits->set(ShapeOf(w) % kShapeBits);
    return bits;
  }();
  return *shapes;
}

}  // namespace

bool IsStopWord(std::string_view term) {
  if (term.empty() || term.size() > kMaxStopWordBytes) return false;
  if (!StopWordShapes().test(ShapeOf(term) % kShapeBits)) return false;
  return StopWordSet().count(term) > 0;
}

std::vector<std::string> QueryTerms(std::string_view text, size_t max_terms) {
  std::vector<std::string> terms;
  std::unordered_set<std::string> seen;
  size_t i = 0;
  while (i < text.size() && (max_terms == 0 || terms.size() < max_terms)) {
    if (!IsTermByte(static_cast<unsigned char>(text[i]))) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < text.size() && IsTermByte(static_cast<unsigned char>(text[i]))) ++i;
    std::string term = ToLowerAscii(text.substr(start, i - start));
    if (CountUtf8Chars(term) < 2 || IsStopWord(term)) continue;
    if (!seen.insert(term).second) continue;
    terms.push_back(std::move(term));
  }
  return terms;
}

std::string BuildFtsQuery(const std::vector<std::string>& terms) {
  std::string query;
  for (const std::string& term : terms) {
    if (term.empty()) continue;
    if (!query.empty()) query += " OR ";
    query += '"';
    for (char c : term) {
      // Inside an FTS5 string only the quote is special; a NUL would end the expression early in
      // the parser and leave the string unterminated, so it becomes a separator instead.
      if (c == '"') {
        query += "\"\"";
      } else if (c == '\0') {
        query += ' ';
      } else {
        query += c;
      }
    }
    query += '"';
  }
  return query;
}

}  // namespace mend::memory
