#include "mend/lessonq/wal_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/hash.h"
#include "mend/base/memory_file_system.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"
#include "tests/support/status_matchers.h"

namespace mend::lessonq {
namespace {

using ::mend::testing::IsOkAndHolds;
using ::mend::testing::StatusIs;
using std::chrono::milliseconds;
using std::chrono::seconds;

Job SmallJob() {
  Job job;
  job.id = "0123456789abcdef";
  job.request = {"t", "a", "o", "error"};
  job.enqueued_at = Time(seconds(1700000000));
  job.next_attempt_at = Time(seconds(1700000001) + milliseconds(500));
  job.attempts = 2;
  job.last_error = "x";
  return job;
}

std::string U32(uint32_t v) {
  return {static_cast<char>(v >> 24), static_cast<char>(v >> 16), static_cast<char>(v >> 8),
          static_cast<char>(v)};
}

// A well-framed record around an arbitrary payload.
std::string Frame(std::string_view payload) {
  const uint32_t crc = Crc32(payload);
  return std::string(kWalMagic) + U32(static_cast<uint32_t>(payload.size())) + U32(crc) +
         std::string(payload) + U32(crc);
}

Result<Job> ReadFromFile(const std::string& bytes) {
  MemoryFileSystem fs;
  Status written = WriteFileAtomically(fs, "r.wal", bytes);
  if (!written.ok()) return written;
  MEND_ASSIGN_OR_RETURN(std::unique_ptr<ReadableFile> file, fs.OpenReadable("r.wal"));
  return ReadWalRecord(*file);
}

// SmallJob() as chatcli writes it: the bytes of Go's json.Marshal (Go 1.19) for chatcli's job
// struct, fields in declaration order. docs/wal_format.md shows this record as its worked example.
constexpr std::string_view kSmallPayload =
    R"({"v":1,"job":{"ID":"0123456789abcdef","Request":{"Task":"t","Attempt":"a","Outcome":"o",)"
    R"("Trigger":"error"},"EnqueuedAt":"2023-11-14T22:13:20Z",)"
    R"("NextAttemptAt":"2023-11-14T22:13:21.5Z","Attempts":2,"LastError":"x"}})";

TEST(WalCodecTest, RecordLayoutMatchesChatcliBytes) {
  // Length 214 = 0xd6 and CRC-32 0xccbd7ff8, both as Go's hash/crc32 computes them.
  ASSERT_EQ(kSmallPayload.size(), 214u);
  const std::string expected = std::string("LSN1\x00\x00\x00\xd6\xcc\xbd\x7f\xf8", 12) +
                               std::string(kSmallPayload) + std::string("\xcc\xbd\x7f\xf8", 4);
  EXPECT_EQ(Crc32(kSmallPayload), 0xccbd7ff8u);
  EXPECT_EQ(EncodeWalPayload(SmallJob()), kSmallPayload);
  EXPECT_THAT(EncodeWalRecord(SmallJob()), IsOkAndHolds(expected));
  EXPECT_THAT(DecodeWalRecord(expected), IsOkAndHolds(SmallJob()));
  EXPECT_THAT(ReadFromFile(expected), IsOkAndHolds(SmallJob()));
}

// The bytes of the first hex dump after `heading` in `markdown`, written as xxd writes them:
// "00000010: 3a31 2c22 ...  :1,"...", offsets in order. "" when there is no such dump.
std::string BytesOfHexDump(std::string_view markdown, std::string_view heading) {
  size_t at = markdown.find(heading);
  if (at == std::string_view::npos) return "";
  at = markdown.find("```\n", at);
  if (at == std::string_view::npos) return "";
  const size_t end = markdown.find("```", at + 4);
  std::istringstream lines(std::string(markdown.substr(at + 4, end - at - 4)));
  std::string bytes;
  for (std::string line; std::getline(lines, line);) {
    if (line.size() < 10 || line[8] != ':') return "";
    if (std::stoul(line.substr(0, 8), nullptr, 16) != bytes.size()) return "";
    // Eight groups of four hex digits take 39 columns after ": "; the text column follows.
    const std::string hex = line.substr(10, 39);
    for (size_t i = 0; i + 1 < hex.size(); ++i) {
      if (hex[i] == ' ') continue;
      bytes.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
      ++i;
    }
  }
  return bytes;
}

TEST(WalCodecTest, WorkedExampleOfTheFormatDocIsWhatWeWrite) {
  Result<std::string> doc = ReadFileToString(*PosixFileSystem::Default(),
                                             JoinPath(MEND_SOURCE_DIR, "docs/wal_format.md"));
  MEND_ASSERT_OK(doc);
  EXPECT_THAT(EncodeWalRecord(SmallJob()),
              IsOkAndHolds(BytesOfHexDump(*doc, "### Worked example")));
  EXPECT_NE(doc->find("0xccbd7ff8"), std::string::npos);  // the CRC the text names
}

// A job whose strings need every kind of escaping Go's encoding/json does, with times that carry
// nanoseconds, and invalid UTF-8: the truncated sequence e2 82, the bytes ff fe, and e2 82
// followed by an ASCII letter.
Job EscapingJob() {
  Job job;
  job.id = "fedcba9876543210";
  job.request.task = "a<b && c>d";
  job.request.attempt = "line\u2028para\u2029end";
  job.request.outcome =
      "quote \" back \\ nl \n tab \t cr \r bs \b ff \f x01 \x01 x1f \x1f del \x7f "
      "\u00e9 \ufffd \U0001F642";
  job.request.trigger = "error";
  job.enqueued_at = Time(seconds(1775000000) + std::chrono::nanoseconds(123456789));
  job.next_attempt_at = Time(seconds(1775000030) + milliseconds(120));
  job.attempts = 3;
  job.last_error = "bad \xe2\x82 and \xff\xfe and \xe2\x82x";
  return job;
}

// EscapingJob() as Go's json.Marshal (Go 1.19) writes it: \u003c \u003e \u0026, \u2028 \u2029,
// control bytes as \u00XX except \n \r \t, DEL and valid non-ASCII text raw, one \ufffd per
// invalid byte, and RFC3339Nano times with the trailing zeros of the fraction dropped.
const std::string kEscapingPayload =
    R"({"v":1,"job":{"ID":"fedcba9876543210","Request":{"Task":"a\u003cb \u0026\u0026 c\u003ed",)"
    R"("Attempt":"line\u2028para\u2029end","Outcome":"quote \" back \\ nl \n tab \t cr \r )"
    R"(bs \u0008 ff \u000c x01 \u0001 x1f \u001f del )"
    "\x7f \u00e9 \ufffd \U0001F642"
    R"(","Trigger":"error"},"EnqueuedAt":"2026-03-31T23:33:20.123456789Z",)"
    R"("NextAttemptAt":"2026-03-31T23:33:50.12Z","Attempts":3,)"
    R"("LastError":"bad \ufffd\ufffd and \ufffd\ufffd and \ufffd\ufffdx"}})";

