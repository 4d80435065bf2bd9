#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "mend/base/config.h"
#include "mend/base/status.h"

namespace mend::config_internal {

// A value converted to its key's type, with its canonical text.
struct ParsedValue {
  ConfigTypedValue value;
  std::string text;
};

// Converts `text` by the type and range of `spec`; std::nullopt when it is not acceptable.
std::optional<ParsedValue> ParseConfigText(const ConfigKeySpec& spec, std::string_view text);

// What `spec` accepts, for error messages: "a duration between 1s and 1h, e.g. 30s".
std::string DescribeAccepted(const ConfigKeySpec& spec);

// `raw` as it may appear in a message: masked per the key's sensitivity.
std::string SafeText(const ConfigKeySpec& spec, std::string_view raw);

// kInvalidArgument "invalid value for <key> from <where>: <shown> (expected <accepted>)", where
// `shown` is the already quoted or formatted (and masked) offending value.
Status InvalidValueError(const ConfigKeySpec& spec, std::string_view where, std::string_view shown);

}  // namespace mend::config_internal
