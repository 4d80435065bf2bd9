#pragma once

// UnifiedDiff, the unified diff of one file of a proposal, in the form `patch -p1` and `git apply`
// read (docs/improve.md). Pure and thread-safe.

#include <string>
#include <string_view>

namespace mend::improve {

/// A line-based unified diff from `before` to `after` of the file `path` (relative to the agent
/// folder), in the format `patch -p1` and `git apply` read:
///
/// ```
///   --- a/<path>
///   +++ b/<path>
///   @@ -<start>[,<count>] +<start>[,<count>] @@
///    context line
///   -removed line
///   +added line
/// ```
///
/// Hunks carry 3 lines of context; changes closer than 6 unchanged lines share a hunk. A count of 1
/// is omitted; an empty range is written as the line before it with count 0 (a new file is
/// "@@ -0,0 +1,N @@"). A last line without '\n' is followed by "\ No newline at end of file".
/// An empty `before` is a file being added, an empty `after` one being removed; the headers stay
/// a/ and b/. Returns "" when the texts are equal. Control characters in `path` become '?' so each
/// header stays one line. The edit script is computed with dtl. Pure and thread-safe.
std::string UnifiedDiff(std::string_view path, std::string_view before, std::string_view after);

}  // namespace mend::improve
