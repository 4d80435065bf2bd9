// Matchers are header-only; this file keeps the support library non-empty before the fake
// server lands.
#include "tests/support/status_matchers.h"
