#pragma once

// Base64 (RFC 4648): encoding with the standard alphabet, decoding of the standard and the URL-safe
// alphabets, padded or not. Pure and thread-safe.

#include <string>
#include <string_view>

namespace mend {

/// Standard base64 (RFC 4648 §4) with padding.
std::string Base64Encode(std::string_view bytes);
/// Standard or URL-safe base64 (RFC 4648 §5), padded or not; false for anything else (`out` is
/// then unspecified).
bool Base64Decode(std::string_view text, std::string* out);

}  // namespace mend
