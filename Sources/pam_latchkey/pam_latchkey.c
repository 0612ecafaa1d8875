/*
 * pam_latchkey.so: sshd, sudo and login approved with a passkey on another device
 * (docs/guides/pam.md; docs/PROTOCOL.md section 13;
 * docs/SECURITY.md, "PAM"), and a fleet's directory accounts checked and given a home
 * (docs/PROTOCOL.md section 15).
 *
 * The module does one thing in each step (auth, account, session): run the helper as a
 * child with a clean environment, send it the PAM items, relay what the helper says
 * through the conversation, and return the helper's verdict. Everything that needs a network, a key or a parser of provider
 * replies is in the helper. Any failure of the helper (it cannot start, dies, hangs,
 * writes a malformed or oversized line) fails closed: never PAM_SUCCESS.
 *
 * It lives inside multithreaded hosts (sshd, sudo, display managers, PAM-using daemons),
 * so it touches no process-wide state: no signal disposition (it writes with
 * MSG_NOSIGNAL on a socket instead of ignoring SIGPIPE), no wait on a pid that a host's
 * own SIGCHLD handler may have reaped and the kernel reused (the child is held by a
 * pidfd), and no write that can block past the deadline (the socket is non-blocking).
 *
 * Module arguments (each optional):
 *   helper=/absolute/path   the latchkey executable (default /usr/bin/latchkey); it and
 *                           every directory above it must belong to root (or to the
 *                           calling user) and be writable by nobody else, as OpenSSH asks
 *                           of AuthorizedKeysCommand
 *   config=/absolute/path   the helper's configuration (default /etc/latchkey/pam.conf for
 *                           auth, /etc/latchkey/host.conf for account and session)
 *   timeout=SECONDS         the whole exchange, 1 to 900 (default 150)
 *   debug                   log each step to syslog
 */
#define _GNU_SOURCE
#define PAM_SM_AUTH
#define PAM_SM_ACCOUNT
#define PAM_SM_SESSION
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/sched.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <syslog.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_ext.h>
#include <security/pam_modules.h>

#include "pam_latchkey.h"

struct options {
    const char *helper;
    const char *config;
    int timeout;
    int debug;
};

/* Reads the module arguments; an unknown or malformed one is refused (fail closed). */
static int parse_options(pam_handle_t *pamh, int argc, const char **argv, struct options *options) {
    options->helper = "/usr/bin/latchkey";
    options->config = NULL;
    options->timeout = PAM_LATCHKEY_DEFAULT_TIMEOUT;
    options->debug = 0;
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "helper=", 7) == 0 && arg[7] == '/') {
            options->helper = arg + 7;
        } else if (strncmp(arg, "config=", 7) == 0 && arg[7] == '/') {
            options->config = arg + 7;
        } else if (strncmp(arg, "timeout=", 8) == 0) {
            char *end = NULL;
            errno = 0;
            long value = strtol(arg + 8, &end, 10);
            if (errno != 0 || end == arg + 8 || *end != '\0' || value < 1 || value > PAM_LATCHKEY_MAX_TIMEOUT) {
                pam_syslog(pamh, LOG_ERR, "timeout= takes 1 to %d seconds", PAM_LATCHKEY_MAX_TIMEOUT);
                return -1;
            }
            options->timeout = (int)value;
        } else if (strcmp(arg, "debug") == 0) {
            options->debug = 1;
        } else {
            pam_syslog(pamh, LOG_ERR, "unknown or malformed argument (helper= and config= take absolute paths)");
            return -1;
        }
    }
    return 0;
}

/* Appends `value` to `out` percent-escaped: every byte outside 0x21-0x7E, and '%', as %XX,
 * so the helper receives terminal escapes, spaces and newlines as inert text. */
static int append_escaped(char *out, size_t capacity, size_t *length, const char *value) {
    static const char hex[] = "0123456789ABCDEF";
    for (const unsigned char *p = (const unsigned char *)value; *p; p++) {
        if (*p < 0x21 || *p > 0x7E || *p == '%') {
            if (*length + 3 >= capacity) return -1;
            out[(*length)++] = '%';
            out[(*length)++] = hex[*p >> 4];
            out[(*length)++] = hex[*p & 0xF];
        } else {
            if (*length + 1 >= capacity) return -1;
            out[(*length)++] = (char)*p;
        }
    }
    out[*length] = '\0';
    return 0;
}

