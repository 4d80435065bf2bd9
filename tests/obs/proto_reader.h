#pragma once

#include <cstdint>
#include <cstring>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mend::obs::testing {

// A minimal protobuf wire-format reader for checking the encoder: a message as its fields, each
// field number mapped to its values in order (varints and fixed values as integers, length-
// delimited values as bytes). Parse() returns nullopt for malformed input.
struct ProtoField {
  uint32_t wire_type = 0;
  uint64_t number = 0;  // varint, fixed64, fixed32
  std::string bytes;    // length-delimited
};

using ProtoMessage = std::multimap<uint32_t, ProtoField>;

inline std::optional<uint64_t> ReadVarint(std::string_view& in) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (in.empty()) return std::nullopt;
    const auto b = static_cast<uint8_t>(in.front());
    in.remove_prefix(1);
    v |= uint64_t{b & 0x7fu} << shift;
    if ((b & 0x80) == 0) return v;
  }
  return std::nullopt;
}

inline std::optional<ProtoMessage> ParseProto(std::string_view in) {
  ProtoMessage out;
  while (!in.empty()) {
    const std::optional<uint64_t> tag = ReadVarint(in);
    if (!tag) return std::nullopt;
    ProtoField f;
    f.wire_type = static_cast<uint32_t>(*tag & 7);
    const auto field = static_cast<uint32_t>(*tag >> 3);
    if (f.wire_type == 0) {
      std::optional<uint64_t> v = ReadVarint(in);
      if (!v) return std::nullopt;
      f.number = *v;
    } else if (f.wire_type == 1 || f.wire_type == 5) {
      const size_t n = f.wire_type == 1 ? 8 : 4;
      if (in.size() < n) return std::nullopt;
      for (size_t i = 0; i < n; ++i) f.number |= uint64_t{static_cast<uint8_t>(in[i])} << (8 * i);
      in.remove_prefix(n);
    } else if (f.wire_type == 2) {
      std::optional<uint64_t> len = ReadVarint(in);
      if (!len || *len > in.size()) return std::nullopt;
      f.bytes = std::string(in.substr(0, *len));
      in.remove_prefix(*len);
    } else {
      return std::nullopt;
    }
    out.emplace(field, std::move(f));
  }
  return out;
}

// The values of `field` in order.
inline std::vector<ProtoField> Fields(const ProtoMessage& m, uint32_t field) {
  std::vector<ProtoField> out;
  auto [lo, hi] = m.equal_range(field);
  for (auto it = lo; it != hi; ++it) out.push_back(it->second);
  return out;
}

// The nested message in the only value of `field` ({} when absent or malformed).
inline ProtoMessage Sub(const ProtoMessage& m, uint32_t field) {
  auto it = m.find(field);
  if (it == m.end()) return {};
  return ParseProto(it->second.bytes).value_or(ProtoMessage{});
}

inline double AsDouble(uint64_t bits) {
  double d;
  std::memcpy(&d, &bits, sizeof d);
  return d;
}

}  // namespace mend::obs::testing
