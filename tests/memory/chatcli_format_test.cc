#include "mend/memory/chatcli_format.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"
#include "mend/memory/fact.h"
#include "tests/support/status_matchers.h"

namespace mend::memory {
namespace {

using ::mend::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

Time At(std::string_view rfc3339) {
  Result<Time> t = ParseRfc3339(rfc3339);
  EXPECT_TRUE(t.ok()) << t.status();
  return t.ok() ? *t : Time{};
}

const Time kNow = std::chrono::sys_days{std::chrono::year{2026} / 4 / 1} + std::chrono::hours(9);

Fact FullFact() {
  Fact f;
  f.id = "0123456789abcdef01234567";
  f.content = "LESSON: edit small\nMISTAKE: rewrote the file\nCORRECTION: use a patch — über";
  f.category = "lesson";
  f.tags = {"edit", "reflexion", "trigger:error"};
  f.workspace = "shop-api";
  f.source = "reflexion";
  f.confidence = 0.8;
  f.created_at = At("2026-03-01T10:00:00.123456789Z");
  f.last_accessed = At("2026-03-05T08:30:00.5Z");
  f.access_count = 7;
  f.helped = 3;
  f.hurt = 1;
  f.superseded_by = "fedcba9876543210fedcba98";
  f.provenance = {{"Edit main.go", "ERROR: file too large", At("2026-03-01T09:59:00Z")},
                  {"Edit util.go", "ERROR: truncated", At("2026-03-02T11:00:00.25Z")}};
  return f;
}

void ExpectSameFact(const Fact& a, const Fact& b) {
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.content, b.content);
  EXPECT_EQ(a.category, b.category);
  EXPECT_EQ(a.tags, b.tags);
  EXPECT_EQ(a.workspace, b.workspace);
  EXPECT_EQ(a.source, b.source);
  EXPECT_DOUBLE_EQ(a.confidence, b.confidence);
  EXPECT_EQ(a.created_at, b.created_at);
  EXPECT_EQ(a.last_accessed, b.last_accessed);
  EXPECT_EQ(a.access_count, b.access_count);
  EXPECT_EQ(a.helped, b.helped);
  EXPECT_EQ(a.hurt, b.hurt);
  EXPECT_EQ(a.superseded_by, b.superseded_by);
  ASSERT_EQ(a.provenance.size(), b.provenance.size());
  for (size_t i = 0; i < a.provenance.size(); ++i) {
    EXPECT_EQ(a.provenance[i].task, b.provenance[i].task);
    EXPECT_EQ(a.provenance[i].outcome, b.provenance[i].outcome);
    EXPECT_EQ(a.provenance[i].at, b.provenance[i].at);
  }
}

TEST(ChatcliFormatTest, RoundTripKeepsEveryField) {
  Fact plain;
  plain.id = FactIdFor("prefers tabs");
  plain.content = "prefers tabs";
  plain.category = "preference";
  plain.created_at = At("2026-01-01T00:00:00Z");
  plain.last_accessed = plain.created_at;
  const std::vector<Fact> facts = {FullFact(), plain};

  std::string text = ExportChatcliJson(facts);
  Result<ChatcliImport> parsed = ParseChatcliJson(text, kNow);

  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->facts.size(), 2u);
  EXPECT_THAT(parsed->indices, ElementsAre(0, 1));
  EXPECT_TRUE(parsed->unusable.empty());
  ExpectSameFact(parsed->facts[0], facts[0]);
  // mend's own provenance summary is not kept as chatcli's word: it is written afresh.
  EXPECT_EQ(parsed->facts[0].as_written.provenance, "");
  EXPECT_EQ(ExportChatcliJson({parsed->facts[0]}), ExportChatcliJson({facts[0]}));
  EXPECT_EQ(parsed->facts[1].workspace, "");
  EXPECT_EQ(parsed->facts[1].source, "import");  // a file that does not say who wrote a fact
  EXPECT_TRUE(parsed->facts[1].tags.empty());
  EXPECT_TRUE(parsed->facts[1].provenance.empty());
}