/* The value of a hex digit, or -1. */
static int hex_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* The code point of the UTF-8 sequence at `s` in `*point`, and its length; 0 for a byte
 * that starts no well-formed sequence (RFC 3629 §4: no overlong form, no surrogate,
 * nothing past U+10FFFF). `s` ends with a NUL, which is no continuation byte. */
static size_t utf8_decode(const unsigned char *s, unsigned int *point) {
    size_t length;
    unsigned int smallest;
    if (s[0] < 0x80) {
        *point = s[0];
        return 1;
    } else if ((s[0] & 0xE0) == 0xC0) {
        length = 2, smallest = 0x80, *point = s[0] & 0x1F;
    } else if ((s[0] & 0xF0) == 0xE0) {
        length = 3, smallest = 0x800, *point = s[0] & 0x0F;
    } else if ((s[0] & 0xF8) == 0xF0) {
        length = 4, smallest = 0x10000, *point = s[0] & 0x07;
    } else {
        return 0;
    }
    for (size_t i = 1; i < length; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        *point = (*point << 6) | (s[i] & 0x3F);
    }
    if (*point < smallest || *point > 0x10FFFF || (*point >= 0xD800 && *point <= 0xDFFF)) return 0;
    return length;
}

/* Whether a terminal or a log reader would act on `point` rather than show it: C0
 * controls but tab (and newline where `newlines`), DEL, the C1 controls U+0080 to U+009F
 * (U+009B is CSI to a terminal that reads C1), the line and paragraph separators (where
 * not `newlines`), and the bidi controls that reorder what follows them (U+061C, U+200E,
 * U+200F, U+202A to U+202E, U+2066 to U+2069: UAX #9's explicit formatting). */
static int acts_on(unsigned int point, int newlines) {
    if (point == '\t' || (newlines && point == '\n')) return 0;
    if (point < 0x20 || (point >= 0x7F && point <= 0x9F)) return 1;
    if (point == 0x2028 || point == 0x2029) return !newlines;
    return point == 0x061C || point == 0x200E || point == 0x200F || (point >= 0x202A && point <= 0x202E) || (point >= 0x2066 && point <= 0x2069);
}

/* Decodes a percent-escaped line in place, then keeps only what is safe to show
 * (`newlines` set: the conversation) or to log (`newlines` clear: syslog, where a newline
 * would start a forged line): well-formed UTF-8 that no terminal acts on (acts_on). Each
 * byte that starts no well-formed sequence, and each refused character, becomes one '?'.
 * Defense in depth: the helper escapes what it shows already. */
static void unescape_for_display(char *text, int newlines) {
    char *out = text;
    for (char *p = text; *p; p++) {
        int high = hex_value(p[1]), low = high >= 0 ? hex_value(p[2]) : -1;
        if (*p == '%' && high >= 0 && low >= 0) {
            int byte = high << 4 | low;
            *out++ = byte == 0 ? '?' : (char)byte;
            p += 2;
        } else {
            *out++ = *p;
        }
    }
    *out = '\0';
    unsigned char *read = (unsigned char *)text, *write = (unsigned char *)text;
    while (*read) {
        unsigned int point = 0;
        size_t length = utf8_decode(read, &point);
        if (length == 0 || acts_on(point, newlines)) {
            *write++ = '?';
            read += length == 0 ? 1 : length;
        } else {
            memmove(write, read, length);
            write += length;
            read += length;
        }
    }
    *write = '\0';
}

/* Milliseconds left until `deadline` (CLOCK_MONOTONIC), never negative. */
static int remaining_ms(const struct timespec *deadline) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    long long ms = (long long)(deadline->tv_sec - now.tv_sec) * 1000 + (deadline->tv_nsec - now.tv_nsec) / 1000000;
    if (ms < 0) return 0;
    if (ms > 0x7FFFFFFF) return 0x7FFFFFFF;
    return (int)ms;
}

/* Sends all of `data` on the non-blocking socket `fd` before `deadline`, retrying short
 * writes and EINTR. MSG_NOSIGNAL: a helper that has gone makes this fail with EPIPE
 * instead of raising SIGPIPE, so no signal disposition of the host is touched. */
