/*
 * pam_latchkey.so: sshd, sudo and login approved with a passkey on another device
 * (README "Signing in to this host with a passkey"; docs/PROTOCOL.md section 13;
 * docs/SECURITY.md, "PAM").
 *
 * The module does one thing: run the helper as a child with a clean environment, send it
 * the PAM items, relay what the helper says through the conversation, and return the
 * helper's verdict. Everything that needs a network, a key or a parser of provider
 * replies is in the helper. Any failure of the helper (it cannot start, dies, hangs,
 * writes a malformed or oversized line) fails closed: never PAM_SUCCESS.
 *
 * Module arguments (each optional):
 *   helper=/absolute/path   the latchkey executable (default /usr/bin/latchkey)
 *   config=/absolute/path   the helper's configuration (default /etc/latchkey/pam.conf)
 *   timeout=SECONDS         the whole exchange, 1 to 900 (default 150)
 *   debug                   log each step to syslog
 */
#define _GNU_SOURCE
#define PAM_SM_AUTH
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
    options->config = "/etc/latchkey/pam.conf";
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

/* Decodes a percent-escaped line in place and replaces what a terminal would act on
 * (control characters but newline and tab, DEL) with '?': defense in depth, since the
 * helper escapes what it shows already. */
static void unescape_for_display(char *text) {
    char *out = text;
    for (char *p = text; *p; p++) {
        if (*p == '%' && p[1] && p[2]) {
            char digits[3] = { p[1], p[2], '\0' };
            char *end = NULL;
            long byte = strtol(digits, &end, 16);
            if (end == digits + 2) {
                *out++ = (byte < 0x20 && byte != '\n' && byte != '\t') || byte == 0x7F ? '?' : (char)byte;
                p += 2;
                continue;
            }
        }
        unsigned char c = (unsigned char)*p;
        *out++ = (c < 0x20 && c != '\t') || c == 0x7F ? '?' : (char)c;
    }
    *out = '\0';
}