TEST(WalCodecTest, EscapesStringsTimesAndInvalidUtf8AsGoDoes) {
  ASSERT_EQ(kEscapingPayload.size(), 420u);
  EXPECT_EQ(Crc32(kEscapingPayload), 0x6cc94f83u);  // as Go's hash/crc32 computes it
  EXPECT_EQ(EncodeWalPayload(EscapingJob()), kEscapingPayload);
  const std::string crc("\x6c\xc9\x4f\x83", 4);
  EXPECT_THAT(EncodeWalRecord(EscapingJob()),
              IsOkAndHolds(std::string("LSN1\x00\x00\x01\xa4", 8) + crc + kEscapingPayload + crc));
}

TEST(WalCodecTest, InvalidUtf8ReadsBackAsOneReplacementPerByte) {
  Job expected = EscapingJob();
  expected.last_error =
      "bad \ufffd\ufffd and \ufffd\ufffd and \ufffd\ufffdx";  // e2 82 is two bytes, two U+FFFD
  Result<std::string> record = EncodeWalRecord(EscapingJob());
  MEND_ASSERT_OK(record);
  EXPECT_THAT(DecodeWalRecord(*record), IsOkAndHolds(expected));
}

TEST(WalCodecTest, ReadsRawAndEscapedCharactersAlike) {
  const std::string raw =
      R"({"job":{"Request":{"Trigger":"error","Outcome":"o","Attempt":"a","Task":"a<b & c>d )"
      "\u2028\u2029"
      R"("},"NextAttemptAt":"2023-11-14T22:13:21.5Z","ID":"0123456789abcdef",)"
      R"("EnqueuedAt":"2023-11-14T22:13:20Z"},"v":1})";
  const std::string escaped =
      R"({"v":1,"job":{"ID":"0123456789abcdef","Request":{"Task":"a\u003cb \u0026 c\u003ed )"
      R"(\u2028\u2029","Attempt":"a","Outcome":"o","Trigger":"error"},)"
      R"("EnqueuedAt":"2023-11-14T22:13:20Z","NextAttemptAt":"2023-11-14T22:13:21.5Z"}})";
  Job expected = SmallJob();
  expected.request.task = "a<b & c>d \u2028\u2029";
  expected.attempts = 0;
  expected.last_error = "";
  EXPECT_THAT(DecodeWalPayload(raw), IsOkAndHolds(expected));
  EXPECT_THAT(DecodeWalPayload(escaped), IsOkAndHolds(expected));
}