static int send_all(int fd, const char *data, size_t length, const struct timespec *deadline) {
    while (length > 0) {
        ssize_t sent = send(fd, data, length, MSG_NOSIGNAL);
        if (sent < 0) {
            if (errno == EINTR) continue;
            if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
            struct pollfd pfd = { .fd = fd, .events = POLLOUT };
            int ready = poll(&pfd, 1, remaining_ms(deadline));
            if (ready < 0 && errno == EINTR) continue;
            if (ready <= 0) return -1;
            continue;
        }
        data += sent;
        length -= (size_t)sent;
    }
    return 0;
}

struct reader {
    int fd;
    char buffer[PAM_LATCHKEY_MAX_LINE + 1];
    size_t filled;
};

/* Reads one line (without its newline) into `line` before `deadline`. Returns 1 for a
 * line, 0 at end of input, -1 for a timeout, -2 for an oversized line or a NUL, -3 for a
 * read error. */
static int read_line(struct reader *reader, char *line, const struct timespec *deadline) {
    for (;;) {
        char *newline = memchr(reader->buffer, '\n', reader->filled);
        if (newline) {
            size_t length = (size_t)(newline - reader->buffer);
            if (memchr(reader->buffer, '\0', length)) return -2;
            memcpy(line, reader->buffer, length);
            line[length] = '\0';
            reader->filled -= length + 1;
            memmove(reader->buffer, newline + 1, reader->filled);
            return 1;
        }
        if (reader->filled >= PAM_LATCHKEY_MAX_LINE) return -2;
        struct pollfd pfd = { .fd = reader->fd, .events = POLLIN };
        int ready = poll(&pfd, 1, remaining_ms(deadline));
        if (ready < 0) {
            if (errno == EINTR) continue;
            return -3;
        }
        if (ready == 0) return -1;
        ssize_t got = read(reader->fd, reader->buffer + reader->filled, PAM_LATCHKEY_MAX_LINE - reader->filled);
        if (got < 0) {
            if (errno == EINTR || errno == EAGAIN) continue;
            return -3;
        }
        if (got == 0) return 0;
        reader->filled += (size_t)got;
    }
}

/* The directory `path` is in, written into `path` ("/" for a file at the root); 0 once
 * `path` is "/" already. */
static int parent_directory(char *path) {
    if (strcmp(path, "/") == 0) return 0;
    char *slash = strrchr(path, '/');
    if (slash == NULL) return 0;
    if (slash == path) slash[1] = '\0';
    else *slash = '\0';
    return 1;
}

/* The helper as it will be run: `path` with every link resolved (malloc'd), or NULL with
 * the reason logged when it is not safe to run as the caller. It must be a regular file,
 * and it and each directory above it must belong to root or to the caller's effective
 * user and be writable by no one else; a root-owned sticky directory such as /tmp may be
 * writable by all, since no one else can replace what is in it. OpenSSH asks the same of
 * AuthorizedKeysCommand: otherwise whoever can write the file, or rename it away inside a
 * writable directory, runs code as root in sshd and sudo. The resolved path is what is
 * run, so a link swapped after the check changes nothing. */
static char *trusted_helper(pam_handle_t *pamh, const char *path) {
    char *resolved = realpath(path, NULL);
    if (resolved == NULL) {
        pam_syslog(pamh, LOG_ERR, "refused helper %s: %s", path, strerror(errno));
        return NULL;
    }
    char *place = strdup(resolved);
    uid_t self = geteuid();
    struct stat status;
    const char *why = NULL;
    if (place == NULL) {
        why = "out of memory";
    } else if (stat(place, &status) < 0 || !S_ISREG(status.st_mode)) {
        why = "not a regular file";
    } else if ((status.st_uid != 0 && status.st_uid != self) || (status.st_mode & (S_IWGRP | S_IWOTH))) {
        why = "it belongs to another user or is writable by group or others";
    }
    while (why == NULL && parent_directory(place)) {
        if (stat(place, &status) < 0 || !S_ISDIR(status.st_mode)) {
            why = "a directory above it cannot be read";
        } else if ((status.st_uid != 0 && status.st_uid != self)
                   || ((status.st_mode & (S_IWGRP | S_IWOTH)) && !((status.st_mode & S_ISVTX) && status.st_uid == 0))) {
            why = "a directory above it belongs to another user or is writable by group or others";
        }
    }
    if (why) {
        pam_syslog(pamh, LOG_ERR, "refused helper %s: %s (%s)", path, why, place ? place : resolved);
        free(resolved);
        resolved = NULL;
    }
    free(place);
    return resolved;
}

