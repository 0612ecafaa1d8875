#include "CLatchkeyBuildInfo.h"

#ifndef LATCHKEY_BUILD_VERSION
#error "Package.swift defines LATCHKEY_BUILD_VERSION"
#endif
#ifndef LATCHKEY_BUILD_COMMIT
#define LATCHKEY_BUILD_COMMIT "unknown"
#endif

const char *latchkey_build_version(void) { return LATCHKEY_BUILD_VERSION; }

const char *latchkey_build_commit(void) { return LATCHKEY_BUILD_COMMIT; }