TEST(WalCodecTest, MendOnlyFieldsFollowChatclisAndRoundTrip) {
  Job job = SmallJob();
  job.request.run_id = "run-1";
  job.request.traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
  EXPECT_EQ(EncodeWalPayload(job),
            R"({"v":1,"job":{"ID":"0123456789abcdef","Request":{"Task":"t","Attempt":"a",)"
            R"("Outcome":"o","Trigger":"error","RunID":"run-1","Traceparent":)"
            R"("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"},)"
            R"("EnqueuedAt":"2023-11-14T22:13:20Z","NextAttemptAt":"2023-11-14T22:13:21.5Z",)"
            R"("Attempts":2,"LastError":"x"}})");
  Result<std::string> record = EncodeWalRecord(job);
  MEND_ASSERT_OK(record);
  EXPECT_THAT(DecodeWalRecord(*record), IsOkAndHolds(job));
}

TEST(WalCodecTest, ProviderFieldsFollowTraceparentAndKeepTheId) {
  LessonRequest request{"Edit main.go", "used full rewrite", "ERROR: file too large", "error"};
  const std::string id = JobIdFor(request);
  Job job = SmallJob();
  job.id = id;
  job.request = request;
  job.request.run_id = "run-1";
  job.request.provider = "openai";
  job.request.base_url = "http://127.0.0.1:11434/v1";
  job.request.model = "llama3";
  // The provider is mend's alone: the same situation has the same id whatever model it ran on.
  EXPECT_EQ(JobIdFor(job.request), "bba86ebf380b9dbc");
  EXPECT_EQ(EncodeWalPayload(job),
            R"({"v":1,"job":{"ID":"bba86ebf380b9dbc","Request":{"Task":"Edit main.go",)"
            R"("Attempt":"used full rewrite","Outcome":"ERROR: file too large",)"
            R"("Trigger":"error","RunID":"run-1","Provider":"openai",)"
            R"("BaseURL":"http://127.0.0.1:11434/v1","Model":"llama3"},)"
            R"("EnqueuedAt":"2023-11-14T22:13:20Z","NextAttemptAt":"2023-11-14T22:13:21.5Z",)"
            R"("Attempts":2,"LastError":"x"}})");
  Result<std::string> record = EncodeWalRecord(job);
  MEND_ASSERT_OK(record);
  EXPECT_THAT(DecodeWalRecord(*record), IsOkAndHolds(job));
  // Without them the bytes are chatcli's, and a record without them reads as "not recorded".
  job.request.provider = job.request.base_url = job.request.model = job.request.run_id = "";
  EXPECT_EQ(EncodeWalPayload(job).find("Provider"), std::string::npos);
  Result<Job> chatcli = DecodeWalPayload(EncodeWalPayload(job));
  MEND_ASSERT_OK(chatcli);
  EXPECT_EQ(EndpointOf(chatcli->request), LessonEndpoint{});
}