/* The child: stdin and stdout are its end of the socket pair, stderr /dev/null, every
 * other descriptor closed, signals at their defaults, and an environment of its own: the
 * caller's (LD_PRELOAD, PATH, LATCHKEY_*) never reaches the helper. Only calls that are
 * safe in the child of a multithreaded process. */
static void exec_helper(const char *helper, char *const argv[], int end) {
    /* The caller may have closed 0, 1 or 2, so the socket can be one of them: move it
     * above 2 first, then onto 0 and 1 (dup2 leaves the copies open across exec). */
    int moved = fcntl(end, F_DUPFD_CLOEXEC, 3);
    if (moved < 0 || dup2(moved, STDIN_FILENO) < 0 || dup2(moved, STDOUT_FILENO) < 0) _exit(127);
    int null = open("/dev/null", O_WRONLY);
    if (null < 0 || (null != STDERR_FILENO && dup2(null, STDERR_FILENO) < 0)) _exit(127);
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 34))
    closefrom(3);
#else
    for (long fd = 3, last = sysconf(_SC_OPEN_MAX); fd < (last > 0 && last < 65536 ? last : 65536); fd++) close((int)fd);
#endif
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, NULL);
    for (int sig = 1; sig < NSIG; sig++) signal(sig, SIG_DFL);
    char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", NULL };
    execve(helper, argv, envp);
    _exit(127);
}

/* clone3's arguments (linux/sched.h, CLONE_ARGS_SIZE_VER0), spelled here so that the
 * kernel's header and glibc's sched.h need not meet. */
struct clone3_arguments {
    uint64_t flags, pidfd, child_tid, parent_tid, exit_signal, stack, stack_size, tls;
};
#define PAM_LATCHKEY_CLONE_PIDFD 0x00001000ULL
#ifndef P_PIDFD
#define P_PIDFD 3
#endif

/* Starts the helper; its pid, and in `*pidfd` a descriptor for it that stays its own
 * even if the host's SIGCHLD handler reaps it and the pid is reused (-1 on a kernel
 * without pidfds). clone3 with CLONE_PIDFD makes both at once; where it is refused
 * (seccomp, an old kernel), fork and pidfd_open. */
static pid_t spawn_helper(const char *helper, char *const argv[], int end, int *pidfd) {
    *pidfd = -1;
#ifdef SYS_clone3
    int descriptor = -1;
    struct clone3_arguments arguments;
    memset(&arguments, 0, sizeof arguments);
    arguments.flags = PAM_LATCHKEY_CLONE_PIDFD;
    arguments.pidfd = (uint64_t)(uintptr_t)&descriptor;
    arguments.exit_signal = SIGCHLD;
    long pid = syscall(SYS_clone3, &arguments, sizeof arguments);
    if (pid == 0) exec_helper(helper, argv, end);
    if (pid > 0) {
        *pidfd = descriptor;
        return (pid_t)pid;
    }
    if (errno != ENOSYS && errno != EPERM && errno != EINVAL) return -1;
#endif
    pid_t child = fork();
    if (child == 0) exec_helper(helper, argv, end);
#ifdef SYS_pidfd_open
    if (child > 0) *pidfd = (int)syscall(SYS_pidfd_open, child, 0);
#endif
    return child;
}

/* One item for the request: `name=escaped value\n`; an absent item is empty. */
static int append_item(pam_handle_t *pamh, char *request, size_t capacity, size_t *length, const char *name, int item, size_t maximum) {
    const void *value = NULL;
    if (pam_get_item(pamh, item, &value) != PAM_SUCCESS) value = NULL;
    const char *text = value ? (const char *)value : "";
    if (strlen(text) > maximum) return -1;
    size_t name_length = strlen(name);
    if (*length + name_length + 1 >= capacity) return -1;
    memcpy(request + *length, name, name_length);
    *length += name_length;
    request[(*length)++] = '=';
    if (append_escaped(request, capacity, length, text) < 0) return -1;
    if (*length + 1 >= capacity) return -1;
    request[(*length)++] = '\n';
    request[*length] = '\0';
    return 0;
}

