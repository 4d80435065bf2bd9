// Compiled twice by the include-rule tests (CMakeLists.txt here): as part of module store, where
// this private header of store's is found, and as part of module memory, where it must not be.
#include "store/lease_rules.h"
