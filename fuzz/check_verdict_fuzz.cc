// The `--check` command's output (src/improve/evaluate_check.cc, ParseVerdict and VerdictOf): a
// user's script prints a verdict that decides whether a candidate passes. Input: the check's
// stdout; the first byte picks how the process ended (exit 0, a non-zero exit, a signal, a
// timeout), the rest is stdout, and the first line of stdout doubles as stderr. Invariants: a
// verdict with an error never passes; a clean verdict has a finite score; errors are valid UTF-8.
#include <cmath>
#include <string>

#include "fuzz/fuzz_util.h"
#include "improve/evaluate_check.h"
#include "mend/base/utf8.h"

namespace {

void Check(const mend::improve::CheckVerdict& v) {
  FUZZ_CHECK(v.error.empty() || !v.pass, "a verdict with an error passed: " + v.error);
  FUZZ_CHECK(std::isfinite(v.score), "score " + std::to_string(v.score));
  FUZZ_CHECK(mend::IsValidUtf8(v.error), "the error is not valid UTF-8");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend;
  if (size == 0) return 0;
  const std::string_view out = fuzz::AsText(data + 1, size - 1);
  Check(improve::internal::ParseVerdict(out));

  SubprocessResult result;
  switch (data[0] % 4) {
    case 0:
      result.exit_code = 0;
      break;
    case 1:
      result.exit_code = 1 + data[0] / 4;
      break;
    case 2:
      result.term_signal = 9;
      break;
    default:
      result.timed_out = true;
      break;
  }
  result.stdout_data = std::string(out);
  result.stdout_total = out.size();
  result.stderr_data = std::string(out.substr(0, out.find('\n')));
  result.stderr_total = result.stderr_data.size();
  const improve::CheckVerdict verdict =
      improve::internal::VerdictOf(result, std::chrono::seconds(30));
  Check(verdict);
  if (data[0] % 4 != 0) FUZZ_CHECK(!verdict.pass, "a failed process passed");
  return 0;
}
