// The WAL record decoder (src/lessonq/wal_codec.cc): records are read back from disk after a crash,
// and chatcli writes the same files, so every byte string must decode to a job or a kDataLoss.
//
// The input is tried three ways: as a whole record (header, CRCs, torn tails), as a payload
// wrapped in a record with correct CRCs (so the JSON decoder is reached, which random bytes almost
// never are through the CRC check), and through ReadWalRecord on a file. Invariants: the three
// agree; a decoded job encodes to a record that decodes to the same job (exactly so when its
// texts are valid UTF-8, which encoding otherwise repairs), and encoding is idempotent.
#include <string>

#include "fuzz/fuzz_util.h"
#include "mend/base/file_system.h"
#include "mend/base/hash.h"
#include "mend/base/memory_file_system.h"
#include "mend/base/utf8.h"
#include "mend/lessonq/wal_codec.h"

namespace mend::lessonq {
namespace {

void AppendU32(std::string& out, uint32_t v) {
  for (int shift = 24; shift >= 0; shift -= 8)
    out.push_back(static_cast<char>((v >> shift) & 0xff));
}

std::string RecordOf(std::string_view payload) {
  std::string record(kWalMagic);
  AppendU32(record, static_cast<uint32_t>(payload.size()));
  const uint32_t crc = Crc32(payload);
  AppendU32(record, crc);
  record.append(payload);
  AppendU32(record, crc);
  return record;
}

bool AllTextValid(const Job& job) {
  for (const std::string* s :
       {&job.id, &job.request.task, &job.request.attempt, &job.request.outcome,
        &job.request.trigger, &job.request.run_id, &job.request.traceparent, &job.last_error}) {
    if (!IsValidUtf8(*s)) return false;
  }
  return true;
}

void CheckRoundTrip(const Job& job) {
  Result<std::string> record = EncodeWalRecord(job);
  FUZZ_CHECK(record.ok(), record.status().ToString());
  Result<Job> again = DecodeWalRecord(*record);
  FUZZ_CHECK(again.ok(), again.status().ToString());
  if (AllTextValid(job)) FUZZ_CHECK(*again == job, "decode(encode(job)) differs from the job");
  FUZZ_CHECK(EncodeWalPayload(*again) == EncodeWalPayload(job) || !AllTextValid(job),
             "encoding is not stable");
  Result<std::string> twice = EncodeWalRecord(*again);
  FUZZ_CHECK(twice.ok() && *twice == *record || !AllTextValid(job),
             "encode(decode(encode(job))) differs");

  // The record fitted for chatcli's reader stays within its bound (or has no texts left).
  Job fitted = FitWalRecord(job, kChatcliMaxRecordBytes);
  Result<std::string> fitted_record = EncodeWalRecord(fitted);
  FUZZ_CHECK(fitted_record.ok(), fitted_record.status().ToString());
  const bool emptied = fitted.request.task.empty() && fitted.request.attempt.empty() &&
                       fitted.request.outcome.empty() && fitted.last_error.empty();
  FUZZ_CHECK(fitted_record->size() <= kChatcliMaxRecordBytes || emptied,
             "FitWalRecord left " + std::to_string(fitted_record->size()) + " bytes");
  FUZZ_CHECK(fitted.id == job.id, "FitWalRecord changed the id");
}

void ReadThroughFile(std::string_view bytes, bool decoded) {
  MemoryFileSystem fs;
  FUZZ_CHECK(WriteFileAtomically(fs, "/r", bytes).ok(), "writing the record");
  Result<std::unique_ptr<ReadableFile>> file = fs.OpenReadable("/r");
  FUZZ_CHECK(file.ok(), file.status().ToString());
  Result<Job> read = ReadWalRecord(**file);
  FUZZ_CHECK(read.ok() == decoded, "ReadWalRecord and DecodeWalRecord disagree: " +
                                       (read.ok() ? std::string("ok") : read.status().ToString()));
}

}  // namespace
}  // namespace mend::lessonq

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend::lessonq;
  const std::string_view input = mend::fuzz::AsText(data, size);

  mend::Result<Job> whole = DecodeWalRecord(input);
  if (whole.ok()) CheckRoundTrip(*whole);
  ReadThroughFile(input, whole.ok());

  mend::Result<Job> payload = DecodeWalPayload(input);
  const std::string wrapped = RecordOf(input);
  mend::Result<Job> record = DecodeWalRecord(wrapped);
  FUZZ_CHECK(payload.ok() == record.ok() || input.size() > kMaxWalPayloadBytes,
             "payload and record decoding disagree");
  if (payload.ok()) {
    FUZZ_CHECK(*payload == *record, "the wrapped record decodes to another job");
    CheckRoundTrip(*payload);
    ReadThroughFile(wrapped, true);
  } else {
    FUZZ_CHECK(payload.status().code() == mend::StatusCode::kDataLoss,
               "a bad payload is not kDataLoss: " + payload.status().ToString());
  }
  return 0;
}
