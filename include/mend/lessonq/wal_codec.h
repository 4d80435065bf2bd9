#pragma once

// The WAL record codec (docs/wal_format.md): a Job as the byte-exact record chatcli writes,
// decoding with every check of the format, and the fitting of a record into chatcli's reader. Pure
// and thread-safe.

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/lessonq/job.h"

namespace mend::lessonq {

/// The byte layout of one WAL record (docs/wal_format.md), shared with chatcli:
///
///   [magic "LSN1"][u32 BE payload length N][u32 BE CRC-32/IEEE of payload][payload][u32 BE CRC]
///
/// The payload is JSON {"v":1,"job":{"ID","Request":{"Task","Attempt","Outcome","Trigger"},
/// "EnqueuedAt","NextAttemptAt","Attempts","LastError"}} with RFC 3339 times. It is written in
/// exactly the bytes Go's encoding/json gives chatcli's structs, so the same job has the same
/// record in both tools. Reading ignores unknown fields and key order.
inline constexpr std::string_view kWalMagic = "LSN1";
inline constexpr size_t kWalHeaderBytes = 12;             ///< magic + length + CRC
inline constexpr size_t kWalTrailerBytes = 4;             ///< the CRC again
inline constexpr size_t kMaxWalPayloadBytes = 16u << 20;  ///< 16 MiB
inline constexpr int kWalVersion = 1;                     ///< the payload's "v"

/// The payload JSON of `job`, as Go's json.Marshal writes it: members in the order above (mend's
/// own Request.RunID, Traceparent, Provider, BaseURL and Model after Trigger, each only when not
/// empty), strings escaped
/// as Go escapes them (<, >, & as `\u003c \u003e \u0026`, U+2028/U+2029 as `\u2028 \u2029`, each
/// invalid UTF-8 byte as one `\ufffd`), times in UTC as RFC3339Nano. Pure and thread-safe.
std::string EncodeWalPayload(const Job& job);
/// The whole record of `job`. kInvalidArgument when the payload would exceed kMaxWalPayloadBytes.
Result<std::string> EncodeWalRecord(const Job& job);

/// The largest record chatcli's reader takes whole (docs/wal_format.md, "Long records and
/// chatcli"): it reads a record with one buffered read of at most 4096 bytes.
inline constexpr size_t kChatcliMaxRecordBytes = 4096;
/// What FitWalRecord appends to a text it shortened.
inline constexpr std::string_view kCutMarker = " [cut to fit chatcli's reader]";
/// `job` with its texts shortened, when needed, so that its whole record takes at most
/// `max_record_bytes`: the last error first, then the attempt, the outcome and the task, each
/// cut at a character boundary and marked with kCutMarker. The id and the times are kept (the id
/// still names the job as it was enqueued, so enqueueing it again is still a no-op). When even
/// empty texts do not fit, the texts come back empty.
Job FitWalRecord(Job job, size_t max_record_bytes);

/// Decodes a payload. kDataLoss naming the problem for malformed JSON, a missing or mistyped
/// field, an unparsable time, or a version other than kWalVersion.
Result<Job> DecodeWalPayload(std::string_view payload);
/// Decodes a whole record held in memory. kDataLoss for a bad magic, a length above
/// kMaxWalPayloadBytes, a record shorter or longer than its length says (a torn tail), a CRC
/// mismatch in the header or the trailer, and every payload error above.
Result<Job> DecodeWalRecord(std::string_view record);
/// Reads one record from `file`: the header, then exactly N payload bytes and the trailer (so
/// records of megabytes are read whole), then checks that nothing follows. Errors as
/// DecodeWalRecord; read errors of the file system come back as they are.
Result<Job> ReadWalRecord(ReadableFile& file);

}  // namespace mend::lessonq
