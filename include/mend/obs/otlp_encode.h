#pragma once

// The OTLP trace encoders (docs/observe.md, "OTLP export"): EncodeOtlpProtobuf and EncodeOtlpJson
// write spans as one export request, with the resource that names their producer. Pure and
// thread-safe.

#include <string>
#include <string_view>
#include <vector>

#include "mend/obs/trace.h"

namespace mend::obs {

/// What an OTLP export says about its producer: the Resource (the process) and the
/// InstrumentationScope (the library that made the spans).
struct OtlpResource {
  std::vector<Attribute> attributes;  ///< e.g. service.name, service.version, host.name
  std::string scope_name = "mend";    ///< the instrumentation scope
  std::string scope_version;          ///< its version
};

/// service.name=mend, service.version=`version` and host.name=`host_name` (each omitted when
/// empty), with scope "mend" at `version`.
OtlpResource MakeOtlpResource(std::string_view version, std::string_view host_name);

/// This machine's host name (gethostname), "" when it cannot be read.
std::string LocalHostName();

/// Encodes `spans` as one opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest in the
/// protobuf binary format (OTLP/HTTP with Content-Type application/x-protobuf): one ResourceSpans
/// with `resource`, one ScopeSpans, one Span per element in order. Field numbers and the layout are
/// documented in docs/observe.md ("OTLP export").
///
/// Ids travel as raw bytes (16 for a trace, 8 for a span); an id that is not the expected number of
/// lowercase hex digits is left out. Times are nanoseconds since the Unix epoch (0 for an earlier
/// time). Strings that are not valid UTF-8 get U+FFFD for each invalid byte, because protobuf
/// parsers reject such strings. Pure and thread-safe.
std::string EncodeOtlpProtobuf(const OtlpResource& resource, const std::vector<SpanData>& spans);

/// The same request in the OTLP/JSON encoding (Content-Type application/json): lowerCamelCase field
/// names, ids as lowercase hex strings, enums as integers, 64-bit integers (times, int attributes)
/// as decimal strings, a non-finite double as "NaN", "Infinity" or "-Infinity". Fields holding
/// their default value (an empty parent id, an unset status) are left out. Pure and thread-safe.
std::string EncodeOtlpJson(const OtlpResource& resource, const std::vector<SpanData>& spans);

}  // namespace mend::obs
