#pragma once

// A compact JSON Schema validator for tool parameters. Supported keywords: type (a name or an
// array of names; "integer" accepts numbers with no fractional part), properties, required,
// additionalProperties (bool or schema), items (a schema, or an array of schemas for tuples),
// enum, const, minimum, maximum, exclusiveMinimum, exclusiveMaximum (numbers, or the draft-4
// booleans), minLength, maxLength (in code points), minItems, maxItems, pattern (ECMAScript,
// searched anywhere in the string), anyOf, oneOf, allOf. Boolean schemas (true / false) are
// accepted. Keywords it does not know (description, title, default, $schema, format, ...) are
// ignored, except $ref, which is refused because ignoring it would accept anything.
//
// Neither function throws; both are pure and thread-safe.

#include <nlohmann/json_fwd.hpp>

#include "mend/base/status.h"

namespace mend::agent {

/// OK when `schema` is usable by ValidateAgainstSchema: every supported keyword has the right
/// shape and every pattern compiles. Otherwise kInvalidArgument naming the offending keyword by
/// its location in the schema ("schema.properties.path.type: unknown type \"strng\"").
Status ValidateJsonSchema(const nlohmann::json& schema);

/// OK when `value` satisfies `schema`. Otherwise kInvalidArgument whose message locates the first
/// problem in `value` with a JSONPath-like prefix, e.g. "$.path: expected string, got number",
/// "$: missing required property \"path\"", "$.mode: must be one of [\"a\",\"b\"]",
/// "$.items[2]: must be >= 0, got -1". An unusable schema is also kInvalidArgument
/// ("invalid schema: ...").
Status ValidateAgainstSchema(const nlohmann::json& value, const nlohmann::json& schema);

}  // namespace mend::agent
