// observe.db's JSON columns. nlohmann is used through mend/base/json.h's adapter for parsing (it
// throws); building and dumping values does not throw for the types written here.
#include "obs/span_codec.h"

#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <utility>

#include "mend/base/json.h"

namespace mend::obs::internal {
namespace {

using nlohmann::json;

json ValueJson(const AttributeValue& value) {
  if (const auto* d = std::get_if<double>(&value)) {
    if (std::isnan(*d)) return "NaN";
    if (std::isinf(*d)) return *d > 0 ? "Infinity" : "-Infinity";
    return *d;
  }
  return std::visit([](const auto& v) { return json(v); }, value);
}

const char* TagOf(const AttributeValue& value) {
  static constexpr const char* kTags[] = {"s", "i", "d", "b", "a"};
  return kTags[value.index()];
}

json AttributesJson(const std::vector<Attribute>& attributes) {
  json list = json::array();
  for (const Attribute& a : attributes) {
    json entry = json::object();
    entry["k"] = a.key;
    entry[TagOf(a.value)] = ValueJson(a.value);
    list.push_back(std::move(entry));
  }
  return list;
}

Status Corrupt(std::string_view what) {
  return DataLossError("observe.db: malformed " + std::string(what));
}

Result<double> DoubleOf(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (v.is_string()) {
    const std::string& s = v.get_ref<const std::string&>();
    if (s == "NaN") return std::numeric_limits<double>::quiet_NaN();
    if (s == "Infinity") return std::numeric_limits<double>::infinity();
    if (s == "-Infinity") return -std::numeric_limits<double>::infinity();
  }
  return Corrupt("double attribute");
}

Result<AttributeValue> ValueOf(const json& entry) {
  if (auto it = entry.find("s"); it != entry.end() && it->is_string()) {
    return AttributeValue(it->get<std::string>());
  }
  if (auto it = entry.find("i"); it != entry.end() && it->is_number_integer()) {
    return AttributeValue(it->get<int64_t>());
  }
  if (auto it = entry.find("d"); it != entry.end()) {
    MEND_ASSIGN_OR_RETURN(double d, DoubleOf(*it));
    return AttributeValue(d);
  }
  if (auto it = entry.find("b"); it != entry.end() && it->is_boolean()) {
    return AttributeValue(it->get<bool>());
  }
  if (auto it = entry.find("a"); it != entry.end() && it->is_array()) {
    std::vector<std::string> items;
    for (const json& item : *it) {
      if (!item.is_string()) return Corrupt("string array attribute");
      items.push_back(item.get<std::string>());
    }
    return AttributeValue(std::move(items));
  }
  return Corrupt("attribute value");
}

Result<std::vector<Attribute>> AttributesOf(const json& list) {
  if (!list.is_array()) return Corrupt("attributes");
  std::vector<Attribute> attributes;
  attributes.reserve(list.size());
  for (const json& entry : list) {
    if (!entry.is_object()) return Corrupt("attribute");
    Result<std::string> key = GetString(entry, "k");
    if (!key.ok()) return Corrupt("attribute key");
    MEND_ASSIGN_OR_RETURN(AttributeValue value, ValueOf(entry));
    attributes.push_back({*std::move(key), std::move(value)});
  }
  return attributes;
}

Result<json> ParseList(std::string_view text, std::string_view what) {
  if (text.empty()) return json::array();
  Result<json> parsed = ParseJson(text);
  if (!parsed.ok() || !parsed->is_array()) return Corrupt(what);
  return parsed;
}

// Bytes a JSON string cannot hold as they are (control characters, '"', '\\') and bytes that
// may start invalid UTF-8 (non-ASCII): a string holding any goes through DumpJson.
constexpr std::array<bool, 256> kSlowBytes = [] {
  std::array<bool, 256> slow{};
  for (int c = 0; c < 256; ++c) slow[c] = c < 0x20 || c >= 0x80 || c == '"' || c == '\\';
  return slow;
}();

// The fast path of EncodeAttributes: plain ASCII text is copied as is; anything else (escapes,
// control characters, non-ASCII bytes that may be invalid UTF-8) goes through DumpJson.
void AppendString(std::string& out, std::string_view text) {
  for (char c : text) {
    if (kSlowBytes[static_cast<unsigned char>(c)]) {
      out += DumpJson(json(std::string(text)));
      return;
    }
  }
  const size_t at = out.size();
  out.resize(at + text.size() + 2);
  char* p = out.data() + at;
  *p = '"';
  std::memcpy(p + 1, text.data(), text.size());
  p[text.size() + 1] = '"';
}

void AppendNumber(std::string& out, const AttributeValue& value) {
  char buf[32];
  if (const auto* i = std::get_if<int64_t>(&value)) {
    out.append(buf, std::to_chars(buf, buf + sizeof(buf), *i).ptr);
    return;
  }
  const double d = std::get<double>(value);
  if (!std::isfinite(d)) {
    out += std::isnan(d) ? "\"NaN\"" : (d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
    return;
  }
  // Shortest text that reads back as the same double; it must also read back as a double.
  const std::string_view text(buf, std::to_chars(buf, buf + sizeof(buf), d).ptr - buf);
  out += text;
  if (text.find_first_of(".eE") == std::string_view::npos) out += ".0";
}

void AppendValue(std::string& out, const AttributeValue& value) {
  if (const auto* s = std::get_if<std::string>(&value)) return AppendString(out, *s);
  if (const auto* b = std::get_if<bool>(&value)) {
    out += *b ? "true" : "false";
    return;
  }
  if (const auto* list = std::get_if<std::vector<std::string>>(&value)) {
    out += '[';
    for (size_t i = 0; i < list->size(); ++i) {
      if (i > 0) out += ',';
      AppendString(out, (*list)[i]);
    }
    out += ']';
    return;
  }
  AppendNumber(out, value);
}

}  // namespace

int64_t UnixNanos(Time t) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count();
}

Time FromUnixNanos(int64_t ns) {
  return Time(std::chrono::duration_cast<Time::duration>(std::chrono::nanoseconds(ns)));
}

void EncodeAttributesTo(const std::vector<Attribute>& attributes, std::string& out) {
  // Hand-written: this runs for every span written, and building nlohmann values costs more than
  // the SQLite insert.
  out.assign(1, '[');
  for (size_t i = 0; i < attributes.size(); ++i) {
    out.append(i == 0 ? std::string_view("{\"k\":") : std::string_view(",{\"k\":"));
    AppendString(out, attributes[i].key);
    out.append(",\"");
    out += *TagOf(attributes[i].value);
    out.append("\":");
    AppendValue(out, attributes[i].value);
    out += '}';
  }
  out += ']';
}

void EncodeEventsTo(const std::vector<SpanEvent>& events, std::string& out) {
  if (events.empty()) {
    out.assign("[]");
    return;
  }
  json list = json::array();
  for (const SpanEvent& e : events) {
    list.push_back({{"name", e.name},
                    {"time", UnixNanos(e.time)},
                    {"attributes", AttributesJson(e.attributes)}});
  }
  out = DumpJson(list);
}

void EncodeLinksTo(const std::vector<SpanLink>& links, std::string& out) {
  if (links.empty()) {
    out.assign("[]");
    return;
  }
  json list = json::array();
  for (const SpanLink& l : links) {
    list.push_back({{"trace_id", l.context.trace_id},
                    {"span_id", l.context.span_id},
                    {"flags", l.context.flags},
                    {"attributes", AttributesJson(l.attributes)}});
  }
  out = DumpJson(list);
}

std::string EncodeAttributes(const std::vector<Attribute>& attributes) {
  std::string out;
  EncodeAttributesTo(attributes, out);
  return out;
}

std::string EncodeEvents(const std::vector<SpanEvent>& events) {
  std::string out;
  EncodeEventsTo(events, out);
  return out;
}

std::string EncodeLinks(const std::vector<SpanLink>& links) {
  std::string out;
  EncodeLinksTo(links, out);
  return out;
}

Result<std::vector<Attribute>> DecodeAttributes(std::string_view text) {
  MEND_ASSIGN_OR_RETURN(json list, ParseList(text, "attributes"));
  return AttributesOf(list);
}

Result<std::vector<SpanEvent>> DecodeEvents(std::string_view text) {
  MEND_ASSIGN_OR_RETURN(json list, ParseList(text, "events"));
  std::vector<SpanEvent> events;
  for (const json& entry : list) {
    SpanEvent event;
    Result<std::string> name = GetString(entry, "name");
    Result<int64_t> time = GetInt64(entry, "time");
    Result<const json*> attributes = GetArray(entry, "attributes");
    if (!name.ok() || !time.ok() || !attributes.ok()) return Corrupt("event");
    event.name = *std::move(name);
    event.time = FromUnixNanos(*time);
    MEND_ASSIGN_OR_RETURN(event.attributes, AttributesOf(**attributes));
    events.push_back(std::move(event));
  }
  return events;
}

Result<std::vector<SpanLink>> DecodeLinks(std::string_view text) {
  MEND_ASSIGN_OR_RETURN(json list, ParseList(text, "links"));
  std::vector<SpanLink> links;
  for (const json& entry : list) {
    SpanLink link;
    Result<std::string> trace_id = GetString(entry, "trace_id");
    Result<std::string> span_id = GetString(entry, "span_id");
    Result<int64_t> flags = GetInt64(entry, "flags");
    Result<const json*> attributes = GetArray(entry, "attributes");
    if (!trace_id.ok() || !span_id.ok() || !flags.ok() || !attributes.ok() || *flags < 0 ||
        *flags > 255) {
      return Corrupt("link");
    }
    link.context = {*std::move(trace_id), *std::move(span_id), static_cast<uint8_t>(*flags)};
    MEND_ASSIGN_OR_RETURN(link.attributes, AttributesOf(**attributes));
    links.push_back(std::move(link));
  }
  return links;
}

}  // namespace mend::obs::internal
