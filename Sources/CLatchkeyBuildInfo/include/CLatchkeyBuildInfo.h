#ifndef CLATCHKEY_BUILD_INFO_H
#define CLATCHKEY_BUILD_INFO_H

/* What `latchkey --version` names: the release and the commit the binary was built from.
 * Package.swift defines both (a C macro can carry a string, a Swift condition cannot). */

/* The release, e.g. "0.5.0". */
const char *latchkey_build_version(void);

/* The commit's full hash, with "-dirty" when the tree had uncommitted changes, or
 * "unknown" when the build saw no git repository. */
const char *latchkey_build_commit(void);

#endif
