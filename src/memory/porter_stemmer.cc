// PorterStem of mend/memory/lexical.h: M. F. Porter's suffix-stripping algorithm in the form
// SQLite's `porter` tokenizer applies (the published revision, whose step 2 maps "bli" to "ble"
// and "logi" to "log"), so the words mend scores group the way FTS5 matched them.
//
// A word is [C](VC)^m[V] over runs of consonants C and vowels V, where `y` is a vowel after a
// consonant and a digit is a consonant; m is its measure. Each step tries its rules by longest
// matching suffix; when that rule's condition on the remaining stem fails, the step changes
// nothing.

#include <string>
#include <string_view>

#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

// SQLite's porter tokenizer passes longer tokens through unstemmed.
constexpr size_t kMaxStemmedBytes = 64;

struct Rule {
  std::string_view suffix;
  std::string_view replacement;
};

class Word {
 public:
  explicit Word(std::string_view text) : w_(text) {}
  std::string Take() { return std::move(w_); }
  size_t size() const { return w_.size(); }

  bool Consonant(size_t i) const {
    switch (w_[i]) {
      case 'a':
      case 'e':
      case 'i':
      case 'o':
      case 'u':
        return false;
      case 'y':
        return i == 0 || !Consonant(i - 1);
      default:
        return true;
    }
  }
  // m of the first `len` letters.
  int Measure(size_t len) const {
    size_t i = 0;
    while (i < len && Consonant(i)) ++i;
    int m = 0;
    while (i < len) {
      while (i < len && !Consonant(i)) ++i;
      if (i == len) break;
      while (i < len && Consonant(i)) ++i;
      ++m;
    }
    return m;
  }
  bool HasVowel(size_t len) const {
    for (size_t i = 0; i < len; ++i) {
      if (!Consonant(i)) return true;
    }
    return false;
  }
  bool DoubleConsonant(size_t len) const {
    return len >= 2 && w_[len - 1] == w_[len - 2] && Consonant(len - 1);
  }
  // consonant-vowel-consonant, the last not w, x or y.
  bool Cvc(size_t len) const {
    if (len < 3 || !Consonant(len - 3) || Consonant(len - 2) || !Consonant(len - 1)) return false;
    const char last = w_[len - 1];
    return last != 'w' && last != 'x' && last != 'y';
  }
  bool EndsWith(std::string_view suffix) const { return std::string_view(w_).ends_with(suffix); }
  char Last() const { return w_.back(); }
  void Replace(size_t suffix_len, std::string_view replacement) {
    w_.resize(w_.size() - suffix_len);
    w_ += replacement;
  }

  // The longest rule whose suffix ends the word, or nullptr.
  template <size_t N>
  const Rule* Longest(const Rule (&rules)[N]) const {
    const Rule* best = nullptr;
    for (const Rule& r : rules) {
      if (r.suffix.size() < w_.size() && EndsWith(r.suffix) &&
          (best == nullptr || r.suffix.size() > best->suffix.size())) {
        best = &r;
      }
    }
    return best;
  }

 private:
  std::string w_;
};

constexpr Rule kStep2[] = {
    {"ational", "ate"}, {"tional", "tion"}, {"enci", "ence"}, {"anci", "ance"}, {"izer", "ize"},
    {"bli", "ble"},     {"alli", "al"},     {"entli", "ent"}, {"eli", "e"},     {"ousli", "ous"},
    {"ization", "ize"}, {"ation", "ate"},   {"ator", "ate"},  {"alism", "al"},  {"iveness", "ive"},
    {"fulness", "ful"}, {"ousness", "ous"}, {"aliti", "al"},  {"iviti", "ive"}, {"biliti", "ble"},
    {"logi", "log"},
};
constexpr Rule kStep3[] = {
    {"icate", "ic"}, {"ative", ""}, {"alize", "al"}, {"iciti", "ic"},
    {"ical", "ic"},  {"ful", ""},   {"ness", ""},
};
constexpr Rule kStep4[] = {
    {"al", ""},  {"ance", ""},  {"ence", ""}, {"er", ""},  {"ic", ""},  {"able", ""}, {"ible", ""},
    {"ant", ""}, {"ement", ""}, {"ment", ""}, {"ent", ""}, {"ion", ""}, {"ou", ""},   {"ism", ""},
    {"ate", ""}, {"iti", ""},   {"ous", ""},  {"ive", ""}, {"ize", ""},
};

