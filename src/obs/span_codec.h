#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"
#include "mend/obs/trace.h"

namespace mend::obs::internal {

// The JSON text observe.db keeps a span's attributes, events and links in (docs/observe.md). Each
// value is tagged with its type so a round trip gives back the same AttributeValue alternative:
//   attributes  [{"k":KEY,"s":STRING|"i":INT|"d":DOUBLE|"b":BOOL|"a":[STRING...]}, ...]
//   events      [{"name":NAME,"time":UNIX_NS,"attributes":[...]}, ...]
//   links       [{"trace_id":HEX,"span_id":HEX,"flags":N,"attributes":[...]}, ...]
// Order is kept. A non-finite double is the string "NaN", "Infinity" or "-Infinity". Invalid
// UTF-8 in strings is written as U+FFFD. Decoding returns kDataLoss for anything else.
std::string EncodeAttributes(const std::vector<Attribute>& attributes);
std::string EncodeEvents(const std::vector<SpanEvent>& events);
std::string EncodeLinks(const std::vector<SpanLink>& links);
// The same texts written into `out` (replacing what it held), so that a caller encoding many spans
// reuses one buffer's capacity instead of allocating a string per span.
void EncodeAttributesTo(const std::vector<Attribute>& attributes, std::string& out);
void EncodeEventsTo(const std::vector<SpanEvent>& events, std::string& out);
void EncodeLinksTo(const std::vector<SpanLink>& links, std::string& out);
Result<std::vector<Attribute>> DecodeAttributes(std::string_view text);
Result<std::vector<SpanEvent>> DecodeEvents(std::string_view text);
Result<std::vector<SpanLink>> DecodeLinks(std::string_view text);

// Time as signed nanoseconds since the Unix epoch, and back.
int64_t UnixNanos(Time t);
Time FromUnixNanos(int64_t ns);

}  // namespace mend::obs::internal
