// OTLP protobuf trace requests to SpanData. Field numbers follow opentelemetry-proto
// (collector/trace/v1, trace/v1, resource/v1, common/v1), as the encoder in otlp_protobuf.cc
// writes them; fields of any other number are skipped. Fields may come in any order, so a
// ResourceSpans' resource is applied to its spans once the whole message has been read.

#include <cstring>
#include <utility>

#include "obs/otlp_decode_common.h"
#include "obs/proto_wire_reader.h"

namespace mend::obs::otlp_internal {
namespace {

using internal::ProtoWireReader;
using Tag = ProtoWireReader::Tag;

constexpr std::string_view kFormat = "protobuf";

// AnyValue, ArrayValue and KeyValueList (values = 1), KeyValue
constexpr uint32_t kAnyString = 1, kAnyBool = 2, kAnyInt = 3, kAnyDouble = 4, kAnyArray = 5,
                   kAnyKvList = 6, kAnyBytes = 7;
constexpr uint32_t kListValues = 1;
constexpr uint32_t kKeyValueKey = 1, kKeyValueValue = 2;
// ExportTraceServiceRequest, ResourceSpans, Resource, ScopeSpans, InstrumentationScope
constexpr uint32_t kRequestResourceSpans = 1;
constexpr uint32_t kResourceSpansResource = 1, kResourceSpansScopeSpans = 2;
constexpr uint32_t kResourceAttributes = 1;
constexpr uint32_t kScopeSpansScope = 1, kScopeSpansSpans = 2;
constexpr uint32_t kScopeName = 1, kScopeVersion = 2, kScopeAttributes = 3;
// Span, Span.Event, Span.Link, Status
constexpr uint32_t kSpanTraceId = 1, kSpanSpanId = 2, kSpanParentSpanId = 4, kSpanName = 5,
                   kSpanKind = 6, kSpanStart = 7, kSpanEnd = 8, kSpanAttributes = 9,
                   kSpanEvents = 11, kSpanLinks = 13, kSpanStatus = 15, kSpanFlags = 16;
constexpr uint32_t kEventTime = 1, kEventName = 2, kEventAttributes = 3;
constexpr uint32_t kLinkTraceId = 1, kLinkSpanId = 2, kLinkAttributes = 4, kLinkFlags = 6;
constexpr uint32_t kStatusMessage = 2, kStatusCode = 3;

// A reader's error, placed. On the path of every field read: the value is moved, never copied.
template <typename T>
Result<T> At(Result<T>&& result, const OtlpPath& at) {
  if (result.ok()) [[likely]]
    return std::move(result);
  return DecodeError(kFormat, &at, result.status().message());
}
Status At(const Status& status, const OtlpPath& at) {
  return status.ok() ? status : DecodeError(kFormat, &at, status.message());
}

// The spans of one ScopeSpans (a range of the decoder's output) and what they inherit from it.
struct ScopeBlock {
  std::string name;
  std::string version;
  std::vector<Attribute> attributes;
  size_t first = 0;
  size_t last = 0;
};

// A span's ids as the wire has them; checked once the whole span has been read.
struct RawIds {
  std::string_view trace_id, span_id, parent_span_id;
};

class ProtoDecoder {
 public:
  explicit ProtoDecoder(const OtlpDecodeLimits& limits) : budget_(limits, kFormat) {}

  Result<std::vector<SpanData>> Request(std::string_view body) {
    ProtoWireReader r(body);
    int64_t index = 0;
    while (!r.done()) {
      const OtlpPath at{nullptr, "resource_spans", index};
      MEND_ASSIGN_OR_RETURN(Tag tag, At(r.NextTag(), at));
      if (tag.field == kRequestResourceSpans) {
        MEND_ASSIGN_OR_RETURN(ProtoWireReader sub, At(r.Message(tag), at));
        MEND_RETURN_IF_ERROR(ResourceSpans(sub, at));
        ++index;
      } else {
        MEND_RETURN_IF_ERROR(Skip(r, tag, at));
      }
    }
    return std::move(spans_);
  }

