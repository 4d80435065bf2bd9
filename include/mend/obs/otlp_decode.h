#pragma once

// DecodeOtlpTraces, the decoder of the OTLP receiver (docs/observe.md, "OTLP receiver"): a trace
// export request in protobuf or JSON becomes SpanData, within limits that a hostile body cannot
// exceed. Pure and thread-safe.

#include <cstddef>
#include <string_view>
#include <vector>

#include "mend/base/result.h"
#include "mend/obs/otlp.h"
#include "mend/obs/trace.h"

namespace mend::obs {

/// Bounds on what one request may decode to, so that a hostile body cannot exhaust memory or the
/// stack. Memory used is roughly 200 bytes per value plus the string bytes, on top of the body.
struct OtlpDecodeLimits {
  size_t max_spans = 20'000;  ///< spans per request
  /// Attributes (including the resource and scope attributes copied onto each span), events,
  /// links, and the elements of array and key-value-list values.
  size_t max_values = 1'000'000;
  /// Bytes of attribute keys and values (copies included; complex values as their JSON text).
  /// Names and other strings are bounded by the body's size.
  size_t max_string_bytes = size_t{64} << 20;
  /// Nesting of arrayValue/kvlistValue inside an attribute value, and of unknown protobuf groups.
  int max_depth = 32;
};

/// Decodes an OTLP/HTTP trace export body, an opentelemetry.proto.collector.trace.v1
/// ExportTraceServiceRequest, into spans as mend stores them: `kHttpProtobuf` for the protobuf
/// binary encoding (Content-Type application/x-protobuf), `kHttpJson` for OTLP/JSON (application/
/// json). The spans come back in request order. An empty body (protobuf) or `{}` holds no spans.
///
/// What lands where (docs/observe.md, "OTLP receiver"):
///   - ids become lowercase hex; a parent id that is absent, empty or all zeros makes a root span;
///   - span kind UNSPECIFIED (0) and unknown kinds become INTERNAL; unknown status codes become
///     UNSET; `flags` keeps its low 8 bits (the W3C trace flags); an absent `flags` is 0;
///   - attribute values: string, bool, int and double keep their type; an array of strings is a
///     string array; any other array and a kvlist are stored as a string holding their JSON text
///     (bytes as base64 strings, an empty value as null: OpenTelemetry's rules for non-OTLP
///     formats); a bytes value is its base64 text; an empty value is "";
///   - after a span's own attributes come, unless the span already has the key, the scope's name
///     and version as `otel.scope.name` and `otel.scope.version`, the scope's attributes, then the
///     resource's attributes (service.name among them), so no span loses what its producer said;
///   - a string attribute `mend.run.id` (the span's own or inherited) sets SpanData::run_id;
///   - dropped counts, trace_state and schema URLs are not kept;
///   - strings that are not valid UTF-8 get U+FFFD for each invalid byte.
///
/// Errors, all kInvalidArgument with a message naming the place ("spans[3].trace_id" and, for
/// protobuf, the byte offset): a truncated or overlong varint, a length running past the end of
/// its message, a known field with the wrong wire type, a malformed or unbalanced group, a trace id
/// that is not 16 bytes (32 hex digits in JSON), a span id that is not 8, an all-zero trace or span
/// id, a time beyond 2262 (not representable as signed nanoseconds), malformed JSON or a member of
/// the wrong JSON type, and a request beyond `limits`. Unknown fields are skipped (protobuf) or
/// ignored (JSON). Pure and thread-safe.
Result<std::vector<SpanData>> DecodeOtlpTraces(std::string_view body, OtlpProtocol protocol,
                                               const OtlpDecodeLimits& limits = {});

}  // namespace mend::obs