/* Sends one message through the conversation; the answer, if any, in `*answer` (to free).
 * An answer that came with an error is zeroed and freed here, never handed out. */
static int converse(pam_handle_t *pamh, int style, const char *text, char **answer) {
    const struct pam_conv *conv = NULL;
    if (pam_get_item(pamh, PAM_CONV, (const void **)&conv) != PAM_SUCCESS || conv == NULL || conv->conv == NULL) return PAM_CONV_ERR;
    struct pam_message message = { .msg_style = style, .msg = text };
    const struct pam_message *messages[1] = { &message };
    struct pam_response *responses = NULL;
    int status = conv->conv(1, messages, &responses, conv->appdata_ptr);
    if (responses) {
        char *response = responses[0].resp;
        if (response && answer && status == PAM_SUCCESS) {
            *answer = response;
        } else if (response) {
            explicit_bzero(response, strlen(response));
            free(response);
        }
        free(responses);
    }
    return status;
}

/* The helper's verdict: `RESULT <code> [text]`; anything else is `failure`. */
static int result_code(const char *code, int failure) {
    if (strcmp(code, "success") == 0) return PAM_SUCCESS;
    if (strcmp(code, "authinfo_unavail") == 0) return PAM_AUTHINFO_UNAVAIL;
    if (strcmp(code, "user_unknown") == 0) return PAM_USER_UNKNOWN;
    if (strcmp(code, "ignore") == 0) return PAM_IGNORE;
    if (strcmp(code, "perm_denied") == 0) return PAM_PERM_DENIED;
    if (strcmp(code, "session_err") == 0) return PAM_SESSION_ERR;
    return failure;
}

/* Whether the child has ended and been reaped: by this call (waitid on its pidfd, or on
 * its pid where there is none), or already by the host's own SIGCHLD handler (ECHILD).
 * `block` waits for it. */
static int reaped(pid_t pid, int pidfd, int block) {
    for (;;) {
        siginfo_t info;
        memset(&info, 0, sizeof info);
        int options = WEXITED | (block ? 0 : WNOHANG);
        int done = pidfd >= 0 ? waitid((idtype_t)P_PIDFD, (id_t)pidfd, &info, options) : waitid(P_PID, (id_t)pid, &info, options);
        if (done == 0) return info.si_pid != 0;
        if (errno == EINTR) continue;
        return 1;
    }
}

/* Stops the child: it has `grace_ms` to exit on its own, then SIGKILL, then it is reaped,
 * so no helper outlives the call. With a pidfd the signal and the wait reach this child
 * only: a host whose SIGCHLD handler reaped it first, and a process that got its pid
 * since, are left alone. */
static void stop_child(pid_t pid, int pidfd, int grace_ms) {
    for (int waited = 0; waited < grace_ms; waited += 10) {
        if (reaped(pid, pidfd, 0)) return;
        struct timespec tick = { .tv_sec = 0, .tv_nsec = 10 * 1000000 };
        nanosleep(&tick, NULL);
    }
    if (reaped(pid, pidfd, 0)) return;
#ifdef SYS_pidfd_send_signal
    if (pidfd >= 0) {
        if (syscall(SYS_pidfd_send_signal, pidfd, SIGKILL, NULL, 0) < 0 && errno == ESRCH) return;
    } else
#endif
    {
        kill(pid, SIGKILL);
    }
    (void)reaped(pid, pidfd, 1);
}

/* What each step runs, and what it answers when anything goes wrong. */
struct step {
    const char *words[3];      /* the helper's subcommand */
    const char *config;        /* the configuration unless config= names one */
    int failure;               /* the verdict for a helper that fails */
    const char *message;       /* what the person is told then */
};

static const struct step authentication = {
    { "pam", "helper", NULL }, "/etc/latchkey/pam.conf", PAM_AUTH_ERR, "Latchkey approval failed; see the system log."
};
static const struct step account = {
    { "host", "pam-account", NULL }, "/etc/latchkey/host.conf", PAM_PERM_DENIED, "Latchkey could not check this account; see the system log."
};
static const struct step session = {
    { "host", "pam-session", NULL }, "/etc/latchkey/host.conf", PAM_SESSION_ERR, "Latchkey could not prepare this session; see the system log."
};