TEST(WalCodecTest, LessonWorkspaceComesLastAndRoundTrips) {
  Job job = SmallJob();
  job.request =
      LessonRequest{"Edit main.go", "used full rewrite", "ERROR: file too large", "error"};
  job.id = JobIdFor(job.request);
  job.request.model = "llama3";
  job.request.workspace = "proxy-team-a";
  // The scope a lesson is stored in is not part of its id either.
  EXPECT_EQ(JobIdFor(job.request), job.id);
  const std::string payload = EncodeWalPayload(job);
  EXPECT_NE(payload.find(R"("Model":"llama3","LessonWorkspace":"proxy-team-a"},)"),
            std::string::npos)
      << payload;
  Result<std::string> record = EncodeWalRecord(job);
  MEND_ASSERT_OK(record);
  EXPECT_THAT(DecodeWalRecord(*record), IsOkAndHolds(job));
}

TEST(JobFitsEndpointTest, SameKindAndBaseUrlOrNothingRecorded) {
  LessonRequest request{"t", "a", "o", "error"};
  const LessonEndpoint local{"openai", "http://127.0.0.1:11434/v1"};
  const LessonEndpoint hosted{"openai", "https://api.example.com/v1"};
  EXPECT_TRUE(JobFitsEndpoint(request, hosted));  // recorded nothing: any provider, as before
  request.provider = "openai";
  request.base_url = "http://127.0.0.1:11434/v1/";
  EXPECT_TRUE(JobFitsEndpoint(request, local));  // a trailing slash aside
  EXPECT_FALSE(JobFitsEndpoint(request, hosted));
  EXPECT_FALSE(JobFitsEndpoint(request, LessonEndpoint{"anthropic", local.base_url}));
  EXPECT_TRUE(JobFitsEndpoint(request, LessonEndpoint{}));  // no restriction
  request.base_url = "";
  EXPECT_FALSE(JobFitsEndpoint(request, local));
  EXPECT_TRUE(JobFitsEndpoint(request, LessonEndpoint{"openai", ""}));
}

TEST(WalCodecTest, RoundTripKeepsEveryField) {
  Job job;
  job.id = "fedcba9876543210";
  job.request = {"Edite \"main.go\"\n\tagora", "tentei reescrever tudo — ação", "ERRO: 大きすぎる",
                 "hallucination"};
  job.enqueued_at = Time(seconds(1775000000) + std::chrono::nanoseconds(123456789));
  job.next_attempt_at = job.enqueued_at + seconds(30);
  job.attempts = 4;
  job.last_error = "429 too many requests";
  Result<std::string> record = EncodeWalRecord(job);
  MEND_ASSERT_OK(record);
  EXPECT_THAT(DecodeWalRecord(*record), IsOkAndHolds(job));
  EXPECT_THAT(ReadFromFile(*record), IsOkAndHolds(job));
}

TEST(WalCodecTest, DecodesGoStylePayload) {
  // As Go's encoding/json writes it: struct field order, RFC3339Nano with a local offset, and
  // fields this version does not know.
  const std::string payload =
      R"({"v":1,"job":{"ID":"bba86ebf380b9dbc","Request":{"Task":"Edit main.go",)"
      R"("Attempt":"used full rewrite","Outcome":"ERROR: file too large","Trigger":"error",)"
      R"("Workspace":"/tmp/p"},"EnqueuedAt":"2026-04-01T12:00:00.123456789+02:00",)"
      R"("NextAttemptAt":"2026-04-01T12:00:05+02:00","Attempts":3,"LastError":"timeout",)"
      R"("Priority":7,"Meta":{"a":[1,2]}},"writer":"chatcli"})";
  Result<Job> job = DecodeWalRecord(Frame(payload));
  MEND_ASSERT_OK(job);
  EXPECT_EQ(job->id, "bba86ebf380b9dbc");
  EXPECT_EQ(job->request,
            (LessonRequest{"Edit main.go", "used full rewrite", "ERROR: file too large", "error"}));
  EXPECT_EQ(FormatRfc3339(job->enqueued_at), "2026-04-01T10:00:00.123456789Z");
  EXPECT_EQ(FormatRfc3339(job->next_attempt_at), "2026-04-01T10:00:05Z");
  EXPECT_EQ(job->attempts, 3);
  EXPECT_EQ(job->last_error, "timeout");
}

