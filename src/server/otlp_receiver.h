#pragma once

// The protocol of an OTLP/HTTP trace export, from its Content-Type (docs/http_api.md, "Traces").
// A gzip Content-Encoding is undone by cpp-httplib while the body is read through a bounded
// reader, so kMaxOtlpBodyBytes bounds the inflated bytes.
#include <cstddef>
#include <string>
#include <string_view>

#include "mend/base/result.h"
#include "mend/obs/otlp.h"

namespace mend::server {

// The largest OTLP request body accepted, after gzip is undone.
inline constexpr size_t kMaxOtlpBodyBytes = 32u << 20;

// "application/x-protobuf" (also "application/protobuf") or "application/json", parameters
// ignored; kInvalidArgument (answered 415) for anything else.
Result<obs::OtlpProtocol> OtlpProtocolOf(std::string_view content_type);

}  // namespace mend::server
