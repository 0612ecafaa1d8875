/*
 * pam_latchkey: the module's side of the helper protocol (docs/PROTOCOL.md section 13,
 * "The module and its helper"). The module is C and small on purpose: it runs inside sshd,
 * sudo and login, which fork, juggle signals and change privileges, so it loads no
 * Swift runtime and does no network or cryptography itself. It starts the helper
 * (`latchkey pam helper`) with a clean environment, sends it the PAM items, relays the
 * helper's lines through the PAM conversation, and maps its result to a PAM code.
 */
#ifndef PAM_LATCHKEY_H
#define PAM_LATCHKEY_H

/* The first line each side writes. */
#define PAM_LATCHKEY_PROTOCOL "LATCHKEY-PAM/1"
/* The longest line either side writes, newline included. */
#define PAM_LATCHKEY_MAX_LINE 4096
/* The most lines the helper may write in one run. */
#define PAM_LATCHKEY_MAX_LINES 256
/* The longest PAM user name sent; a longer one is refused. */
#define PAM_LATCHKEY_MAX_USER 256
/* The longest other item sent (service, remote host, remote user, tty), before escaping. */
#define PAM_LATCHKEY_MAX_ITEM 1024
/* The default and largest overall timeout, in seconds. */
#define PAM_LATCHKEY_DEFAULT_TIMEOUT 150
#define PAM_LATCHKEY_MAX_TIMEOUT 900

#endif