TEST(WalCodecTest, LenientAboutOptionalFieldsAndNulls) {
  const std::string payload =
      R"({"v":1,"job":{"ID":"bba86ebf380b9dbc","Request":{"Task":"t","Attempt":null,)"
      R"("Outcome":"o","Trigger":"error"},"EnqueuedAt":"0001-01-01T00:00:00Z",)"
      R"("NextAttemptAt":"2026-04-01T10:00:00Z"}})";
  Result<Job> job = DecodeWalPayload(payload);
  MEND_ASSERT_OK(job);
  EXPECT_EQ(job->request.attempt, "");
  EXPECT_EQ(job->enqueued_at, Time{});  // Go's zero time
  EXPECT_EQ(job->attempts, 0);
  EXPECT_EQ(job->last_error, "");
}

TEST(WalCodecTest, PayloadErrorsAreDataLoss) {
  const std::vector<std::string> bad = {
      "{not json",
      R"([1,2])",
      R"({"v":2,"job":{}})",
      R"({"job":{}})",
      R"({"v":1})",
      R"({"v":"1","job":{}})",
      R"({"v":1,"job":{"Request":{"Task":"t","Attempt":"a","Outcome":"o","Trigger":"e"},)"
      R"("EnqueuedAt":"2026-04-01T10:00:00Z","NextAttemptAt":"2026-04-01T10:00:00Z"}})",
      R"({"v":1,"job":{"ID":"bba86ebf380b9dbc","Request":{"Task":"t","Attempt":"a",)"
      R"("Outcome":"o","Trigger":"e"},"EnqueuedAt":"yesterday",)"
      R"("NextAttemptAt":"2026-04-01T10:00:00Z"}})",
      R"({"v":1,"job":{"ID":"bba86ebf380b9dbc","Request":{"Task":"t","Attempt":"a",)"
      R"("Outcome":"o","Trigger":"e"},"EnqueuedAt":"2026-04-01T10:00:00Z",)"
      R"("NextAttemptAt":"2026-04-01T10:00:00Z","Attempts":"three"}})",
      R"({"v":1,"job":{"ID":"bba86ebf380b9dbc","Request":{"Task":"t"},)"
      R"("EnqueuedAt":"2026-04-01T10:00:00Z","NextAttemptAt":"2026-04-01T10:00:00Z"}})",
  };
  for (const std::string& payload : bad) {
    EXPECT_THAT(DecodeWalPayload(payload), StatusIs(StatusCode::kDataLoss)) << payload;
    EXPECT_THAT(DecodeWalRecord(Frame(payload)), StatusIs(StatusCode::kDataLoss)) << payload;
    EXPECT_THAT(ReadFromFile(Frame(payload)), StatusIs(StatusCode::kDataLoss)) << payload;
  }
}

struct Corruption {
  std::string name;
  std::string bytes;
};

std::vector<Corruption> Corruptions() {
  const std::string good = *EncodeWalRecord(SmallJob());
  std::vector<Corruption> out;
  std::string bad_magic = good;
  bad_magic[3] = '2';
  out.push_back({"bad magic", bad_magic});
  out.push_back({"length above 16 MiB",
                 std::string(kWalMagic) + U32(kMaxWalPayloadBytes + 1) + U32(0) + "{}" + U32(0)});
  out.push_back({"length 4 GiB", std::string(kWalMagic) + U32(0xFFFFFFFF) + U32(0)});
  out.push_back({"torn: length larger than the file", good.substr(0, good.size() - 20)});
  out.push_back({"truncated trailer", good.substr(0, good.size() - 2)});
  out.push_back({"header only", good.substr(0, kWalHeaderBytes)});
  out.push_back({"shorter than a header", good.substr(0, 7)});
  out.push_back({"empty", ""});
  std::string header_crc = good;
  header_crc[11] ^= 0x01;
  out.push_back({"header CRC mismatch", header_crc});
  std::string trailer_crc = good;
  trailer_crc[good.size() - 1] ^= 0x01;
  out.push_back({"trailer CRC mismatch", trailer_crc});
  std::string flipped = good;
  flipped[40] ^= 0x20;
  out.push_back({"payload bit flip", flipped});
  out.push_back({"bad JSON", Frame("{\"v\":1,\"job\":")});
  out.push_back({"unknown version", Frame(R"({"v":2,"job":{}})")});
  out.push_back({"trailing garbage", good + "x"});
  out.push_back({"two records", good + good});
  return out;
}