 private:
  Status Skip(ProtoWireReader& r, const Tag& tag, const OtlpPath& at) {
    return At(r.Skip(tag, budget_.max_depth()), at);
  }

  Result<std::string> String(ProtoWireReader& r, const Tag& tag, const OtlpPath& at) {
    MEND_ASSIGN_OR_RETURN(std::string_view bytes, At(r.Bytes(tag), at));
    return ValidUtf8String(bytes);
  }

  Result<Time> Nanos(ProtoWireReader& r, const Tag& tag, const OtlpPath& at) {
    MEND_ASSIGN_OR_RETURN(uint64_t ns, At(r.Fixed64(tag), at));
    Time t;
    if (!TimeFromUnixNanos(ns, &t)) return DecodeError(kFormat, &at, "time out of range");
    return t;
  }

  Result<std::string> Id(std::string_view raw, size_t bytes, std::string_view name,
                         const OtlpPath& at) {
    const OtlpPath field{&at, name};
    if (raw.empty()) return DecodeError(kFormat, &field, "missing");
    std::string error;
    std::string hex = HexIdFromBytes(raw, bytes, &error);
    if (hex.empty()) return DecodeError(kFormat, &field, error);
    return hex;
  }

  Status ResourceSpans(ProtoWireReader r, const OtlpPath& at) {
    std::vector<Attribute> resource;
    std::vector<ScopeBlock> scopes;
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag tag, At(r.NextTag(), at));
      if (tag.field == kResourceSpansResource) {
        const OtlpPath field{&at, "resource"};
        MEND_ASSIGN_OR_RETURN(ProtoWireReader sub, At(r.Message(tag), field));
        MEND_RETURN_IF_ERROR(Attributes(sub, field, kResourceAttributes, resource));
      } else if (tag.field == kResourceSpansScopeSpans) {
        const OtlpPath field{&at, "scope_spans", static_cast<int64_t>(scopes.size())};
        MEND_ASSIGN_OR_RETURN(ProtoWireReader sub, At(r.Message(tag), field));
        ScopeBlock& scope = scopes.emplace_back();
        scope.first = spans_.size();
        MEND_RETURN_IF_ERROR(ScopeSpans(sub, field, scope));
        scope.last = spans_.size();
      } else {
        MEND_RETURN_IF_ERROR(Skip(r, tag, at));
      }
    }
    for (const ScopeBlock& scope : scopes) {
      MEND_RETURN_IF_ERROR(
          FinishSpans(InheritedAttributes(scope.name, scope.version, scope.attributes, resource),
                      spans_.begin() + static_cast<ptrdiff_t>(scope.first),
                      spans_.begin() + static_cast<ptrdiff_t>(scope.last), budget_));
    }
    return OkStatus();
  }