TEST(ChatcliFormatTest, ExportWritesChatcliFieldsInOrder) {
  std::string text = ExportChatcliJson({FullFact()});

  EXPECT_THAT(text, HasSubstr("\"created_at\": \"2026-03-01T10:00:00.123456789Z\""));
  EXPECT_THAT(text, HasSubstr("\"score\": 0"));
  EXPECT_THAT(text, HasSubstr("\"source_project\": \"shop-api\""));
  EXPECT_THAT(text, HasSubstr("\"provenance\": \"reflexion: 2 episodes\""));
  EXPECT_LT(text.find("\"id\""), text.find("\"content\""));
  EXPECT_LT(text.find("\"content\""), text.find("\"category\""));
  EXPECT_LT(text.find("\"confidence\""), text.find("\"workspace\""));
}

TEST(ChatcliFormatTest, ExportOmitsEmptyOptionalFields) {
  Fact f;
  f.id = "abc";
  f.content = "global fact";
  f.category = "general";
  std::string text = ExportChatcliJson({f});

  EXPECT_THAT(text, Not(HasSubstr("\"tags\"")));
  EXPECT_THAT(text, Not(HasSubstr("\"source\"")));
  EXPECT_THAT(text, Not(HasSubstr("\"source_project\"")));
  EXPECT_THAT(text, Not(HasSubstr("\"provenance\"")));
  EXPECT_EQ(ExportChatcliJson({}), "[]\n");
}

TEST(ChatcliFormatTest, ReadsAHandWrittenChatcliFile) {
  const std::string text = R"([
  {
    "id": "aaaaaaaaaaaaaaaaaaaaaaaa",
    "content": "Use pnpm in the monorepo",
    "category": "project",
    "tags": ["Node", " pnpm ", "node"],
    "created_at": "2026-03-01T10:00:00.123456789+02:00",
    "last_accessed": "2026-03-02T07:15:30.1Z",
    "access_count": 4,
    "score": 2.75,
    "source": "user",
    "source_project": "web",
    "confidence": 0,
    "provenance": "told in chat",
    "future_field": {"x": [1, 2]}
  },
  {"content": "  short answers please  "}
])";
  Result<ChatcliImport> parsed = ParseChatcliJson(text, kNow);

  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->facts.size(), 2u);
  const Fact& a = parsed->facts[0];
  EXPECT_EQ(a.id, "aaaaaaaaaaaaaaaaaaaaaaaa");
  EXPECT_EQ(a.category, "project");
  EXPECT_THAT(a.tags, ElementsAre("node", "pnpm"));
  EXPECT_THAT(a.as_written.tags, ElementsAre("Node", " pnpm ", "node"));
  EXPECT_EQ(a.as_written.provenance, "told in chat");
  EXPECT_EQ(a.as_written.created_at, "2026-03-01T10:00:00.123456789+02:00");
  EXPECT_EQ(a.created_at, At("2026-03-01T08:00:00.123456789Z"));
  EXPECT_EQ(a.last_accessed, At("2026-03-02T07:15:30.1Z"));
  EXPECT_EQ(a.access_count, 4);
  EXPECT_EQ(a.source, "user");
  EXPECT_EQ(a.workspace, "web");
  EXPECT_DOUBLE_EQ(a.confidence, 1.0);
  EXPECT_TRUE(a.provenance.empty());
  const Fact& b = parsed->facts[1];
  EXPECT_EQ(b.id, FactIdFor("short answers please"));
  EXPECT_EQ(b.category, "general");
  EXPECT_EQ(b.created_at, kNow);
  EXPECT_EQ(b.last_accessed, kNow);
  EXPECT_EQ(b.workspace, "");
  EXPECT_DOUBLE_EQ(b.confidence, 1.0);
}

