#include "mend/improve/proposal_diff.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <random>
#include <string>
#include <vector>

namespace mend::improve {
namespace {

std::string Numbered(int from, int to) {
  std::string out;
  for (int i = from; i <= to; ++i) out += "line " + std::to_string(i) + "\n";
  return out;
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    end = end == std::string::npos ? text.size() : end + 1;
    lines.push_back(text.substr(start, end - start));
    start = end;
  }
  return lines;
}

// A minimal applier for the diffs UnifiedDiff writes: checks every context and removed line
// against `before` and returns the patched text, or "<mismatch>" when the diff does not fit.
std::string Apply(const std::string& before, const std::string& diff) {
  const std::vector<std::string> in = Lines(before);
  const std::vector<std::string> patch = Lines(diff);
  std::string out;
  std::size_t next = 0;  // next unconsumed line of `in`
  for (std::size_t p = 2; p < patch.size(); ++p) {
    const std::string& line = patch[p];
    if (line.rfind("@@ -", 0) == 0) {
      std::size_t start = std::stoul(line.substr(4));
      const std::size_t comma = line.find(',');
      const std::size_t space = line.find(' ', 4);
      const bool empty = comma < space && line.substr(comma, 3) == ",0 ";
      const std::size_t first =
          empty ? start : start - 1;  // 0-based index of the hunk's first line
      if (first < next || first > in.size()) return "<mismatch>";
      for (; next < first; ++next) out += in[next];
      continue;
    }
    if (line.rfind("\\ No newline", 0) == 0) continue;  // handled with the line before it
    // The diff format ends every line with '\n'; a marker after it means the text has none.
    std::string text = line.substr(1);
    if (p + 1 < patch.size() && patch[p + 1].rfind("\\ No newline", 0) == 0) text.pop_back();
    if (line[0] == '+') {
      out += text;
      continue;
    }
    if (next >= in.size() || in[next] != text) return "<mismatch>";
    if (line[0] == ' ') out += text;
    ++next;
  }
  for (; next < in.size(); ++next) out += in[next];
  return out;
}

TEST(UnifiedDiffTest, EqualTextsHaveNoDiff) {
  EXPECT_EQ(UnifiedDiff("instructions.md", "", ""), "");
  EXPECT_EQ(UnifiedDiff("instructions.md", "a\nb\n", "a\nb\n"), "");
}

TEST(UnifiedDiffTest, OneChangedLineWithContext) {
  const std::string before = Numbered(1, 10);
  std::string after = before;
  after.replace(after.find("line 5\n"), 7, "line five\n");
  EXPECT_EQ(UnifiedDiff("instructions.md", before, after),
            "--- a/instructions.md\n"
            "+++ b/instructions.md\n"
            "@@ -2,7 +2,7 @@\n"
            " line 2\n"
            " line 3\n"
            " line 4\n"
            "-line 5\n"
            "+line five\n"
            " line 6\n"
            " line 7\n"
            " line 8\n");
}

TEST(UnifiedDiffTest, SingleLineRangesOmitTheCount) {
  EXPECT_EQ(UnifiedDiff("skills/a.md", "old\n", "new\n"),
            "--- a/skills/a.md\n+++ b/skills/a.md\n@@ -1 +1 @@\n-old\n+new\n");
}

TEST(UnifiedDiffTest, DistantChangesMakeSeparateHunks) {
  const std::string before = Numbered(1, 20);
  std::string after = before;
  after.replace(after.find("line 2\n"), 7, "two\n");
  after.replace(after.find("line 18\n"), 8, "");
  EXPECT_EQ(UnifiedDiff("x.md", before, after),
            "--- a/x.md\n+++ b/x.md\n"
            "@@ -1,5 +1,5 @@\n line 1\n-line 2\n+two\n line 3\n line 4\n line 5\n"
            "@@ -15,6 +15,5 @@\n line 15\n line 16\n line 17\n-line 18\n line 19\n line 20\n");
}

TEST(UnifiedDiffTest, ChangesSixLinesApartShareAHunkSevenDoNot) {
  const std::string before = Numbered(1, 20);
  std::string six = before;  // lines 4 and 11 change: 6 unchanged lines between
  six.replace(six.find("line 4\n"), 7, "four\n");
  six.replace(six.find("line 11\n"), 8, "eleven\n");
  std::string seven = before;  // lines 4 and 12: 7 unchanged lines between
  seven.replace(seven.find("line 4\n"), 7, "four\n");
  seven.replace(seven.find("line 12\n"), 8, "twelve\n");
  auto hunks = [](const std::string& diff) {
    std::size_t n = 0;
    for (std::size_t at = diff.find("\n@@"); at != std::string::npos;
         at = diff.find("\n@@", at + 1))
      ++n;
    return n;
  };
  EXPECT_EQ(hunks(UnifiedDiff("x.md", before, six)), 1u);
  EXPECT_EQ(hunks(UnifiedDiff("x.md", before, seven)), 2u);
  EXPECT_EQ(Apply(before, UnifiedDiff("x.md", before, six)), six);
  EXPECT_EQ(Apply(before, UnifiedDiff("x.md", before, seven)), seven);
}

TEST(UnifiedDiffTest, AddedFile) {
  EXPECT_EQ(UnifiedDiff("skills/new.md", "", "a\nb\n"),
            "--- a/skills/new.md\n+++ b/skills/new.md\n@@ -0,0 +1,2 @@\n+a\n+b\n");
}

TEST(UnifiedDiffTest, RemovedFile) {
  EXPECT_EQ(UnifiedDiff("skills/old.md", "a\n", ""),
            "--- a/skills/old.md\n+++ b/skills/old.md\n@@ -1 +0,0 @@\n-a\n");
}

TEST(UnifiedDiffTest, InsertionAtTheTopNamesTheLineBefore) {
  EXPECT_EQ(UnifiedDiff("x.md", "b\n", "a\nb\n"),
            "--- a/x.md\n+++ b/x.md\n@@ -1 +1,2 @@\n+a\n b\n");
  EXPECT_EQ(UnifiedDiff("x.md", "a\nb\nc\nd\ne\n", "a\nb\nc\nd\ne\nf\n"),
            "--- a/x.md\n+++ b/x.md\n@@ -3,3 +3,4 @@\n c\n d\n e\n+f\n");
}

TEST(UnifiedDiffTest, MissingFinalNewlineIsMarked) {
  EXPECT_EQ(UnifiedDiff("x.md", "a\nb", "a\nb\n"),
            "--- a/x.md\n+++ b/x.md\n@@ -1,2 +1,2 @@\n a\n-b\n\\ No newline at end of file\n+b\n");
  EXPECT_EQ(Apply("a\nb", UnifiedDiff("x.md", "a\nb", "a\nb\n")), "a\nb\n");
  EXPECT_EQ(Apply("a\nb\n", UnifiedDiff("x.md", "a\nb\n", "a\nc")), "a\nc");
}

TEST(UnifiedDiffTest, ControlCharactersInThePathCannotBreakTheHeader) {
  EXPECT_EQ(UnifiedDiff("a\nb.md", "x\n", "y\n").substr(0, 26), "--- a/a?b.md\n+++ b/a?b.md\n");
}

TEST(UnifiedDiffTest, ApplyingTheDiffReproducesAfter) {
  std::mt19937 rng(20240611);
  const std::vector<std::string> vocabulary = {"alpha\n", "beta\n", "gamma\n", "delta\n", "\n"};
  for (int round = 0; round < 300; ++round) {
    auto random_text = [&] {
      std::string text;
      const int n = static_cast<int>(rng() % 25);
      for (int i = 0; i < n; ++i) text += vocabulary[rng() % vocabulary.size()];
      if (!text.empty() && rng() % 5 == 0) text.pop_back();  // no final newline
      return text;
    };
    const std::string before = random_text();
    const std::string after = random_text();
    const std::string diff = UnifiedDiff("f.md", before, after);
    if (before == after) {
      EXPECT_EQ(diff, "");
      continue;
    }
    EXPECT_EQ(Apply(before, diff), after) << "round " << round << "\n" << diff;
  }
}

}  // namespace
}  // namespace mend::improve
