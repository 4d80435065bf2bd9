#pragma once

// The body of an OTLP/HTTP trace export as the decoder wants it: the protocol from the
// Content-Type and the bytes with a gzip Content-Encoding undone (docs/http_api.md, "Traces").
#include <cstddef>
#include <string>
#include <string_view>

#include "mend/base/result.h"
#include "mend/obs/otlp.h"

namespace mend::server {

// The largest OTLP request body accepted, before and after gzip.
inline constexpr size_t kMaxOtlpBodyBytes = 32u << 20;

// "application/x-protobuf" (also "application/protobuf") or "application/json", parameters
// ignored; kInvalidArgument (answered 415) for anything else.
Result<obs::OtlpProtocol> OtlpProtocolOf(std::string_view content_type);

// Inflates a gzip body; kResourceExhausted when it inflates past `max_bytes`, kInvalidArgument
// when it is not gzip or is truncated.
Result<std::string> Gunzip(std::string_view body, size_t max_bytes);

}  // namespace mend::server
