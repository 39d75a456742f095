/* Unit tests for rpc/src/log.c: stderr is captured through a pipe. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <ctype.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc/log.h"
#include "rpc/trace.h"

/* Captured output of one test (a pipe holds 64 KiB; tests stay below). */
typedef struct capture {
    int pipe_rd, pipe_wr, saved_stderr;
    char text[65536];
    size_t len;
} capture;

static void capture_begin(capture *c)
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    c->pipe_rd = fds[0];
    c->pipe_wr = fds[1];
    c->saved_stderr = dup(STDERR_FILENO);
    assert_true(c->saved_stderr >= 0);
    assert_true(dup2(c->pipe_wr, STDERR_FILENO) >= 0);
}

static void capture_end(capture *c)
{
    assert_true(dup2(c->saved_stderr, STDERR_FILENO) >= 0);
    close(c->saved_stderr);
    close(c->pipe_wr);
    c->len = 0;
    for (;;) {
        ssize_t n = read(c->pipe_rd, c->text + c->len, sizeof(c->text) - 1 - c->len);
        if (n <= 0)
            break;
        c->len += (size_t)n;
    }
    c->text[c->len] = '\0';
    close(c->pipe_rd);
}

static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* ts=YYYY-MM-DDTHH:MM:SS.mmmZ followed by a space. */
static int ts_well_formed(const char *line)
{
    const char *pat = "ts=dddd-dd-ddTdd:dd:dd.dddZ ";
    for (size_t i = 0; pat[i]; i++) {
        if (pat[i] == 'd' ? !isdigit((unsigned char)line[i]) : line[i] != pat[i])
            return 0;
    }
    return 1;
}

static int setup(void **state)
{
    log_set_service("test");
    log_threshold = LOG_LEVEL_INFO;
    return 0;
}

static void test_default_threshold_is_info(void **state)
{
    /* Runs first, before any test changes the global. */
    assert_int_equal(log_threshold, LOG_LEVEL_INFO);
}

static void test_line_format(void **state)
{
    capture c;
    capture_begin(&c);
    log_info("call_done", "method=%s code=%d ms=%.2f", "/a/B", 0, 0.41);
    capture_end(&c);
    assert_int_equal(count_lines(c.text), 1);
    assert_true(ts_well_formed(c.text));
    assert_string_equal(c.text + 28,
                        "level=info svc=test event=call_done method=/a/B code=0 ms=0.41\n");
}

static void test_level_filtering(void **state)
{
    capture c;
    capture_begin(&c);
    log_threshold = LOG_LEVEL_WARN;
    log_debug("d", "x=1");
    log_info("i", "x=2");
    log_warn("w", "x=3");
    log_error("e", "x=4");
    log_threshold = LOG_LEVEL_OFF;
    log_error("e", "x=5");
    log_emit(LOG_LEVEL_ERROR, "direct", "x=6"); /* log_emit checks too */
    log_threshold = LOG_LEVEL_DEBUG;
    log_debug("d", "x=7");
    capture_end(&c);
    assert_int_equal(count_lines(c.text), 3);
    assert_null(strstr(c.text, "x=1"));
    assert_null(strstr(c.text, "x=2"));
    assert_non_null(strstr(c.text, "level=warn svc=test event=w x=3\n"));
    assert_non_null(strstr(c.text, "level=error svc=test event=e x=4\n"));
    assert_null(strstr(c.text, "x=5"));
    assert_null(strstr(c.text, "x=6"));
    assert_non_null(strstr(c.text, "level=debug svc=test event=d x=7\n"));
}

static void test_disabled_level_does_not_format(void **state)
{
    int evaluated = 0;
    log_threshold = LOG_LEVEL_INFO;
    capture c;
    capture_begin(&c);
    log_debug("d", "n=%d", ++evaluated);
    capture_end(&c);
    assert_int_equal(evaluated, 0);
    assert_int_equal(c.len, 0);
}

static void test_no_fields_and_newlines_flattened(void **state)
{
    capture c;
    capture_begin(&c);
    log_info("started", "%s", ""); /* the idiom for an event without fields */
    log_info("evil", "msg=%s", "a\nts=forged level=error\r");
    capture_end(&c);
    assert_int_equal(count_lines(c.text), 2);
    assert_non_null(strstr(c.text, "event=started\n"));
    assert_non_null(strstr(c.text, "msg=a ts=forged level=error \n"));
}

