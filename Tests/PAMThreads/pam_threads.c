/*
 * A multithreaded PAM host for the tests (Tests/LatchkeyTests/PAM/PAMThreadedHostTests.swift):
 * THREADS threads each run ROUNDS pam_start/pam_authenticate/pam_end for SERVICE and
 * USER at once, as sshd's, sudo's or a display manager's threads may. With `reap`, a
 * SIGCHLD handler reaps every child as it ends, as some daemons do. SIGPIPE stays at its
 * default, so a module that raises it kills this process; a watcher thread samples
 * SIGPIPE's disposition the whole time. With `silent`, pam_authenticate is called with
 * PAM_SILENT; with `show`, each message the conversation is given is printed as it came,
 * `message: TEXT`, before the summary line; with `conv-error`, the conversation answers
 * each prompt with an allocated answer and returns PAM_CONV_ERR all the same, as a
 * conversation that fails halfway may (the module must free that answer):
 *
 *   success=N failure=M messages=K sigpipe-ignored-seen=0|1 sigpipe-at-end=default|ignored|handled bystander=alive|gone
 *
 * where K counts the informational and error messages the conversation was given. *
 * `bystander` is a child of this host's own, started first, that must outlive the run.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <security/pam_appl.h>

static const char *service, *user;
static int rounds;
static atomic_int successes, failures, messages_shown, ignored_seen, stop_watching;
static int authenticate_flags, show, conversation_error;
static pid_t bystander;

/* Answers each prompt with an empty line; shows nothing. */
static int conversation(int count, const struct pam_message **messages, struct pam_response **responses, void *data) {
    (void)data;
    struct pam_response *answers = calloc((size_t)count, sizeof *answers);
    if (answers == NULL) return PAM_BUF_ERR;
    for (int i = 0; i < count; i++) {
        if (messages[i]->msg_style == PAM_PROMPT_ECHO_ON || messages[i]->msg_style == PAM_PROMPT_ECHO_OFF) answers[i].resp = strdup("an answer");
        else atomic_fetch_add(&messages_shown, 1);
        if (show) printf("message: %s\n", messages[i]->msg);
    }
    *responses = answers;
    return conversation_error ? PAM_CONV_ERR : PAM_SUCCESS;
}

static void *authenticate(void *unused) {
    (void)unused;
    struct pam_conv conv = { conversation, NULL };
    for (int round = 0; round < rounds; round++) {
        pam_handle_t *handle = NULL;
        if (pam_start(service, user, &conv, &handle) != PAM_SUCCESS) {
            atomic_fetch_add(&failures, 1);
            continue;
        }
        int status = pam_authenticate(handle, authenticate_flags);
        pam_end(handle, status);
        atomic_fetch_add(status == PAM_SUCCESS ? &successes : &failures, 1);
    }
    return NULL;
}

static void *watch(void *unused) {
    (void)unused;
    while (!atomic_load(&stop_watching)) {
        struct sigaction now;
        if (sigaction(SIGPIPE, NULL, &now) == 0 && now.sa_handler == SIG_IGN) atomic_store(&ignored_seen, 1);
        struct timespec tick = { 0, 100000 };
        nanosleep(&tick, NULL);
    }
    return NULL;
}

/* Reaps every child that has ended, as a careless daemon does; never the bystander,
 * which the run checks is still there (a module that signalled a reused pid would hit
 * whatever holds it). */
static void reap_all(int signal_number) {
    (void)signal_number;
    int saved = errno;
    siginfo_t info;
    for (;;) {
        memset(&info, 0, sizeof info);
        if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) break;
        if (info.si_pid == bystander) break;
        waitpid(info.si_pid, NULL, WNOHANG);
    }
    errno = saved;
}

int main(int argc, char **argv) {
    if (argc < 5) {
        fprintf(stderr, "usage: %s SERVICE USER THREADS ROUNDS [reap] [silent] [show] [conv-error]\n", argv[0]);
        return 2;
    }
    service = argv[1];
    user = argv[2];
    int threads = atoi(argv[3]);
    rounds = atoi(argv[4]);
    if (threads < 1 || threads > 64 || rounds < 1) return 2;
    signal(SIGPIPE, SIG_DFL);
    bystander = fork();
    if (bystander == 0) {
        pause();
        _exit(0);
    }
    int reap = 0;
    for (int i = 5; i < argc; i++) {
        if (strcmp(argv[i], "reap") == 0) reap = 1;
        else if (strcmp(argv[i], "silent") == 0) authenticate_flags = PAM_SILENT;
        else if (strcmp(argv[i], "show") == 0) show = 1;
        else if (strcmp(argv[i], "conv-error") == 0) conversation_error = 1;
        else return 2;
    }
    if (reap) {
        struct sigaction action;
        memset(&action, 0, sizeof action);
        action.sa_handler = reap_all;
        action.sa_flags = SA_RESTART | SA_NOCLDSTOP;
        sigaction(SIGCHLD, &action, NULL);
    }
    pthread_t watcher, workers[64];
    pthread_create(&watcher, NULL, watch, NULL);
    for (int i = 0; i < threads; i++) pthread_create(&workers[i], NULL, authenticate, NULL);
    for (int i = 0; i < threads; i++) pthread_join(workers[i], NULL);
    atomic_store(&stop_watching, 1);
    pthread_join(watcher, NULL);

    struct sigaction end;
    sigaction(SIGPIPE, NULL, &end);
    const char *disposition = end.sa_handler == SIG_DFL ? "default" : end.sa_handler == SIG_IGN ? "ignored" : "handled";
    int alive = kill(bystander, 0) == 0 && waitpid(bystander, NULL, WNOHANG) == 0;
    kill(bystander, SIGKILL);
    waitpid(bystander, NULL, 0);
    printf("success=%d failure=%d messages=%d sigpipe-ignored-seen=%d sigpipe-at-end=%s bystander=%s\n", atomic_load(&successes),
           atomic_load(&failures), atomic_load(&messages_shown), atomic_load(&ignored_seen), disposition, alive ? "alive" : "gone");
    return 0;
}
