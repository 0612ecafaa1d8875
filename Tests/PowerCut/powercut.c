// A power cut, simulated for one process's files (Tests/LatchkeyTestSupport/PowerCut.swift).
//
// Preloaded into `latchkey serve` by the crash tests. For each file named in
// LATCHKEY_POWERCUT_FILES (paths separated by ':'), every write and truncation first
// appends the bytes it is about to replace, and the file's size, to an undo log in
// LATCHKEY_POWERCUT_LOG. fsync and fdatasync of the file empty its log once the real sync
// returned. After the process is SIGKILLed, the test plays each log backwards, which
// leaves every file as it was at its last sync: what a disk holds after the power fails
// and the page cache with it. (Directory entries are kept; only contents are lost.)
//
// Test-only code: it is compiled by the test with the toolchain's clang, never shipped.

#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

#define MAX_TRACKED_FD 4096

// The undo log's descriptor for each tracked descriptor, or 0 (never a log: 0 is stdin).
static int undo_of[MAX_TRACKED_FD];
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static int (*real_open)(const char *, int, ...);
static int (*real_open64)(const char *, int, ...);
static int (*real_openat)(int, const char *, int, ...);
static int (*real_openat64)(int, const char *, int, ...);
static int (*real_close)(int);
static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_pwrite)(int, const void *, size_t, off_t);
static ssize_t (*real_pwrite64)(int, const void *, size_t, off_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_ftruncate)(int, off_t);
static int (*real_ftruncate64)(int, off_t);
static int (*real_fsync)(int);
static int (*real_fdatasync)(int);

static void resolve(void) {
    static int done;
    if (done) return;
    real_open = dlsym(RTLD_NEXT, "open");
    real_open64 = dlsym(RTLD_NEXT, "open64");
    real_openat = dlsym(RTLD_NEXT, "openat");
    real_openat64 = dlsym(RTLD_NEXT, "openat64");
    real_close = dlsym(RTLD_NEXT, "close");
    real_write = dlsym(RTLD_NEXT, "write");
    real_pwrite = dlsym(RTLD_NEXT, "pwrite");
    real_pwrite64 = dlsym(RTLD_NEXT, "pwrite64");
    real_writev = dlsym(RTLD_NEXT, "writev");
    real_ftruncate = dlsym(RTLD_NEXT, "ftruncate");
    real_ftruncate64 = dlsym(RTLD_NEXT, "ftruncate64");
    real_fsync = dlsym(RTLD_NEXT, "fsync");
    real_fdatasync = dlsym(RTLD_NEXT, "fdatasync");
    done = 1;
}

__attribute__((constructor)) static void start(void) { resolve(); }

// Whether `path` is one of the files a power cut should roll back.
static int tracked(const char *path) {
    const char *files = getenv("LATCHKEY_POWERCUT_FILES");
    if (files == NULL || path == NULL) return 0;
    size_t length = strlen(path);
    for (const char *p = files; *p;) {
        const char *end = strchr(p, ':');
        size_t n = end ? (size_t)(end - p) : strlen(p);
        if (n == length && memcmp(p, path, n) == 0) return 1;
        if (end == NULL) break;
        p = end + 1;
    }
    return 0;
}

// Opens the undo log of `path` (its name is the path with '/' as '_').
static int open_undo(const char *path) {
    const char *directory = getenv("LATCHKEY_POWERCUT_LOG");
    if (directory == NULL) return -1;
    char name[PATH_MAX];
    char flat[PATH_MAX];
    size_t i = 0;
    for (; path[i] && i + 1 < sizeof flat; i++) flat[i] = path[i] == '/' ? '_' : path[i];
    flat[i] = 0;
    if (snprintf(name, sizeof name, "%s/%s.undo", directory, flat) >= (int)sizeof name) return -1;
    return real_open(name, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600);
}

static void after_open(int fd, const char *path) {
    if (fd <= 0 || fd >= MAX_TRACKED_FD || !tracked(path)) return;
    pthread_mutex_lock(&lock);
    int undo = open_undo(path);
    undo_of[fd] = undo > 0 ? undo : 0;
    pthread_mutex_unlock(&lock);
    if (undo <= 0) abort(); // a test that cannot record must not pass silently
}

static int tracked_fd(int fd) { return fd > 0 && fd < MAX_TRACKED_FD && undo_of[fd] > 0; }

// Appends to the undo log what [offset, offset + length) of `fd` holds now, and its
// size: the record that undoes a write or truncation there. Called with the lock held.
static void record(int fd, off_t offset, size_t length) {
    struct stat st;
    if (fstat(fd, &st) != 0) abort();
    uint64_t header[3] = {(uint64_t)offset, 0, (uint64_t)st.st_size};
    size_t kept = 0;
    if (offset < st.st_size) {
        kept = (size_t)(st.st_size - offset);
        if (kept > length) kept = length;
    }
    header[1] = kept;
    char *old = kept ? malloc(kept) : NULL;
    if (kept && (old == NULL || pread(fd, old, kept, offset) != (ssize_t)kept)) abort();
    if (real_write(undo_of[fd], header, sizeof header) != (ssize_t)sizeof header) abort();
    if (kept && real_write(undo_of[fd], old, kept) != (ssize_t)kept) abort();
    free(old);
}

