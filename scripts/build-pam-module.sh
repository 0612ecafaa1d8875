#!/usr/bin/env bash
# Builds pam_latchkey.so, the PAM module sshd, sudo and login load (docs/guides/pam.md; docs/SECURITY.md, "PAM"), with the system's C compiler: no
# Swift in it, and nothing linked but libpam and libc. (SwiftPM would link it through the
# Swift driver, which names libstdc++ and libm ahead of any --as-needed.)
#
#   scripts/build-pam-module.sh OUTPUT.so
#
# Needs a C compiler ($CC, else cc) and Debian's libpam0g-dev.
set -euo pipefail
out=${1:?usage: scripts/build-pam-module.sh OUTPUT.so}
top=$(cd "$(dirname "$0")/.." && pwd)
"${CC:-cc}" -std=gnu11 -O2 -g -Wall -Wextra -Werror -fPIC -shared \
    -fstack-protector-strong -D_FORTIFY_SOURCE=2 \
    -I"$top/Sources/pam_latchkey/include" \
    -Wl,--as-needed -Wl,-z,relro -Wl,-z,now -Wl,-z,noexecstack \
    -o "$out" "$top/Sources/pam_latchkey/pam_latchkey.c" -lpam