  Status ScopeSpans(ProtoWireReader r, const OtlpPath& at, ScopeBlock& scope) {
    int64_t index = 0;
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag tag, At(r.NextTag(), at));
      if (tag.field == kScopeSpansScope) {
        const OtlpPath field{&at, "scope"};
        MEND_ASSIGN_OR_RETURN(ProtoWireReader sub, At(r.Message(tag), field));
        MEND_RETURN_IF_ERROR(Scope(sub, field, scope));
      } else if (tag.field == kScopeSpansSpans) {
        const OtlpPath field{&at, "spans", index++};
        MEND_ASSIGN_OR_RETURN(ProtoWireReader sub, At(r.Message(tag), field));
        MEND_RETURN_IF_ERROR(Span(sub, field));
      } else {
        MEND_RETURN_IF_ERROR(Skip(r, tag, at));
      }
    }
    return OkStatus();
  }

  Status Scope(ProtoWireReader r, const OtlpPath& at, ScopeBlock& scope) {
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag tag, At(r.NextTag(), at));
      if (tag.field == kScopeName) {
        MEND_ASSIGN_OR_RETURN(scope.name, String(r, tag, at));
      } else if (tag.field == kScopeVersion) {
        MEND_ASSIGN_OR_RETURN(scope.version, String(r, tag, at));
      } else if (tag.field == kScopeAttributes) {
        MEND_RETURN_IF_ERROR(AddAttribute(r, tag, at, scope.attributes));
      } else {
        MEND_RETURN_IF_ERROR(Skip(r, tag, at));
      }
    }
    return OkStatus();
  }

  Status Span(ProtoWireReader r, const OtlpPath& at) {
    MEND_RETURN_IF_ERROR(budget_.AddSpan());
    SpanData span;
    RawIds ids;
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag tag, At(r.NextTag(), at));
      MEND_RETURN_IF_ERROR(SpanField(r, tag, at, span, ids));
    }
    MEND_ASSIGN_OR_RETURN(span.context.trace_id, Id(ids.trace_id, 16, "trace_id", at));
    MEND_ASSIGN_OR_RETURN(span.context.span_id, Id(ids.span_id, 8, "span_id", at));
    std::string error;
    span.parent_span_id = ParentIdFromBytes(ids.parent_span_id, &error);
    if (!error.empty()) {
      const OtlpPath field{&at, "parent_span_id"};
      return DecodeError(kFormat, &field, error);
    }
    spans_.push_back(std::move(span));
    return OkStatus();
  }

  Status SpanField(ProtoWireReader& r, const Tag& tag, const OtlpPath& at, SpanData& span,
                   RawIds& ids) {
    switch (tag.field) {
      case kSpanTraceId:
        return Assign(At(r.Bytes(tag), at), ids.trace_id);
      case kSpanSpanId:
        return Assign(At(r.Bytes(tag), at), ids.span_id);
      case kSpanParentSpanId:
        return Assign(At(r.Bytes(tag), at), ids.parent_span_id);
      case kSpanName:
        return Assign(String(r, tag, at), span.name);
      case kSpanKind:
        return AssignKind(At(r.Varint(tag), at), span.kind);
      case kSpanStart:
        return Assign(Nanos(r, tag, OtlpPath{&at, "start_time_unix_nano"}), span.start);
      case kSpanEnd:
        return Assign(Nanos(r, tag, OtlpPath{&at, "end_time_unix_nano"}), span.end);
      case kSpanAttributes:
        return AddAttribute(r, tag, at, span.attributes);
      case kSpanEvents:
        return Event(r, tag, OtlpPath{&at, "events", static_cast<int64_t>(span.events.size())},
                     span.events);
      case kSpanLinks:
        return Link(r, tag, OtlpPath{&at, "links", static_cast<int64_t>(span.links.size())},
                    span.links);
      case kSpanStatus:
        return SpanStatusField(r, tag, OtlpPath{&at, "status"}, span);
      case kSpanFlags:
        return AssignFlags(At(r.Fixed32(tag), at), span.context.flags);
      default:
        return Skip(r, tag, at);
    }
  }

  template <typename T, typename U>
  static Status Assign(Result<T> value, U& out) {
    if (!value.ok()) return value.status();
    out = std::move(value).value();
    return OkStatus();
  }
  static Status AssignKind(Result<uint64_t> value, SpanKind& out) {
    if (!value.ok()) return value.status();
    out = SpanKindFromNumber(static_cast<int64_t>(*value));
    return OkStatus();
  }
  static Status AssignFlags(Result<uint32_t> value, uint8_t& out) {
    if (!value.ok()) return value.status();
    out = static_cast<uint8_t>(*value & 0xff);
    return OkStatus();
  }

  Status Event(ProtoWireReader& outer, const Tag& tag, const OtlpPath& at,
               std::vector<SpanEvent>& events) {
    MEND_RETURN_IF_ERROR(budget_.Add(1, 0));
    MEND_ASSIGN_OR_RETURN(ProtoWireReader r, At(outer.Message(tag), at));
    SpanEvent& event = events.emplace_back();
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag field, At(r.NextTag(), at));
      if (field.field == kEventTime) {
        MEND_ASSIGN_OR_RETURN(event.time, Nanos(r, field, OtlpPath{&at, "time_unix_nano"}));
      } else if (field.field == kEventName) {
        MEND_ASSIGN_OR_RETURN(event.name, String(r, field, at));
      } else if (field.field == kEventAttributes) {
        MEND_RETURN_IF_ERROR(AddAttribute(r, field, at, event.attributes));
      } else {
        MEND_RETURN_IF_ERROR(Skip(r, field, at));
      }
    }
    return OkStatus();
  }

  Status Link(ProtoWireReader& outer, const Tag& tag, const OtlpPath& at,
              std::vector<SpanLink>& links) {
    MEND_RETURN_IF_ERROR(budget_.Add(1, 0));
    MEND_ASSIGN_OR_RETURN(ProtoWireReader r, At(outer.Message(tag), at));
    SpanLink& link = links.emplace_back();
    RawIds ids;
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag field, At(r.NextTag(), at));
      if (field.field == kLinkTraceId) {
        MEND_RETURN_IF_ERROR(Assign(At(r.Bytes(field), at), ids.trace_id));
      } else if (field.field == kLinkSpanId) {
        MEND_RETURN_IF_ERROR(Assign(At(r.Bytes(field), at), ids.span_id));
      } else if (field.field == kLinkAttributes) {
        MEND_RETURN_IF_ERROR(AddAttribute(r, field, at, link.attributes));
      } else if (field.field == kLinkFlags) {
        MEND_RETURN_IF_ERROR(AssignFlags(At(r.Fixed32(field), at), link.context.flags));
      } else {
        MEND_RETURN_IF_ERROR(Skip(r, field, at));
      }
    }
    MEND_ASSIGN_OR_RETURN(link.context.trace_id, Id(ids.trace_id, 16, "trace_id", at));
    MEND_ASSIGN_OR_RETURN(link.context.span_id, Id(ids.span_id, 8, "span_id", at));
    return OkStatus();
  }

  Status SpanStatusField(ProtoWireReader& outer, const Tag& tag, const OtlpPath& at,
                         SpanData& span) {
    MEND_ASSIGN_OR_RETURN(ProtoWireReader r, At(outer.Message(tag), at));
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag field, At(r.NextTag(), at));
      if (field.field == kStatusMessage) {
        MEND_ASSIGN_OR_RETURN(span.status_message, String(r, field, at));
      } else if (field.field == kStatusCode) {
        MEND_ASSIGN_OR_RETURN(uint64_t code, At(r.Varint(field), at));
        span.status = SpanStatusFromNumber(static_cast<int64_t>(code));
      } else {
        MEND_RETURN_IF_ERROR(Skip(r, field, at));
      }
    }
    return OkStatus();
  }

  // The KeyValue fields numbered `number` of a message (the Resource's attributes).
  Status Attributes(ProtoWireReader r, const OtlpPath& at, uint32_t number,
                    std::vector<obs::Attribute>& out) {
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag tag, At(r.NextTag(), at));
      if (tag.field == number) {
        MEND_RETURN_IF_ERROR(AddAttribute(r, tag, at, out));
      } else {
        MEND_RETURN_IF_ERROR(Skip(r, tag, at));
      }
    }
    return OkStatus();
  }

  // One KeyValue field of `outer`, appended to `out` as an attribute.
  Status AddAttribute(ProtoWireReader& outer, const Tag& tag, const OtlpPath& parent,
                      std::vector<obs::Attribute>& out) {
    const OtlpPath at{&parent, "attributes", static_cast<int64_t>(out.size())};
    MEND_ASSIGN_OR_RETURN(ProtoWireReader r, At(outer.Message(tag), at));
    OtlpKeyValue kv;
    MEND_RETURN_IF_ERROR(KeyValue(r, at, 0, kv));
    MEND_ASSIGN_OR_RETURN(AttributeValue value, ToAttributeValue(std::move(kv.value), budget_));
    MEND_RETURN_IF_ERROR(budget_.Add(1, kv.key.size() + TextBytes(value)));
    out.push_back({std::move(kv.key), std::move(value)});
    return OkStatus();
  }

  Status KeyValue(ProtoWireReader r, const OtlpPath& at, int depth, OtlpKeyValue& out) {
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag tag, At(r.NextTag(), at));
      if (tag.field == kKeyValueKey) {
        MEND_ASSIGN_OR_RETURN(out.key, String(r, tag, at));
      } else if (tag.field == kKeyValueValue) {
        const OtlpPath field{&at, "value"};
        MEND_ASSIGN_OR_RETURN(ProtoWireReader sub, At(r.Message(tag), field));
        MEND_RETURN_IF_ERROR(AnyValue(sub, field, depth, out.value));
      } else {
        MEND_RETURN_IF_ERROR(Skip(r, tag, at));
      }
    }
    return OkStatus();
  }

  Status AnyValue(ProtoWireReader r, const OtlpPath& at, int depth, OtlpValue& out) {
    using Type = OtlpValue::Type;
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag tag, At(r.NextTag(), at));
      if (tag.field < kAnyString || tag.field > kAnyBytes) {
        MEND_RETURN_IF_ERROR(Skip(r, tag, at));
        continue;
      }
      out = OtlpValue{};  // a oneof: the last member read wins
      switch (tag.field) {
        case kAnyString:
          out.type = Type::kString;
          MEND_RETURN_IF_ERROR(Assign(String(r, tag, at), out.text));
          break;
        case kAnyBytes:
          out.type = Type::kBytes;
          MEND_RETURN_IF_ERROR(Assign(At(r.Bytes(tag), at), out.text));
          break;
        case kAnyBool:
        case kAnyInt: {
          MEND_ASSIGN_OR_RETURN(uint64_t v, At(r.Varint(tag), at));
          out.type = tag.field == kAnyBool ? Type::kBool : Type::kInt;
          out.bool_value = v != 0;
          out.int_value = static_cast<int64_t>(v);
          break;
        }
        case kAnyDouble: {
          MEND_ASSIGN_OR_RETURN(uint64_t bits, At(r.Fixed64(tag), at));
          out.type = Type::kDouble;
          std::memcpy(&out.double_value, &bits, sizeof bits);
          break;
        }
        case kAnyArray:
        case kAnyKvList:
        default:  // the fields outside 1..7 were skipped above
          MEND_RETURN_IF_ERROR(List(r, tag, at, depth + 1, out));
      }
    }
    return OkStatus();
  }

  // An ArrayValue or a KeyValueList, `depth` levels below the attribute.
  Status List(ProtoWireReader& outer, const Tag& tag, const OtlpPath& parent, int depth,
              OtlpValue& out) {
    const bool array = tag.field == kAnyArray;
    const OtlpPath at{&parent, array ? "array_value" : "kvlist_value"};
    if (depth > budget_.max_depth()) {
      return DecodeError(kFormat, &at,
                         "values nested deeper than " + std::to_string(budget_.max_depth()));
    }
    out.type = array ? OtlpValue::Type::kArray : OtlpValue::Type::kKvList;
    MEND_ASSIGN_OR_RETURN(ProtoWireReader r, At(outer.Message(tag), at));
    while (!r.done()) {
      MEND_ASSIGN_OR_RETURN(Tag item, At(r.NextTag(), at));
      if (item.field != kListValues) {
        MEND_RETURN_IF_ERROR(Skip(r, item, at));
        continue;
      }
      MEND_RETURN_IF_ERROR(budget_.Add(1, 0));
      const size_t n = array ? out.items.size() : out.entries.size();
      const OtlpPath element{&at, "values", static_cast<int64_t>(n)};
      MEND_ASSIGN_OR_RETURN(ProtoWireReader sub, At(r.Message(item), element));
      if (array) {
        MEND_RETURN_IF_ERROR(AnyValue(sub, element, depth, out.items.emplace_back()));
      } else {
        OtlpKeyValue& kv = out.entries.emplace_back();
        MEND_RETURN_IF_ERROR(KeyValue(sub, element, depth, kv));
        MEND_RETURN_IF_ERROR(budget_.Add(0, kv.key.size()));
      }
    }
    return OkStatus();
  }

  DecodeBudget budget_;
  std::vector<SpanData> spans_;
};

}  // namespace

Result<std::vector<SpanData>> DecodeOtlpProtobuf(std::string_view body,
                                                 const OtlpDecodeLimits& limits) {
  return ProtoDecoder(limits).Request(body);
}

}  // namespace mend::obs::otlp_internal