// Found by chatcli_import_fuzz: an empty source was kept as it was, the export left it out, and
// the export imported as "import", so a fact changed on export and import.
TEST(ChatcliFormatTest, AnEmptySourceIsReadAsAMissingOneAndRoundTrips) {
  const std::string text = R"([{"content": "Use pnpm in the monorepo", "source": "",
                                 "source_project": "web", "confidence": 0}])";
  Result<ChatcliImport> parsed = ParseChatcliJson(text, kNow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->facts.size(), 1u);
  EXPECT_EQ(parsed->facts[0].source, "import");

  Result<ChatcliImport> again = ParseChatcliJson(ExportChatcliJson(parsed->facts), kNow);
  ASSERT_TRUE(again.ok()) << again.status();
  ASSERT_EQ(again->facts.size(), 1u);
  EXPECT_EQ(again->facts[0].source, "import");
  EXPECT_EQ(again->facts[0].workspace, "web");
  EXPECT_EQ(ExportChatcliJson(again->facts), ExportChatcliJson(parsed->facts));
}

TEST(ChatcliFormatTest, MendWorkspaceWinsOverSourceProject) {
  const std::string text =
      R"([{"content": "x", "source_project": "old", "workspace": "", "confidence": 0.5}])";
  Result<ChatcliImport> parsed = ParseChatcliJson(text, kNow);

  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->facts[0].workspace, "");
  EXPECT_DOUBLE_EQ(parsed->facts[0].confidence, 0.5);
}

TEST(ChatcliFormatTest, EpisodesWithoutTimeTakeTheFactCreationTime) {
  const std::string text = R"([{"content": "x", "created_at": "2026-02-01T00:00:00Z",
    "episodes": [{"task": "t", "outcome": "ERROR: e"}]}])";
  Result<ChatcliImport> parsed = ParseChatcliJson(text, kNow);

  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->facts[0].provenance.size(), 1u);
  EXPECT_EQ(parsed->facts[0].provenance[0].task, "t");
  EXPECT_EQ(parsed->facts[0].provenance[0].at, At("2026-02-01T00:00:00Z"));
}

TEST(ChatcliFormatTest, CorruptJsonIsInvalidArgument) {
  EXPECT_THAT(ParseChatcliJson(R"([{"content": "x",)", kNow),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("malformed JSON")));
  EXPECT_THAT(ParseChatcliJson("", kNow), StatusIs(StatusCode::kInvalidArgument));
}

TEST(ChatcliFormatTest, ForeignJsonIsNotAMemoryExport) {
  EXPECT_THAT(ParseChatcliJson(R"({"facts": []})", kNow),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("not a memory export")));
  EXPECT_THAT(ParseChatcliJson("[1, 2, 3]", kNow),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("fact 0: is not an object")));
}

TEST(ChatcliFormatTest, ABadElementFailsTheWholeParseNamingIt) {
  const std::string text = R"([{"content": "fine"}, {"content": "ok"},
    {"content": "bad", "tags": ["a", 3]}, {"content": "never read"}])";

  EXPECT_THAT(ParseChatcliJson(text, kNow),
              StatusIs(StatusCode::kInvalidArgument, HasSubstr("fact 2: tags[1] is not a string")));
}

struct BadField {
  const char* element;
  const char* message;
};

