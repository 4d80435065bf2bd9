#include "mend/lessonq/wal_codec.h"

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>

#include "lessonq/go_json.h"
#include "mend/base/hash.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"
#include "mend/base/utf8.h"

namespace mend::lessonq {
namespace {

using nlohmann::json;

// Go writes the zero time.Time as this; our Time cannot hold year 1, so it maps to Time{}.
constexpr std::string_view kGoZeroTime = "0001-01-01T00:00:00Z";

void PutU32(uint32_t v, std::string& out) {
  out.push_back(static_cast<char>((v >> 24) & 0xFF));
  out.push_back(static_cast<char>((v >> 16) & 0xFF));
  out.push_back(static_cast<char>((v >> 8) & 0xFF));
  out.push_back(static_cast<char>(v & 0xFF));
}

uint32_t GetU32(std::string_view bytes) {
  return (static_cast<uint32_t>(static_cast<uint8_t>(bytes[0])) << 24) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[1])) << 16) |
         (static_cast<uint32_t>(static_cast<uint8_t>(bytes[2])) << 8) |
         static_cast<uint32_t>(static_cast<uint8_t>(bytes[3]));
}

Status Corrupt(std::string_view what) {
  return DataLossError("corrupt WAL record: " + std::string(what));
}

// A string member; null and (for lenient fields) a missing member read as "".
Result<std::string> StringField(const json& obj, std::string_view key, bool required) {
  if (required && !obj.contains(std::string(key))) {
    return Corrupt("missing field \"" + std::string(key) + "\"");
  }
  Result<std::optional<std::string>> value = GetOptionalString(obj, key);
  if (!value.ok()) return Corrupt(value.status().message());
  return value->value_or("");
}

Result<Time> TimeField(const json& obj, std::string_view key) {
  Result<std::string> text = GetString(obj, key);
  if (!text.ok()) return Corrupt(text.status().message());
  if (*text == kGoZeroTime) return Time{};
  Result<Time> t = ParseRfc3339(*text);
  if (!t.ok())
    return Corrupt("field \"" + std::string(key) + "\": " + std::string(t.status().message()));
  return *t;
}

Result<LessonRequest> DecodeRequest(const json& job) {
  Result<const json*> request = GetObject(job, "Request");
  if (!request.ok()) return Corrupt(request.status().message());
  LessonRequest r;
  MEND_ASSIGN_OR_RETURN(r.task, StringField(**request, "Task", true));
  MEND_ASSIGN_OR_RETURN(r.attempt, StringField(**request, "Attempt", true));
  MEND_ASSIGN_OR_RETURN(r.outcome, StringField(**request, "Outcome", true));
  MEND_ASSIGN_OR_RETURN(r.trigger, StringField(**request, "Trigger", true));
  MEND_ASSIGN_OR_RETURN(r.run_id, StringField(**request, "RunID", false));
  MEND_ASSIGN_OR_RETURN(r.traceparent, StringField(**request, "Traceparent", false));
  MEND_ASSIGN_OR_RETURN(r.provider, StringField(**request, "Provider", false));
  MEND_ASSIGN_OR_RETURN(r.base_url, StringField(**request, "BaseURL", false));
  MEND_ASSIGN_OR_RETURN(r.model, StringField(**request, "Model", false));
  MEND_ASSIGN_OR_RETURN(r.workspace, StringField(**request, "LessonWorkspace", false));
  return r;
}

Result<Job> DecodeJob(const json& job) {
  Job out;
  MEND_ASSIGN_OR_RETURN(out.id, StringField(job, "ID", true));
  MEND_ASSIGN_OR_RETURN(out.request, DecodeRequest(job));
  MEND_ASSIGN_OR_RETURN(out.enqueued_at, TimeField(job, "EnqueuedAt"));
  MEND_ASSIGN_OR_RETURN(out.next_attempt_at, TimeField(job, "NextAttemptAt"));
  Result<std::optional<int64_t>> attempts = GetOptionalInt64(job, "Attempts");
  if (!attempts.ok()) return Corrupt(attempts.status().message());
  out.attempts = attempts->value_or(0);
  MEND_ASSIGN_OR_RETURN(out.last_error, StringField(job, "LastError", false));
  return out;
}

// Checks the two CRCs of a framed payload and decodes it.
Result<Job> CheckAndDecode(uint32_t header_crc, std::string_view payload, uint32_t trailer_crc) {
  const uint32_t actual = Crc32(payload);
  if (header_crc != actual) return Corrupt("header CRC mismatch");
  if (trailer_crc != actual) return Corrupt("trailer CRC mismatch");
  return DecodeWalPayload(payload);
}

// Validates the 12 header bytes; returns the payload length.
Result<uint32_t> CheckHeader(std::string_view header) {
  if (header.substr(0, 4) != kWalMagic) return Corrupt("bad magic");
  const uint32_t length = GetU32(header.substr(4, 4));
  if (length > kMaxWalPayloadBytes) {
    return Corrupt("payload length " + std::to_string(length) + " exceeds the limit");
  }
  return length;
}

// Appends "key":value with `value` escaped as Go's encoding/json escapes a string.
void AppendMember(std::string_view key, std::string_view value, std::string& out) {
  out.push_back('"');
  out.append(key);
  out.append("\":");
  AppendGoJsonString(value, out);
}

// ReadExactly, with an early end of file reported as a torn record.
Status ReadOrCorrupt(ReadableFile& file, size_t n, std::string* out) {
  Status s = file.ReadExactly(n, out);
  if (s.code() == StatusCode::kDataLoss) return Corrupt("torn tail: " + std::string(s.message()));
  return s;
}

}  // namespace

