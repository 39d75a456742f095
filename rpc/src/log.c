/*
 * log.c — one `key=value` line per event on stderr.
 *
 * Each line is built in a stack buffer and written with a single write(2).
 * The buffer (2 KiB) is below PIPE_BUF (4 KiB), so when stderr is a pipe or
 * a file opened O_APPEND, lines from concurrent threads and processes never
 * interleave. Nothing here allocates or takes a lock.
 */
#include "rpc/log.h"
#include "rpc/trace.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOG__LINE_MAX 2048

int log_threshold = LOG_LEVEL_INFO;

/* The service label, set once at start before threads exist (log.h). */
static char log__service[32] = "-";

static const char *const log__names[] = {"debug", "info", "warn", "error", "off"};

void log_set_service(const char *svc)
{
    snprintf(log__service, sizeof(log__service), "%s", (svc && *svc) ? svc : "-");
}

int log_level_parse(const char *name)
{
    if (name == NULL)
        return -1;
    for (int i = 0; i <= LOG_LEVEL_OFF; i++)
        if (strcmp(name, log__names[i]) == 0)
            return i;
    return -1;
}

/* Bytes actually in buf after an snprintf-style append of `n` at `len`. */
static size_t log__advance(size_t len, int n, size_t cap)
{
    if (n < 0)
        return len;
    if (len + (size_t)n >= cap)
        return cap - 1;
    return len + (size_t)n;
}

void log_emit(int level, const char *event, const char *fmt, ...)
{
    if (level < log_threshold || level < LOG_LEVEL_DEBUG || level >= LOG_LEVEL_OFF)
        return;
    int saved_errno = errno; /* callers log and then look at errno */

    char line[LOG__LINE_MAX];
    size_t len = 0;
    /* A line written while a call is being served is about that call: it
     * ends with the call's trace id (rpc/trace.h), room for which is kept
     * even when the fields are truncated. */
    const rpc_trace *trace = rpc_trace_current();
    size_t cap = sizeof(line) - (trace ? sizeof(" trace_id=") - 1 + 32 : 0);

    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    len += strftime(line, cap, "ts=%Y-%m-%dT%H:%M:%S", &tm);
    int n = snprintf(line + len, cap - len, ".%03ldZ level=%s svc=%s event=%s",
                     ts.tv_nsec / 1000000L, log__names[level], log__service, event ? event : "-");
    len = log__advance(len, n, cap);

    if (fmt != NULL && fmt[0] != '\0' && len + 1 < cap) {
        line[len++] = ' ';
        size_t start = len;
        va_list ap;
        va_start(ap, fmt);
        n = vsnprintf(line + len, cap - len, fmt, ap);
        va_end(ap);
        len = log__advance(len, n, cap);
        if (len == start)
            len--; /* fields formatted to nothing: no trailing space */
        /* A value with a newline would forge a second line: flatten it. */
        for (size_t i = start; i < len; i++)
            if (line[i] == '\n' || line[i] == '\r')
                line[i] = ' ';
    }
    if (trace) {
        n = snprintf(line + len, sizeof(line) - len, " trace_id=%s", trace->trace_id);
        len = log__advance(len, n, sizeof(line));
    }

    /* len <= sizeof(line) - 1 here: the newline replaces the last byte of a
     * truncated line. */
    line[len++] = '\n';

    ssize_t w;
    do {
        w = write(STDERR_FILENO, line, len);
    } while (w < 0 && errno == EINTR);

    errno = saved_errno;
}