/* One exchange with the helper for `step`: the request, the lines it writes relayed
 * through the conversation, and its verdict. */
static int run_step(pam_handle_t *pamh, int flags, int argc, const char **argv, const struct step *step) {
    struct options options;
    if (parse_options(pamh, argc, argv, &options) < 0) return step->failure;
    if (options.config == NULL) options.config = step->config;
    /* PAM_SILENT: no informational or error messages; prompts still go, since without
     * them no approval can happen. */
    int silent = (flags & PAM_SILENT) != 0;

    const char *user = NULL;
    if (pam_get_user(pamh, &user, NULL) != PAM_SUCCESS || user == NULL || user[0] == '\0') return PAM_USER_UNKNOWN;
    size_t user_length = strlen(user);
    if (user_length > PAM_LATCHKEY_MAX_USER) {
        pam_syslog(pamh, LOG_WARNING, "refused: a user name of %zu bytes (at most %d)", user_length, PAM_LATCHKEY_MAX_USER);
        return PAM_USER_UNKNOWN;
    }
    for (const unsigned char *p = (const unsigned char *)user; *p; p++) {
        if (*p < 0x20 || *p == 0x7F) {
            pam_syslog(pamh, LOG_WARNING, "refused: a user name with a control character");
            return PAM_USER_UNKNOWN;
        }
    }

    /* The request, whole, before anything starts: a version line, the items, a blank line. */
    char request[PAM_LATCHKEY_MAX_LINE * 4];
    size_t length = 0;
    length = (size_t)snprintf(request, sizeof request, "%s\n", PAM_LATCHKEY_PROTOCOL);
    if (append_item(pamh, request, sizeof request, &length, "service", PAM_SERVICE, PAM_LATCHKEY_MAX_ITEM) < 0
        || append_item(pamh, request, sizeof request, &length, "user", PAM_USER, PAM_LATCHKEY_MAX_USER) < 0
        || append_item(pamh, request, sizeof request, &length, "rhost", PAM_RHOST, PAM_LATCHKEY_MAX_ITEM) < 0
        || append_item(pamh, request, sizeof request, &length, "ruser", PAM_RUSER, PAM_LATCHKEY_MAX_ITEM) < 0
        || append_item(pamh, request, sizeof request, &length, "tty", PAM_TTY, PAM_LATCHKEY_MAX_ITEM) < 0
        || length + 2 >= sizeof request) {
        pam_syslog(pamh, LOG_WARNING, "refused: a PAM item is too long");
        return step->failure;
    }
    request[length++] = '\n';

    char *helper = trusted_helper(pamh, options.helper);
    if (helper == NULL) {
        if (!silent) converse(pamh, PAM_ERROR_MSG, step->message, NULL);
        return PAM_AUTHINFO_UNAVAIL;
    }

    /* One socket pair, not pipes: the module's end is written with MSG_NOSIGNAL and is
     * non-blocking, so neither a helper that has gone nor one that reads nothing can
     * stop this thread or signal the host. */
    int ends[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, ends) < 0) {
        free(helper);
        return PAM_AUTHINFO_UNAVAIL;
    }
    int module_end = ends[0];
    if (fcntl(module_end, F_SETFL, fcntl(module_end, F_GETFL) | O_NONBLOCK) < 0) {
        close(ends[0]);
        close(ends[1]);
        free(helper);
        return PAM_AUTHINFO_UNAVAIL;
    }

    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += options.timeout;

    char *const words[] = { "latchkey", (char *)step->words[0], (char *)step->words[1], "--config", (char *)options.config, NULL };
    int pidfd = -1;
    pid_t pid = spawn_helper(helper, words, ends[1], &pidfd);
    close(ends[1]);
    if (pid < 0) {
        close(module_end);
        pam_syslog(pamh, LOG_ERR, "cannot start the helper: %s", strerror(errno));
        free(helper);
        return PAM_AUTHINFO_UNAVAIL;
    }
    if (options.debug) pam_syslog(pamh, LOG_DEBUG, "helper %s started as pid %d", helper, (int)pid);
    free(helper);

    int verdict = step->failure;
    int finished = 0;
    const char *failure = NULL;
    struct reader *reader = calloc(1, sizeof *reader);
    char *line = malloc(PAM_LATCHKEY_MAX_LINE + 1);
    if (reader == NULL || line == NULL) {
        failure = "out of memory";
        verdict = PAM_BUF_ERR;
        goto done;
    }
    reader->fd = module_end;
    /* A helper that ended without reading the request may still have said why: its
     * first line is read either way. */
    int unread = send_all(module_end, request, length, &deadline) < 0;

    int status = read_line(reader, line, &deadline);
    if (status != 1 || strcmp(line, PAM_LATCHKEY_PROTOCOL) != 0) {
        failure = status == 0 ? (unread ? "the helper did not take the request" : "the helper could not run (is helper= the latchkey executable?)")
            : status == -1 ? "the helper did not answer in time" : "the helper does not speak " PAM_LATCHKEY_PROTOCOL;
        verdict = status == 0 ? PAM_AUTHINFO_UNAVAIL : step->failure;
        goto done;
    }
    if (unread) {
        failure = "the helper did not take the request";
        verdict = step->failure;
        goto done;
    }
    for (int lines = 0; lines < PAM_LATCHKEY_MAX_LINES; lines++) {
        status = read_line(reader, line, &deadline);
        if (status != 1) {
            failure = status == -1 ? "the helper did not answer in time" : status == -2 ? "the helper wrote a malformed line" : "the helper ended without a result";
            verdict = status == 0 ? PAM_AUTHINFO_UNAVAIL : step->failure;
            goto done;
        }
        if (strncmp(line, "INFO ", 5) == 0 || strncmp(line, "ERROR ", 6) == 0) {
            int error = line[0] == 'E';
            char *text = line + (error ? 6 : 5);
            unescape_for_display(text, 1);
            if (!silent) converse(pamh, error ? PAM_ERROR_MSG : PAM_TEXT_INFO, text, NULL);
        } else if (strncmp(line, "PROMPT ", 7) == 0) {
            char *text = line + 7;
            unescape_for_display(text, 1);
            char *answer = NULL;
            /* The answer means only "go on": it is not sent, so nothing typed leaves here. */
            if (converse(pamh, PAM_PROMPT_ECHO_ON, text, &answer) != PAM_SUCCESS) {
                failure = "the conversation ended";
                verdict = PAM_CONV_ERR;
                goto done;
            }
            if (answer) {
                explicit_bzero(answer, strlen(answer));
                free(answer);
            }
            /* The helper may have written its result and gone already: its lines are
             * still to be read, so a failed write here is not a failure. */
            (void)send_all(module_end, "CONTINUE\n", 9, &deadline);
        } else if (strncmp(line, "RESULT ", 7) == 0) {
            char *code = line + 7;
            char *text = strchr(code, ' ');
            if (text) *text++ = '\0';
            verdict = result_code(code, step->failure);
            if (text) {
                unescape_for_display(text, 0);
                pam_syslog(pamh, verdict == PAM_SUCCESS ? LOG_NOTICE : LOG_WARNING, "%s", text);
            }
            finished = 1;
            goto done;
        } else {
            failure = "the helper wrote a line this module does not know";
            verdict = step->failure;
            goto done;
        }
    }
    failure = "the helper wrote too many lines";
    verdict = step->failure;

done:
    close(module_end);
    stop_child(pid, pidfd, finished ? 2000 : 0);
    if (pidfd >= 0) close(pidfd);
    if (failure) {
        pam_syslog(pamh, LOG_ERR, "%s", failure);
        if (!silent) converse(pamh, PAM_ERROR_MSG, step->message, NULL);
    }
    free(line);
    free(reader);
    return verdict;
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    return run_step(pamh, flags, argc, argv, &authentication);
}

/* The account step (`latchkey host pam-account`): a directory account may log in only
 * while this host's daemon serves it (its group still has access here, the cache within
 * the offline limit); a local account is left to the other modules (PAM_IGNORE). */
PAM_EXTERN int pam_sm_acct_mgmt(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    return run_step(pamh, flags, argc, argv, &account);
}

/* The session step (`latchkey host pam-session`): a directory account's home is made
 * from /etc/skel when missing, owned by its uid, mode 0700. */
PAM_EXTERN int pam_sm_open_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    return run_step(pamh, flags, argc, argv, &session);
}

PAM_EXTERN int pam_sm_close_session(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_SUCCESS;
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_SUCCESS;
}