static void test_truncates_long_line(void **state)
{
    char *big = malloc(5000);
    memset(big, 'x', 4999);
    big[4999] = '\0';
    capture c;
    capture_begin(&c);
    log_warn("big", "v=%s", big);
    log_info("after", "k=1");
    capture_end(&c);
    free(big);
    assert_int_equal(count_lines(c.text), 2);
    const char *nl = strchr(c.text, '\n');
    assert_int_equal((size_t)(nl - c.text) + 1, 2048);
    assert_true(ts_well_formed(nl + 1));
}

static void test_service_label(void **state)
{
    char longsvc[100];
    memset(longsvc, 's', 99);
    longsvc[99] = '\0';
    capture c;
    capture_begin(&c);
    log_set_service("store");
    log_info("a", "k=1");
    log_set_service(longsvc); /* truncated, not overflowed */
    log_info("b", "k=2");
    log_set_service(NULL);
    log_info("c", "k=3");
    capture_end(&c);
    log_set_service("test");
    assert_non_null(strstr(c.text, "svc=store event=a"));
    assert_non_null(strstr(c.text, "svc=sssssss"));
    assert_non_null(strstr(c.text, "svc=- event=c"));
}

static void test_errno_preserved(void **state)
{
    capture c;
    capture_begin(&c);
    errno = ENOENT;
    log_error("open_failed", "errno=%d", errno);
    assert_int_equal(errno, ENOENT);
    capture_end(&c);
}

static void test_level_parse(void **state)
{
    assert_int_equal(log_level_parse("debug"), LOG_LEVEL_DEBUG);
    assert_int_equal(log_level_parse("info"), LOG_LEVEL_INFO);
    assert_int_equal(log_level_parse("warn"), LOG_LEVEL_WARN);
    assert_int_equal(log_level_parse("error"), LOG_LEVEL_ERROR);
    assert_int_equal(log_level_parse("off"), LOG_LEVEL_OFF);
    assert_int_equal(log_level_parse("verbose"), -1);
    assert_int_equal(log_level_parse(""), -1);
    assert_int_equal(log_level_parse(NULL), -1);
}

static void *writer(void *arg)
{
    for (int i = 0; i < 100; i++)
        log_info("concurrent", "thread=%s i=%d pad=%s", (const char *)arg, i,
                 "0123456789012345678901234567890123456789");
    return NULL;
}

/* A line written under a trace ends with its id, even when the fields
 * fill the line; once the trace is left, lines carry none. */
static void test_trace_id_appended(void **state)
{
    (void)state;
    rpc_trace t;
    rpc_trace_start(&t, false);
    char big[4000];
    memset(big, 'x', sizeof(big) - 1);
    big[sizeof(big) - 1] = '\0';
    capture c;
    capture_begin(&c);
    rpc_trace prev = rpc_trace_enter(&t);
    log_info("about_call", "k=v");
    log_info("about_call", "big=%s", big);
    rpc_trace_leave(&prev);
    log_info("not_about_call", "k=v");
    capture_end(&c);
    char want[64];
    snprintf(want, sizeof want, " trace_id=%s\n", t.trace_id);
    char *first = strstr(c.text, want);
    assert_non_null(first);
    assert_non_null(strstr(first + 1, want)); /* the truncated line too */
    const char *last = strstr(c.text, "event=not_about_call");
    assert_non_null(last);
    assert_null(strstr(last, "trace_id="));
    assert_int_equal(count_lines(c.text), 3);
}

static void test_concurrent_lines_do_not_interleave(void **state)
{
    capture c;
    capture_begin(&c);
    pthread_t t1, t2;
    pthread_create(&t1, NULL, writer, "a");
    pthread_create(&t2, NULL, writer, "b");
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    capture_end(&c);
    assert_int_equal(count_lines(c.text), 200);
    char *save = NULL;
    for (char *line = strtok_r(c.text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        assert_true(ts_well_formed(line));
        assert_non_null(strstr(line, "pad=0123456789012345678901234567890123456789"));
        assert_null(strstr(line + 1, "ts="));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_default_threshold_is_info),
        cmocka_unit_test_setup(test_line_format, setup),
        cmocka_unit_test_setup(test_level_filtering, setup),
        cmocka_unit_test_setup(test_disabled_level_does_not_format, setup),
        cmocka_unit_test_setup(test_no_fields_and_newlines_flattened, setup),
        cmocka_unit_test_setup(test_truncates_long_line, setup),
        cmocka_unit_test_setup(test_service_label, setup),
        cmocka_unit_test_setup(test_errno_preserved, setup),
        cmocka_unit_test_setup(test_level_parse, setup),
        cmocka_unit_test_setup(test_concurrent_lines_do_not_interleave, setup),
        cmocka_unit_test_setup(test_trace_id_appended, setup),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