static mode_t mode_argument(int flags, va_list arguments) {
    return (flags & O_CREAT) || (flags & __O_TMPFILE) == __O_TMPFILE ? (mode_t)va_arg(arguments, int) : 0;
}

// The mode argument of an open that creates, read in the variadic function itself.
#define MODE_OF(flags) ({ \
    va_list arguments; \
    va_start(arguments, flags); \
    mode_t mode = mode_argument(flags, arguments); \
    va_end(arguments); \
    mode; \
})

static int opened(int fd, const char *path) {
    after_open(fd, path);
    return fd;
}

int open(const char *path, int flags, ...) { resolve(); return opened(real_open(path, flags, MODE_OF(flags)), path); }
int open64(const char *path, int flags, ...) { resolve(); return opened(real_open64(path, flags, MODE_OF(flags)), path); }
int openat(int directory, const char *path, int flags, ...) { resolve(); return opened(real_openat(directory, path, flags, MODE_OF(flags)), path); }
int openat64(int directory, const char *path, int flags, ...) { resolve(); return opened(real_openat64(directory, path, flags, MODE_OF(flags)), path); }

int close(int fd) {
    resolve();
    if (tracked_fd(fd)) {
        pthread_mutex_lock(&lock);
        real_close(undo_of[fd]);
        undo_of[fd] = 0;
        pthread_mutex_unlock(&lock);
    }
    return real_close(fd);
}

ssize_t write(int fd, const void *bytes, size_t length) {
    resolve();
    if (!tracked_fd(fd)) return real_write(fd, bytes, length);
    pthread_mutex_lock(&lock);
    off_t offset = lseek(fd, 0, SEEK_CUR);
    if (offset < 0) abort();
    record(fd, offset, length);
    ssize_t written = real_write(fd, bytes, length);
    pthread_mutex_unlock(&lock);
    return written;
}

static ssize_t positioned(ssize_t (*real)(int, const void *, size_t, off_t), int fd, const void *bytes, size_t length, off_t offset) {
    if (!tracked_fd(fd)) return real(fd, bytes, length, offset);
    pthread_mutex_lock(&lock);
    record(fd, offset, length);
    ssize_t written = real(fd, bytes, length, offset);
    pthread_mutex_unlock(&lock);
    return written;
}

ssize_t pwrite(int fd, const void *bytes, size_t length, off_t offset) {
    resolve();
    return positioned(real_pwrite, fd, bytes, length, offset);
}

ssize_t pwrite64(int fd, const void *bytes, size_t length, off_t offset) {
    resolve();
    return positioned(real_pwrite64, fd, bytes, length, offset);
}

ssize_t writev(int fd, const struct iovec *vectors, int count) {
    resolve();
    if (!tracked_fd(fd)) return real_writev(fd, vectors, count);
    pthread_mutex_lock(&lock);
    size_t total = 0;
    for (int i = 0; i < count; i++) total += vectors[i].iov_len;
    off_t offset = lseek(fd, 0, SEEK_CUR);
    if (offset < 0) abort();
    record(fd, offset, total);
    ssize_t written = real_writev(fd, vectors, count);
    pthread_mutex_unlock(&lock);
    return written;
}

static int truncated(int (*real)(int, off_t), int fd, off_t length) {
    if (!tracked_fd(fd)) return real(fd, length);
    pthread_mutex_lock(&lock);
    struct stat st;
    if (fstat(fd, &st) != 0) abort();
    // What lies past the new end comes back on undo (a shrink); a growth is undone by
    // the recorded size alone.
    record(fd, length, st.st_size > length ? (size_t)(st.st_size - length) : 0);
    int result = real(fd, length);
    pthread_mutex_unlock(&lock);
    return result;
}

int ftruncate(int fd, off_t length) {
    resolve();
    return truncated(real_ftruncate, fd, length);
}

int ftruncate64(int fd, off_t length) {
    resolve();
    return truncated(real_ftruncate64, fd, length);
}

// A sync makes everything written so far durable: the file's undo log is emptied, once
// the real sync returned, so a cut at any moment loses at most what was not yet synced.
static int synced(int (*real)(int), int fd) {
    if (!tracked_fd(fd)) return real(fd);
    pthread_mutex_lock(&lock);
    int result = real(fd);
    if (result == 0 && real_ftruncate(undo_of[fd], 0) != 0) abort();
    pthread_mutex_unlock(&lock);
    return result;
}

int fsync(int fd) {
    resolve();
    return synced(real_fsync, fd);
}

int fdatasync(int fd) {
    resolve();
    return synced(real_fdatasync, fd);
}