TEST(ChatcliFormatTest, WrongTypesNameTheFactAndField) {
  const std::vector<BadField> cases = {
      {R"({"id": "x"})", "fact 0: missing JSON key \"content\""},
      {R"({"content": 5})", "\"content\""},
      {R"({"content": "x", "id": 7})", "\"id\""},
      {R"({"content": "x", "tags": "a,b"})", "\"tags\""},
      {R"({"content": "x", "access_count": "3"})", "\"access_count\""},
      {R"({"content": "x", "access_count": 1.5})", "\"access_count\""},
      {R"({"content": "x", "score": "high"})", "\"score\""},
      {R"({"content": "x", "confidence": "high"})", "\"confidence\""},
      {R"({"content": "x", "provenance": ["a"]})", "\"provenance\""},
      {R"({"content": "x", "created_at": 17})", "\"created_at\""},
      {R"({"content": "x", "episodes": [{"task": 1}]})", "fact 0: episodes[0]"},
      {R"({"content": "x", "episodes": ["a"]})", "fact 0: episodes[0]: is not an object"},
  };
  for (const BadField& c : cases) {
    EXPECT_THAT(ParseChatcliJson(std::string("[") + c.element + "]", kNow),
                StatusIs(StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.element;
  }
}

TEST(ChatcliFormatTest, UnusableFactsAreLeftOutAndTheRestKept) {
  const std::vector<BadField> cases = {
      {R"({"id": "e", "content": "   "})", "content is empty"},
      {R"({"id": "c", "content": "x", "confidence": 1.5})",
       "confidence 1.500000 is outside (0, 1]"},
      {R"({"id": "n", "content": "x", "confidence": -0.5})", "confidence"},
      {R"({"id": "t", "content": "x", "created_at": "yesterday"})", "created_at: "},
      {R"({"id": "l", "content": "x", "last_accessed": "soon"})", "last_accessed: "},
      {R"({"id": "a", "content": "x", "episodes": [{"at": "2026-13-01T00:00:00Z"}]})",
       "episodes[0]: at: "},
  };
  for (const BadField& c : cases) {
    const std::string text =
        std::string(R"([{"content": "before"}, )") + c.element + R"(, {"content": "after"}])";
    Result<ChatcliImport> parsed = ParseChatcliJson(text, kNow);

    ASSERT_TRUE(parsed.ok()) << c.element << ": " << parsed.status();
    ASSERT_EQ(parsed->facts.size(), 2u) << c.element;
    EXPECT_EQ(parsed->facts[0].content, "before");
    EXPECT_EQ(parsed->facts[1].content, "after");
    EXPECT_THAT(parsed->indices, ElementsAre(0, 2));
    ASSERT_EQ(parsed->unusable.size(), 1u) << c.element;
    EXPECT_EQ(parsed->unusable[0].index, 1u);
    EXPECT_THAT(parsed->unusable[0].reason, HasSubstr(c.message)) << c.element;
  }
}

TEST(ChatcliFormatTest, AFactOfTwentyKibIsKeptWhole) {
  const std::string big(20 * 1024, 'a');
  const std::string at_limit(kMaxImportedFactBytes, 'b');
  const std::string over(kMaxImportedFactBytes + 1, 'c');
  const std::string text = R"([{"content": ")" + big + R"("}, {"content": ")" + at_limit +
                           R"("}, {"id": "too-long", "content": ")" + over + "\"}]";

  Result<ChatcliImport> parsed = ParseChatcliJson(text, kNow);

  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->facts.size(), 2u);
  EXPECT_EQ(parsed->facts[0].content, big);
  EXPECT_EQ(parsed->facts[1].content, at_limit);
  ASSERT_EQ(parsed->unusable.size(), 1u);
  EXPECT_EQ(
      parsed->unusable[0],
      (UnusableFact{2, "too-long", "content is 131073 bytes, more than the limit of 131072"}));
}

TEST(ChatcliFormatTest, InvalidUtf8BytesAreReadAsReplacementCharactersOnePerByte) {
  Result<ChatcliImport> parsed =
      ParseChatcliJson("[{\"content\": \"a\xE2\x82z \xC3\x28\", \"tags\": [\"\xFF\"]}]", kNow);

  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->facts.size(), 1u);
  EXPECT_EQ(parsed->facts[0].content, "a\xEF\xBF\xBD\xEF\xBF\xBDz \xEF\xBF\xBD(");
  EXPECT_THAT(parsed->facts[0].tags, ElementsAre("\xEF\xBF\xBD"));
}

TEST(ChatcliFormatTest, EscapedLoneSurrogatesAreReadAsReplacementCharacters) {
  const std::string text = R"([{"content": "lone \udc00 low"},
    {"content": "high \uD83D then x"},
    {"content": "pair \ud83d\ude00 kept"},
    {"content": "escaped \\udc00 backslash"},
    {"content": "high at end \ud83d"}])";

  Result<ChatcliImport> parsed = ParseChatcliJson(text, kNow);

  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->facts.size(), 5u);
  EXPECT_EQ(parsed->facts[0].content, "lone \xEF\xBF\xBD low");
  EXPECT_EQ(parsed->facts[1].content, "high \xEF\xBF\xBD then x");
  EXPECT_EQ(parsed->facts[2].content, "pair \xF0\x9F\x98\x80 kept");
  EXPECT_EQ(parsed->facts[3].content, "escaped \\udc00 backslash");
  EXPECT_EQ(parsed->facts[4].content, "high at end \xEF\xBF\xBD");
}

