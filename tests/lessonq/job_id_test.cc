#include <gtest/gtest.h>

#include <string>

#include "mend/lessonq/job.h"

namespace mend::lessonq {
namespace {

LessonRequest Base() {
  return {"Edit main.go", "used full rewrite", "ERROR: file too large", "error"};
}

// The example of docs/wal_format.md, "Job ids".
TEST(JobIdTest, KnownVectorFromTheWalFormat) { EXPECT_EQ(JobIdFor(Base()), "bba86ebf380b9dbc"); }

TEST(JobIdTest, TaskCaseAndWhiteSpaceDoNotMatter) {
  LessonRequest r = Base();
  r.task = " \t EDIT\n\n  Main.GO \u3000";
  EXPECT_EQ(JobIdFor(r), "bba86ebf380b9dbc");
}

TEST(JobIdTest, TriggerIsLowerCasedAndTrimmed) {
  LessonRequest r = Base();
  r.trigger = "  ERROR\n";
  EXPECT_EQ(JobIdFor(r), "bba86ebf380b9dbc");
}

TEST(JobIdTest, AttemptAndOutcomeAreOnlyTrimmed) {
  LessonRequest r = Base();
  r.attempt = "\n used full rewrite  ";
  r.outcome = " ERROR: file too large\t";
  EXPECT_EQ(JobIdFor(r), "bba86ebf380b9dbc");

  // Values computed independently with SHA-256 over the normalized key.
  r = Base();
  r.attempt = "Used full rewrite";
  EXPECT_EQ(JobIdFor(r), "325fab19b4f82c5e");
  r = Base();
  r.outcome = "error: file too large";
  EXPECT_EQ(JobIdFor(r), "26f3f6ecaff56c30");
  r = Base();
  r.attempt = "used  full rewrite";  // inner white space is kept
  EXPECT_NE(JobIdFor(r), "bba86ebf380b9dbc");
}

TEST(JobIdTest, NonAsciiTaskIsLowerCased) {
  // sha256("task:ação ñ σ привет\0trigger:manual\0attempt:x\0outcome:y")[:8]
  EXPECT_EQ(JobIdFor({"AÇÃO  Ñ Σ ПРИВЕТ", "x", "y", "manual"}), "bd610880da4d2000");
  EXPECT_EQ(JobIdFor({"ação ñ σ привет", "x", "y", "MANUAL"}), "bd610880da4d2000");
}

TEST(NormalizeTaskTest, LowersLikeGo) {
  EXPECT_EQ(NormalizeTask("ÀÉÎÕÜ ß Ÿ İ Ĳ Ł Ž"), "àéîõü ß ÿ i ĳ ł ž");
  EXPECT_EQ(NormalizeTask("ΆΈΉΊΌΎΏ ΑΣΩ ϴ"), "άέήίόύώ ασω θ");  // no final-sigma rule
  EXPECT_EQ(NormalizeTask("ЁЖЯ Ѐ Ѡ Ӂ Ӏ Ԁ"), "ёжя ѐ ѡ ӂ ӏ ԁ");
  EXPECT_EQ(NormalizeTask("×÷µ 123 a-B_c"), "×÷µ 123 a-b_c");
}

TEST(NormalizeTaskTest, LowersEveryScriptLikeGo) {
  // Armenian, Latin Extended-B (titlecase DŽ and comma-below S), Cherokee, Deseret.
  EXPECT_EQ(NormalizeTask("ԱՐՄԵՆ ՄԵՍՐՈՊ ǅ Ș Ꭰ 𐐀"), "արմեն մեսրոպ ǆ ș ꭰ 𐐨");
  // sha256("task:արմեն մեսրոպ ǆ ș ꭰ 𐐨\0trigger:error\0attempt:a\0outcome:o")[:8]
  EXPECT_EQ(JobIdFor({"ԱՐՄԵՆ ՄԵՍՐՈՊ ǅ Ș Ꭰ 𐐀", "a", "o", "error"}), "e83eb78037eddde4");
}

TEST(NormalizeTaskTest, CollapsesUnicodeWhiteSpace) {
  EXPECT_EQ(NormalizeTask("\u00a0 A\u2003\u2003B \u3000"), "a b");
  EXPECT_EQ(NormalizeTask(" \t\n "), "");
}

TEST(NormalizeTaskTest, InvalidBytesBecomeReplacementCharacters) {
  EXPECT_EQ(NormalizeTask("A\xff"
                          "B"),
            "a\uFFFDb");
}

TEST(IsJobIdTest, AcceptsOnlySixteenLowercaseHexDigits) {
  EXPECT_TRUE(IsJobId("bba86ebf380b9dbc"));
  EXPECT_TRUE(IsJobId(JobIdFor(Base())));
  EXPECT_FALSE(IsJobId("BBA86EBF380B9DBC"));
  EXPECT_FALSE(IsJobId("bba86ebf380b9db"));
  EXPECT_FALSE(IsJobId("bba86ebf380b9dbc0"));
  EXPECT_FALSE(IsJobId("bba86ebf380b9dbg"));
  EXPECT_FALSE(IsJobId("../etc"));
  EXPECT_FALSE(IsJobId("../../etc/passwd"));
  EXPECT_FALSE(IsJobId(""));
}

}  // namespace
}  // namespace mend::lessonq
