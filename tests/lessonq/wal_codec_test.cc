#include "mend/lessonq/wal_codec.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <chrono>
#include <string>
#include <utility>
#include <vector>

#include "mend/base/fault_injection_file_system.h"
#include "mend/base/hash.h"
#include "mend/base/memory_file_system.h"
#include "mend/base/time_format.h"
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

constexpr std::string_view kSmallPayload =
    R"({"job":{"Attempts":2,"EnqueuedAt":"2023-11-14T22:13:20Z","ID":"0123456789abcdef",)"
    R"("LastError":"x","NextAttemptAt":"2023-11-14T22:13:21.5Z","Request":{"Attempt":"a",)"
    R"("Outcome":"o","Task":"t","Trigger":"error"}},"v":1})";

TEST(WalCodecTest, RecordLayoutMatchesHandComputedBytes) {
  // Length 214 = 0xd6 and CRC-32 0x0806c7c6, both computed independently (zlib.crc32).
  ASSERT_EQ(kSmallPayload.size(), 214u);
  const std::string expected = std::string("LSN1\x00\x00\x00\xd6\x08\x06\xc7\xc6", 12) +
                               std::string(kSmallPayload) + std::string("\x08\x06\xc7\xc6", 4);
  EXPECT_EQ(EncodeWalPayload(SmallJob()), kSmallPayload);
  EXPECT_THAT(EncodeWalRecord(SmallJob()), IsOkAndHolds(expected));
  EXPECT_THAT(DecodeWalRecord(expected), IsOkAndHolds(SmallJob()));
  EXPECT_THAT(ReadFromFile(expected), IsOkAndHolds(SmallJob()));
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