/* Writes all of `data`, retrying short writes and EINTR. */
static int write_all(int fd, const char *data, size_t length) {
    while (length > 0) {
        ssize_t written = write(fd, data, length);
        if (written < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        data += written;
        length -= (size_t)written;
    }
    return 0;
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

/* The child: stdin and stdout are the pipes, stderr /dev/null, every other descriptor
 * closed, signals at their defaults, and an environment of its own: the caller's
 * (LD_PRELOAD, PATH, LATCHKEY_*) never reaches the helper. */
static void exec_helper(const struct options *options, int to_child, int from_child) {
    /* The caller may have closed 0, 1 or 2, so a pipe end can be one of them: move both
     * ends above 2 first, then onto 0 and 1 (dup2 leaves the copies open across exec). */
    int in = fcntl(to_child, F_DUPFD_CLOEXEC, 3), out = fcntl(from_child, F_DUPFD_CLOEXEC, 3);
    if (in < 0 || out < 0 || dup2(in, STDIN_FILENO) < 0 || dup2(out, STDOUT_FILENO) < 0) _exit(127);
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
    char *const argv[] = { "latchkey", "pam", "helper", "--config", (char *)options->config, NULL };
    char *const envp[] = { "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "LANG=C.UTF-8", NULL };
    execve(options->helper, argv, envp);
    _exit(127);
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

/* Sends one message through the conversation; the answer, if any, in `*answer` (to free). */
static int converse(pam_handle_t *pamh, int style, const char *text, char **answer) {
    const struct pam_conv *conv = NULL;
    if (pam_get_item(pamh, PAM_CONV, (const void **)&conv) != PAM_SUCCESS || conv == NULL || conv->conv == NULL) return PAM_CONV_ERR;
    struct pam_message message = { .msg_style = style, .msg = text };
    const struct pam_message *messages[1] = { &message };
    struct pam_response *responses = NULL;
    int status = conv->conv(1, messages, &responses, conv->appdata_ptr);
    if (responses) {
        if (answer && responses[0].resp) {
            *answer = responses[0].resp;
        } else if (responses[0].resp) {
            explicit_bzero(responses[0].resp, strlen(responses[0].resp));
            free(responses[0].resp);
        }
        free(responses);
    }
    return status;
}

/* The helper's verdict: `RESULT <code> [text]`. */
static int result_code(const char *code) {
    if (strcmp(code, "success") == 0) return PAM_SUCCESS;
    if (strcmp(code, "authinfo_unavail") == 0) return PAM_AUTHINFO_UNAVAIL;
    if (strcmp(code, "user_unknown") == 0) return PAM_USER_UNKNOWN;
    return PAM_AUTH_ERR;
}

/* Stops the child: it has `grace_ms` to exit on its own, then SIGKILL, then it is reaped,
 * so no helper outlives the call. A caller whose own SIGCHLD handler reaped it first
 * (ECHILD) is fine. */
static void stop_child(pid_t pid, int grace_ms) {
    int status;
    for (int waited = 0; waited < grace_ms; waited += 10) {
        pid_t done = waitpid(pid, &status, WNOHANG);
        if (done == pid || (done < 0 && errno == ECHILD)) return;
        struct timespec tick = { .tv_sec = 0, .tv_nsec = 10 * 1000000 };
        nanosleep(&tick, NULL);
    }
    kill(pid, SIGKILL);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
}

PAM_EXTERN int pam_sm_authenticate(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)flags;
    struct options options;
    if (parse_options(pamh, argc, argv, &options) < 0) return PAM_AUTH_ERR;

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
        return PAM_AUTH_ERR;
    }
    request[length++] = '\n';

    int to_child[2], from_child[2];
    if (pipe2(to_child, O_CLOEXEC) < 0) return PAM_AUTHINFO_UNAVAIL;
    if (pipe2(from_child, O_CLOEXEC) < 0) {
        close(to_child[0]);
        close(to_child[1]);
        return PAM_AUTHINFO_UNAVAIL;
    }
    /* A helper that exits early must not kill the caller with SIGPIPE. */
    struct sigaction ignore = { .sa_handler = SIG_IGN }, previous;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGPIPE, &ignore, &previous);

    pid_t pid = fork();
    if (pid == 0) exec_helper(&options, to_child[0], from_child[1]);
    close(to_child[0]);
    close(from_child[1]);
    if (pid < 0) {
        close(to_child[1]);
        close(from_child[0]);
        sigaction(SIGPIPE, &previous, NULL);
        pam_syslog(pamh, LOG_ERR, "cannot start the helper: %s", strerror(errno));
        return PAM_AUTHINFO_UNAVAIL;
    }
    if (options.debug) pam_syslog(pamh, LOG_DEBUG, "helper %s started as pid %d", options.helper, (int)pid);

    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += options.timeout;

    int verdict = PAM_AUTH_ERR;
    int finished = 0;
    const char *failure = NULL;
    struct reader *reader = calloc(1, sizeof *reader);
    char *line = malloc(PAM_LATCHKEY_MAX_LINE + 1);
    if (reader == NULL || line == NULL) {
        failure = "out of memory";
        verdict = PAM_BUF_ERR;
        goto done;
    }
    reader->fd = from_child[0];
    /* A helper that ended without reading the request may still have said why: its
     * first line is read either way. */
    int unread = write_all(to_child[1], request, length) < 0;

    int status = read_line(reader, line, &deadline);
    if (status != 1 || strcmp(line, PAM_LATCHKEY_PROTOCOL) != 0) {
        failure = status == 0 ? (unread ? "the helper did not take the request" : "the helper could not run (is helper= the latchkey executable?)")
            : "the helper does not speak " PAM_LATCHKEY_PROTOCOL;
        verdict = status == 0 ? PAM_AUTHINFO_UNAVAIL : PAM_AUTH_ERR;
        goto done;
    }
    if (unread) {
        failure = "the helper did not take the request";
        verdict = PAM_AUTH_ERR;
        goto done;
    }
    for (int lines = 0; lines < PAM_LATCHKEY_MAX_LINES; lines++) {
        status = read_line(reader, line, &deadline);
        if (status != 1) {
            failure = status == -1 ? "the helper did not answer in time" : status == -2 ? "the helper wrote a malformed line" : "the helper ended without a result";
            verdict = status == 0 ? PAM_AUTHINFO_UNAVAIL : PAM_AUTH_ERR;
            goto done;
        }
        if (strncmp(line, "INFO ", 5) == 0 || strncmp(line, "ERROR ", 6) == 0) {
            int error = line[0] == 'E';
            char *text = line + (error ? 6 : 5);
            unescape_for_display(text);
            converse(pamh, error ? PAM_ERROR_MSG : PAM_TEXT_INFO, text, NULL);
        } else if (strncmp(line, "PROMPT ", 7) == 0) {
            char *text = line + 7;
            unescape_for_display(text);
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
            (void)write_all(to_child[1], "CONTINUE\n", 9);
        } else if (strncmp(line, "RESULT ", 7) == 0) {
            char *code = line + 7;
            char *text = strchr(code, ' ');
            if (text) *text++ = '\0';
            verdict = result_code(code);
            if (text) {
                unescape_for_display(text);
                pam_syslog(pamh, verdict == PAM_SUCCESS ? LOG_NOTICE : LOG_WARNING, "%s", text);
            }
            finished = 1;
            goto done;
        } else {
            failure = "the helper wrote a line this module does not know";
            verdict = PAM_AUTH_ERR;
            goto done;
        }
    }
    failure = "the helper wrote too many lines";
    verdict = PAM_AUTH_ERR;

done:
    close(to_child[1]);
    close(from_child[0]);
    stop_child(pid, finished ? 2000 : 0);
    sigaction(SIGPIPE, &previous, NULL);
    if (failure) {
        pam_syslog(pamh, LOG_ERR, "%s", failure);
        converse(pamh, PAM_ERROR_MSG, "Latchkey approval failed; see the system log.", NULL);
    }
    free(line);
    free(reader);
    return verdict;
}

PAM_EXTERN int pam_sm_setcred(pam_handle_t *pamh, int flags, int argc, const char **argv) {
    (void)pamh;
    (void)flags;
    (void)argc;
    (void)argv;
    return PAM_SUCCESS;
}

/*
 * Nothing of Swift in a PAM module. SwiftPM links every dynamic library product with the
 * Swift runtime's registration object (swiftrt.o), whose constructor registers the
 * image's Swift metadata with libswiftCore and so makes the library need it. This module
 * has no Swift metadata: these two hidden definitions satisfy the object's references
 * inside the module, and `--as-needed` (Package.swift) then leaves libswiftCore out, so
 * nothing of Swift is loaded into sshd, sudo or login. Hidden: they are never exported,
 * so they cannot stand in for the runtime's own in any other library of the process.
 */
__attribute__((visibility("hidden"))) void swift_addNewDSOImage(const void *image) {
    (void)image;
}

__attribute__((visibility("hidden"))) _Bool _swift_backtrace_isThunkFunction(const char *name) {
    (void)name;
    return 0;
}