// What chatcli writes (Go's RFC 3339 with nanoseconds and the local offset, tags as the user or
// the extractor typed them, its provenance word) comes back byte for byte in these fields.
TEST(ChatcliFormatTest, ChatcliFieldsRoundTripByteExact) {
  const std::string text = R"([
  {
    "id": "aaaaaaaaaaaaaaaaaaaaaaaa",
    "content": "Deploy with make release",
    "category": "project",
    "tags": ["Deploy", "deploy", "CI/CD", "Deploy"],
    "created_at": "2026-03-01T10:00:00.123456789+02:00",
    "last_accessed": "2026-03-02T07:15:30.100000001Z",
    "access_count": 2,
    "score": 0,
    "source": "chat",
    "provenance": "correction"
  },
  {
    "id": "bbbbbbbbbbbbbbbbbbbbbbbb",
    "content": "Prefers short answers",
    "category": "preference",
    "created_at": "2026-01-05T23:59:59.999999999-08:00",
    "last_accessed": "2026-01-06T00:00:00Z",
    "access_count": 0,
    "score": 0,
    "provenance": "extraction"
  }
])";
  Result<ChatcliImport> parsed = ParseChatcliJson(text, kNow);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->facts.size(), 2u);
  EXPECT_THAT(parsed->facts[0].tags, ElementsAre("deploy", "ci/cd"));

  Result<nlohmann::json> exported = ParseJson(ExportChatcliJson(parsed->facts));
  Result<nlohmann::json> original = ParseJson(text);
  ASSERT_TRUE(exported.ok() && original.ok());
  for (size_t i = 0; i < 2; ++i) {
    for (const char* key : {"id", "content", "category", "tags", "created_at", "last_accessed",
                            "access_count", "provenance"}) {
      EXPECT_EQ((*exported)[i].contains(key), (*original)[i].contains(key)) << i << key;
      if ((*original)[i].contains(key)) {
        EXPECT_EQ((*exported)[i][key].dump(), (*original)[i][key].dump()) << i << key;
      }
    }
  }
}

TEST(ChatcliFormatTest, WrittenFieldsThatNoLongerAgreeAreWrittenAfresh) {
  Fact f = FullFact();
  f.superseded_by.clear();
  f.as_written.tags = {"EDIT", "Edit"};                             // no longer the fact's tags
  f.as_written.created_at = "2026-03-01T12:00:00.123456789+02:00";  // the same instant
  f.as_written.last_accessed = "2020-01-01T00:00:00Z";              // last_accessed moved
  f.as_written.provenance = "user";
  std::string text = ExportChatcliJson({f});

  EXPECT_THAT(text, HasSubstr(R"("tags": [
      "edit",)"));
  EXPECT_THAT(text, HasSubstr(R"("created_at": "2026-03-01T12:00:00.123456789+02:00")"));
  EXPECT_THAT(text, HasSubstr(R"("last_accessed": "2026-03-05T08:30:00.5Z")"));
  EXPECT_THAT(text, HasSubstr(R"("provenance": "user")"));
}

TEST(ChatcliFormatTest, KeepsOnlyTheNewestEpisodes) {
  Fact f = FullFact();
  f.provenance.clear();
  for (size_t i = 0; i < kMaxEpisodes + 3; ++i) {
    f.provenance.push_back({"task " + std::to_string(i), "", f.created_at});
  }
  Result<ChatcliImport> parsed = ParseChatcliJson(ExportChatcliJson({f}), kNow);

  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->facts[0].provenance.size(), kMaxEpisodes);
  EXPECT_EQ(parsed->facts[0].provenance.front().task, "task 3");
}

}  // namespace
}  // namespace mend::memory