std::string EncodeWalPayload(const Job& job) {
  // Written by hand rather than through nlohmann so that the bytes are those Go's encoding/json
  // writes for chatcli's structs: fields in declaration order, Go's string escaping and time.Time
  // as RFC3339Nano. The same job then has the same bytes and CRC in both tools.
  std::string out = R"({"v":)" + std::to_string(kWalVersion) + R"(,"job":{)";
  AppendMember("ID", job.id, out);
  out.append(R"(,"Request":{)");
  AppendMember("Task", job.request.task, out);
  out.push_back(',');
  AppendMember("Attempt", job.request.attempt, out);
  out.push_back(',');
  AppendMember("Outcome", job.request.outcome, out);
  out.push_back(',');
  AppendMember("Trigger", job.request.trigger, out);
  // mend's own fields, after chatcli's and only when set, so a job without them is chatcli's
  // bytes exactly (as if declared with `json:",omitempty"`).
  if (!job.request.run_id.empty()) {
    out.push_back(',');
    AppendMember("RunID", job.request.run_id, out);
  }
  const std::pair<std::string_view, const std::string*> optional[] = {
      {"Traceparent", &job.request.traceparent},
      {"Provider", &job.request.provider},
      {"BaseURL", &job.request.base_url},
      {"Model", &job.request.model},
      {"LessonWorkspace", &job.request.workspace}};
  for (const auto& [key, value] : optional) {
    if (value->empty()) continue;
    out.push_back(',');
    AppendMember(key, *value, out);
  }
  out.append("},");
  AppendMember("EnqueuedAt", FormatRfc3339(job.enqueued_at), out);
  out.push_back(',');
  AppendMember("NextAttemptAt", FormatRfc3339(job.next_attempt_at), out);
  out.append(R"(,"Attempts":)" + std::to_string(job.attempts) + ",");
  AppendMember("LastError", job.last_error, out);
  out.append("}}");
  return out;
}

Job FitWalRecord(Job job, size_t max_record_bytes) {
  const size_t framing = kWalHeaderBytes + kWalTrailerBytes;
  auto size = [&] { return framing + EncodeWalPayload(job).size(); };
  // The texts in the order they give way: what a lesson needs least goes first.
  std::string* texts[] = {&job.last_error, &job.request.attempt, &job.request.outcome,
                          &job.request.task};
  for (std::string* text : texts) {
    size_t total = size();
    if (total <= max_record_bytes) break;
    // Encoded, a byte of text takes one to six bytes; cut at least the excess and retry, keeping
    // as much of the text as fits.
    while (total > max_record_bytes && !text->empty()) {
      const size_t excess = total - max_record_bytes + kCutMarker.size();
      if (text->ends_with(kCutMarker)) text->resize(text->size() - kCutMarker.size());
      if (excess >= text->size()) {
        text->clear();
      } else {
        *text = TruncateUtf8Bytes(*text, text->size() - excess);
        text->append(kCutMarker);
      }
      total = size();
    }
  }
  return job;
}

Result<std::string> EncodeWalRecord(const Job& job) {
  const std::string payload = EncodeWalPayload(job);
  if (payload.size() > kMaxWalPayloadBytes) {
    return InvalidArgumentError("WAL payload of " + std::to_string(payload.size()) +
                                " bytes exceeds the 16 MiB limit");
  }
  const uint32_t crc = Crc32(payload);
  std::string record;
  record.reserve(kWalHeaderBytes + payload.size() + kWalTrailerBytes);
  record.append(kWalMagic);
  PutU32(static_cast<uint32_t>(payload.size()), record);
  PutU32(crc, record);
  record.append(payload);
  PutU32(crc, record);
  return record;
}

Result<Job> DecodeWalPayload(std::string_view payload) {
  Result<json> doc = ParseJson(payload);
  if (!doc.ok()) return Corrupt(doc.status().message());
  Result<int64_t> version = GetInt64(*doc, "v");
  if (!version.ok()) return Corrupt(version.status().message());
  if (*version != kWalVersion) return Corrupt("unknown version " + std::to_string(*version));
  Result<const json*> job = GetObject(*doc, "job");
  if (!job.ok()) return Corrupt(job.status().message());
  return DecodeJob(**job);
}

Result<Job> DecodeWalRecord(std::string_view record) {
  if (record.size() < kWalHeaderBytes) return Corrupt("shorter than its header");
  MEND_ASSIGN_OR_RETURN(const uint32_t length, CheckHeader(record.substr(0, kWalHeaderBytes)));
  const size_t expected = kWalHeaderBytes + length + kWalTrailerBytes;
  if (record.size() < expected) return Corrupt("torn tail: shorter than its length says");
  if (record.size() > expected) return Corrupt("trailing bytes after the record");
  return CheckAndDecode(GetU32(record.substr(8, 4)), record.substr(kWalHeaderBytes, length),
                        GetU32(record.substr(kWalHeaderBytes + length, 4)));
}

Result<Job> ReadWalRecord(ReadableFile& file) {
  std::string header;
  MEND_RETURN_IF_ERROR(ReadOrCorrupt(file, kWalHeaderBytes, &header));
  MEND_ASSIGN_OR_RETURN(const uint32_t length, CheckHeader(header));
  // The length is bounded above, so this allocation is at most 16 MiB plus the trailer.
  std::string body;
  MEND_RETURN_IF_ERROR(ReadOrCorrupt(file, length + kWalTrailerBytes, &body));
  std::string extra;
  MEND_RETURN_IF_ERROR(file.Read(1, &extra));
  if (!extra.empty()) return Corrupt("trailing bytes after the record");
  const std::string_view view(body);
  return CheckAndDecode(GetU32(header.substr(8, 4)), view.substr(0, length),
                        GetU32(view.substr(length, 4)));
}

}  // namespace mend::lessonq
