#pragma once

#include <string>
#include <string_view>

namespace mend::lessonq {

// Appends `s` as a JSON string literal, quotes included, byte for byte as Go's encoding/json
// (json.Marshal, HTML escaping on, as in Go 1.19) writes a Go string:
//
//   - '"' and '\\' are escaped with a backslash; \n, \r and \t are written as such;
//   - every other byte below 0x20, and '<', '>' and '&', as \u00XX with lowercase hex digits;
//   - U+2028 and U+2029 as \u2028 and \u2029;
//   - each byte that does not begin a well-formed UTF-8 sequence (see DecodeUtf8Rune) as the
//     six characters \ufffd, one per byte, so e2 82 becomes \ufffd\ufffd;
//   - everything else, including DEL and valid non-ASCII text, unchanged.
//
// The result is always valid JSON text and valid UTF-8. Pure and thread-safe.
void AppendGoJsonString(std::string_view s, std::string& out);

}  // namespace mend::lessonq