void Step1a(Word& w) {
  if (w.EndsWith("sses") || w.EndsWith("ies")) {
    w.Replace(2, "");
  } else if (!w.EndsWith("ss") && w.EndsWith("s")) {
    w.Replace(1, "");
  }
}

void Step1b(Word& w) {
  if (w.EndsWith("eed")) {
    if (w.Measure(w.size() - 3) > 0) w.Replace(1, "");
    return;
  }
  size_t cut = 0;
  if (w.EndsWith("ed") && w.HasVowel(w.size() - 2)) cut = 2;
  if (w.EndsWith("ing") && w.HasVowel(w.size() - 3)) cut = 3;
  if (cut == 0) return;
  w.Replace(cut, "");
  if (w.EndsWith("at") || w.EndsWith("bl") || w.EndsWith("iz")) {
    w.Replace(0, "e");
  } else if (w.DoubleConsonant(w.size()) && w.Last() != 'l' && w.Last() != 's' && w.Last() != 'z') {
    w.Replace(1, "");
  } else if (w.Measure(w.size()) == 1 && w.Cvc(w.size())) {
    w.Replace(0, "e");
  }
}

void Step1c(Word& w) {
  if (w.EndsWith("y") && w.HasVowel(w.size() - 1)) w.Replace(1, "i");
}

// Steps 2 and 3: the longest rule applies when the stem before it has m > 0.
template <size_t N>
void ReplaceIfMeasured(Word& w, const Rule (&rules)[N]) {
  const Rule* r = w.Longest(rules);
  if (r != nullptr && w.Measure(w.size() - r->suffix.size()) > 0) {
    w.Replace(r->suffix.size(), r->replacement);
  }
}

void Step4(Word& w) {
  const Rule* r = w.Longest(kStep4);
  if (r == nullptr) return;
  const size_t stem = w.size() - r->suffix.size();
  if (w.Measure(stem) <= 1) return;
  if (r->suffix == "ion") {
    Word copy = w;
    copy.Replace(3, "");
    if (copy.Last() != 's' && copy.Last() != 't') return;
  }
  w.Replace(r->suffix.size(), "");
}

void Step5(Word& w) {
  if (w.EndsWith("e")) {
    const size_t stem = w.size() - 1;
    const int m = w.Measure(stem);
    if (m > 1 || (m == 1 && !w.Cvc(stem))) w.Replace(1, "");
  }
  if (w.EndsWith("ll") && w.Measure(w.size()) > 1) w.Replace(1, "");
}

}  // namespace

std::string PorterStem(std::string_view word) {
  // FTS5 stems tokens of 3 to 64 bytes, digits read as consonants ("k8s" becomes "k8"). Words
  // with an upper-case letter or another script stay as they are: FTS5 would see them folded
  // (lower-cased, diacritics removed), which mend does not reproduce.
  if (word.size() <= 2 || word.size() > kMaxStemmedBytes) return std::string(word);
  for (char c : word) {
    if ((c < 'a' || c > 'z') && (c < '0' || c > '9')) return std::string(word);
  }
  Word w(word);
  Step1a(w);
  Step1b(w);
  Step1c(w);
  ReplaceIfMeasured(w, kStep2);
  ReplaceIfMeasured(w, kStep3);
  Step4(w);
  Step5(w);
  return w.Take();
}

}  // namespace mend::memory