TEST(WalCodecTest, EveryCorruptionIsDataLoss) {
  for (const Corruption& c : Corruptions()) {
    EXPECT_THAT(DecodeWalRecord(c.bytes), StatusIs(StatusCode::kDataLoss)) << c.name;
    EXPECT_THAT(ReadFromFile(c.bytes), StatusIs(StatusCode::kDataLoss)) << c.name;
  }
}

TEST(WalCodecTest, OversizedPayloadIsRefusedOnWrite) {
  Job job = SmallJob();
  job.request.attempt.assign(kMaxWalPayloadBytes, 'a');
  EXPECT_THAT(EncodeWalRecord(job), StatusIs(StatusCode::kInvalidArgument));
}

TEST(WalCodecTest, MegabyteAttemptIsReadWhole) {
  Job job = SmallJob();
  job.request.attempt.assign(5u << 20, 'z');
  Result<std::string> record = EncodeWalRecord(job);
  MEND_ASSERT_OK(record);
  EXPECT_THAT(ReadFromFile(*record), IsOkAndHolds(job));
}

// reflexion.queue.chatcli_safe: a record is cut to what chatcli's reader takes whole, the last
// error first, then the attempt; a record that fits is left as it is.
TEST(WalCodecTest, FitWalRecordCutsTheLastErrorThenTheAttempt) {
  Job small = SmallJob();
  EXPECT_EQ(FitWalRecord(small, kChatcliMaxRecordBytes), small);

  Job big = SmallJob();
  big.request.attempt = std::string(3000, 'a') + "\xe2\x82\xac" + std::string(3000, 'b');
  big.last_error = std::string(2000, '<');  // 6 encoded bytes each
  const Job fitted = FitWalRecord(big, kChatcliMaxRecordBytes);
  Result<std::string> record = EncodeWalRecord(fitted);
  MEND_ASSERT_OK(record);
  EXPECT_LE(record->size(), kChatcliMaxRecordBytes);
  EXPECT_GT(record->size(), kChatcliMaxRecordBytes - 64);  // nothing cut that need not be
  EXPECT_EQ(fitted.id, big.id);
  EXPECT_EQ(fitted.request.task, big.request.task);
  EXPECT_EQ(fitted.request.outcome, big.request.outcome);
  EXPECT_EQ(fitted.last_error, "");  // went first
  EXPECT_TRUE(fitted.request.attempt.starts_with(std::string(3000, 'a')));
  EXPECT_TRUE(fitted.request.attempt.ends_with(kCutMarker));
  EXPECT_TRUE(IsValidUtf8(fitted.request.attempt));
  Result<Job> back = DecodeWalRecord(*record);
  MEND_ASSERT_OK(back);
  EXPECT_EQ(*back, fitted);

  // Fitting again changes nothing, and a smaller limit cuts further without stacking markers.
  EXPECT_EQ(FitWalRecord(fitted, kChatcliMaxRecordBytes), fitted);
  const Job tighter = FitWalRecord(fitted, 1024);
  EXPECT_LE(EncodeWalRecord(tighter)->size(), 1024u);
  EXPECT_TRUE(tighter.request.attempt.ends_with(kCutMarker));
  EXPECT_EQ(tighter.request.attempt.find(kCutMarker),
            tighter.request.attempt.size() - kCutMarker.size());

  // A limit no text can meet leaves every text empty.
  const Job none = FitWalRecord(big, 16);
  EXPECT_EQ(none.request.task, "");
  EXPECT_EQ(none.request.attempt, "");
  EXPECT_EQ(none.request.outcome, "");
  EXPECT_EQ(none.last_error, "");
  EXPECT_EQ(none.id, big.id);
}

TEST(WalCodecTest, ReadErrorsOfTheFileSystemPassThrough) {
  MemoryFileSystem memory;
  MEND_ASSERT_OK(WriteFileAtomically(memory, "r.wal", *EncodeWalRecord(SmallJob())));
  FaultInjectionFileSystem fs(&memory);
  Result<std::unique_ptr<ReadableFile>> file = fs.OpenReadable("r.wal");
  MEND_ASSERT_OK(file);
  fs.FailNext(FsOp::kRead, EIO);
  EXPECT_THAT(ReadWalRecord(**file), StatusIs(StatusCode::kInternal));
}

}  // namespace
}  // namespace mend::lessonq
