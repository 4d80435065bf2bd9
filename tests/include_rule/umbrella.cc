// Compiled by IncludeRule.UmbrellaHeaderCompilesAlone (CMakeLists.txt here) with the include paths
// a user of the installed library has, never src/: the umbrella header alone must give a program
// mend's whole API.
#include <mend/mend.h>

namespace {

// A few names from the ends of the module order, so a header the umbrella stops including is
// noticed here as well as by the completeness check.
[[maybe_unused]] mend::Status CheckedStatus() { return mend::OkStatus(); }
[[maybe_unused]] constexpr auto kOpenRuntime = &mend::app::OpenRuntime;
[[maybe_unused]] constexpr auto kLoadAgentFolder = &mend::agent::LoadAgentFolder;

}  // namespace
