/* Unit tests for rpc/src/cfg.c and rpc/src/server_config.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rpc/cfg.h"
#include "rpc/log.h"
#include "rpc/rpc.h"

typedef struct test_cfg {
    int workers;
    int64_t big;
    bool verbose;
    char name[8];
    int timeout_ms;
    char log_level[16];
    int64_t window_us;
} test_cfg;

static const cfg_option test_options[] = {
    CFG_INT_OPT(test_cfg, workers, "workers", 1, 64, "2", "worker threads"),
    CFG_INT64_OPT(test_cfg, big, "big", 0, 10000000000LL, "5", "a large number"),
    CFG_BOOL_OPT(test_cfg, verbose, "verbose", "false", "say more"),
    CFG_STR_OPT(test_cfg, name, "name", "abc", "a short name"),
    CFG_DUR_OPT(test_cfg, timeout_ms, "timeout", 10, 60000, "2s", "how long to wait"),
    CFG_STR_OPT(test_cfg, log_level, "log-level", "info", "debug|info|warn|error|off"),
    CFG_DURUS_OPT(test_cfg, window_us, "window", 0, 1000000, "2ms", "a window in microseconds"),
};

#define PREFIX "TESTCFG_"

static test_cfg cfg;
static char err[256];

static int reset(void **state)
{
    static const char *const envs[] = {"TESTCFG_WORKERS", "TESTCFG_BIG",     "TESTCFG_VERBOSE",
                                       "TESTCFG_NAME",    "TESTCFG_TIMEOUT", "TESTCFG_LOG_LEVEL",
                                       "TESTCFG_WINDOW"};
    for (size_t i = 0; i < sizeof(envs) / sizeof(envs[0]); i++)
        unsetenv(envs[i]);
    memset(&cfg, 0x7f, sizeof(cfg));
    memset(err, 0, sizeof(err));
    return 0;
}

/* cfg_load on the test table with argv = {"prog", args...}. */
static int load(int nargs, char **args)
{
    char *argv[32];
    argv[0] = "prog";
    for (int i = 0; i < nargs; i++)
        argv[i + 1] = args[i];
    cfg_table t = {test_options, sizeof(test_options) / sizeof(test_options[0]), &cfg};
    return cfg_load(&t, 1, PREFIX, "prog", nargs + 1, argv, 1, NULL, NULL, err, sizeof(err));
}

#define LOAD(...)                                                                                  \
    ({                                                                                             \
        char *a__[] = {__VA_ARGS__};                                                               \
        load((int)(sizeof(a__) / sizeof(a__[0])), a__);                                            \
    })

static void expect_error(int rc, const char *part1, const char *part2)
{
    assert_int_equal(rc, CFG_ERROR);
    if (strstr(err, part1) == NULL || (part2 && strstr(err, part2) == NULL))
        fail_msg("error '%s' lacks '%s' / '%s'", err, part1, part2 ? part2 : "");
}

static void test_defaults(void **state)
{
    assert_int_equal(load(0, NULL), CFG_OK);
    assert_int_equal(cfg.workers, 2);
    assert_int_equal(cfg.big, 5);
    assert_false(cfg.verbose);
    assert_string_equal(cfg.name, "abc");
    assert_int_equal(cfg.timeout_ms, 2000);
    assert_string_equal(cfg.log_level, "info");
    assert_int_equal(cfg.window_us, 2000);
    assert_string_equal(err, "");
}

/* CFG_DURATION_US: fractions and us from flags and the environment, bounds
 * in microseconds, the same refusals as any duration. */
static void test_duration_us(void **state)
{
    assert_int_equal(LOAD("--window=9.5ms"), CFG_OK);
    assert_int_equal(cfg.window_us, 9500);
    assert_int_equal(LOAD("--window", "750us"), CFG_OK);
    assert_int_equal(cfg.window_us, 750);
    setenv("TESTCFG_WINDOW", "0.25s", 1);
    assert_int_equal(load(0, NULL), CFG_OK);
    assert_int_equal(cfg.window_us, 250000);
    unsetenv("TESTCFG_WINDOW");
    expect_error(LOAD("--window=2s"), "--window", "out of bounds [0,1000000] us");
    expect_error(LOAD("--window=9,5ms"), "--window", "not a duration");
    expect_error(LOAD("--window=-1ms"), "--window", "not a duration");
}

static void test_flag_forms(void **state)
{
    assert_int_equal(LOAD("--workers=8", "--big", "10000000000", "--verbose", "--name", "xyz",
                          "--timeout=250ms"),
                     CFG_OK);
    assert_int_equal(cfg.workers, 8);
    assert_int_equal(cfg.big, 10000000000LL);
    assert_true(cfg.verbose);
    assert_string_equal(cfg.name, "xyz");
    assert_int_equal(cfg.timeout_ms, 250);

    assert_int_equal(LOAD("--verbose=yes", "--verbose=off"), CFG_OK);
    assert_false(cfg.verbose);
    assert_int_equal(LOAD("--verbose=ON"), CFG_OK);
    assert_true(cfg.verbose);
    /* The last occurrence wins; an empty string is a value. */
    assert_int_equal(LOAD("--name=a", "--name=", "--timeout", "1m"), CFG_OK);
    assert_string_equal(cfg.name, "");
    assert_int_equal(cfg.timeout_ms, 60000);
    /* "--name=value" keeps everything after the first '='. */
    assert_int_equal(LOAD("--name=a=b"), CFG_OK);
    assert_string_equal(cfg.name, "a=b");
}

static void test_unknown_option(void **state)
{
    expect_error(LOAD("--workers=3", "--bogus=1"), "unknown option --bogus", NULL);
    expect_error(LOAD("--work"), "unknown option --work", NULL);
}

static void test_bad_number(void **state)
{
    expect_error(LOAD("--workers=abc"), "--workers", "'abc' is not a number");
    expect_error(LOAD("--workers=12x"), "--workers", "not a number");
    expect_error(LOAD("--workers="), "--workers", "not a number");
    expect_error(LOAD("--workers= 3"), "--workers", "not a number");
    expect_error(LOAD("--big=1.5"), "--big", "not a number");
}

static void test_out_of_bounds(void **state)
{
    expect_error(LOAD("--workers=65"), "--workers", "out of bounds [1,64]");
    expect_error(LOAD("--workers=0"), "--workers", "out of bounds [1,64]");
    expect_error(LOAD("--workers=-1"), "--workers", "out of bounds");
    expect_error(LOAD("--workers=99999999999999999999"), "--workers", "out of bounds");
    expect_error(LOAD("--big=10000000001"), "--big", "out of bounds [0,10000000000]");
    assert_int_equal(LOAD("--workers=64", "--workers", "1"), CFG_OK);
    assert_int_equal(cfg.workers, 1);
}

static void test_string_too_long(void **state)
{
    assert_int_equal(LOAD("--name=1234567"), CFG_OK); /* 7 bytes + NUL fit in 8 */
    assert_string_equal(cfg.name, "1234567");
    expect_error(LOAD("--name=12345678"), "--name", "too long (8 bytes, at most 7)");
}

static void test_bad_duration(void **state)
{
    expect_error(LOAD("--timeout=5x"), "--timeout", "'5x' is not a duration");
    expect_error(LOAD("--timeout=-5s"), "--timeout", "not a duration");
    expect_error(LOAD("--timeout=s"), "--timeout", "not a duration");
    expect_error(LOAD("--timeout=1h"), "--timeout", "out of bounds [10,60000] ms");
    expect_error(LOAD("--timeout=5"), "--timeout", "out of bounds");
    expect_error(LOAD("--verbose=maybe"), "--verbose", "not a boolean");
}

static void test_missing_value(void **state)
{
    expect_error(LOAD("--workers"), "--workers", "needs a value");
}

static void test_env_twin_precedence(void **state)
{
    setenv("TESTCFG_WORKERS", "7", 1);
    setenv("TESTCFG_LOG_LEVEL", "debug", 1);
    setenv("TESTCFG_VERBOSE", "true", 1);
    assert_int_equal(load(0, NULL), CFG_OK);
    assert_int_equal(cfg.workers, 7);            /* env beats default */
    assert_string_equal(cfg.log_level, "debug"); /* '-' becomes '_' */
    assert_true(cfg.verbose);
    assert_int_equal(LOAD("--workers=9", "--verbose=false"), CFG_OK);
    assert_int_equal(cfg.workers, 9); /* flag beats env */
    assert_false(cfg.verbose);
    assert_string_equal(cfg.log_level, "debug");

    setenv("TESTCFG_WORKERS", "many", 1);
    expect_error(load(0, NULL), "TESTCFG_WORKERS", "--workers");
    assert_non_null(strstr(err, "not a number"));
    setenv("TESTCFG_WORKERS", "100", 1);
    expect_error(load(0, NULL), "TESTCFG_WORKERS", "out of bounds");
    setenv("TESTCFG_WORKERS", "", 1);
    expect_error(load(0, NULL), "TESTCFG_WORKERS", "not a number");
    /* Without a prefix the environment is not read at all. */
    cfg_table t = {test_options, 6, &cfg};
    char *argv[] = {"prog"};
    assert_int_equal(cfg_load(&t, 1, NULL, "prog", 1, argv, 1, NULL, NULL, err, sizeof(err)),
                     CFG_OK);
    assert_int_equal(cfg.workers, 2);
}

/* Runs fn with stdout captured into buf (through a pipe). */
static int with_stdout(char *buf, size_t len, int (*fn)(void))
{
    int fds[2];
    assert_int_equal(pipe(fds), 0);
    fflush(stdout);
    int saved = dup(STDOUT_FILENO);
    dup2(fds[1], STDOUT_FILENO);
    int rc = fn();
    fflush(stdout);
    dup2(saved, STDOUT_FILENO);
    close(saved);
    close(fds[1]);
    size_t n = 0;
    ssize_t r;
    while (n + 1 < len && (r = read(fds[0], buf + n, len - 1 - n)) > 0)
        n += (size_t)r;
    buf[n] = '\0';
    close(fds[0]);
    return rc;
}

static int load_help(void)
{
    return LOAD("--workers=3", "--help");
}
static int load_bad_then_help(void)
{
    return LOAD("--bogus", "--help");
}
static int load_help_after_dashdash(void)
{
    return LOAD("--", "--help");
}

static void test_help(void **state)
{
    char out[16384];
    setenv("TESTCFG_WORKERS", "11", 1);
    assert_int_equal(with_stdout(out, sizeof(out), load_help), CFG_HELP);
    assert_non_null(strstr(out, "Usage: prog"));
    assert_non_null(strstr(out, "--workers=N"));
    assert_non_null(strstr(out, "env TESTCFG_WORKERS"));
    assert_non_null(strstr(out, "env TESTCFG_LOG_LEVEL"));
    assert_non_null(strstr(out, "worker threads"));
    assert_non_null(strstr(out, "range: [1,64]"));
    assert_non_null(strstr(out, "--timeout=DURATION"));
    assert_non_null(strstr(out, "default: 2s"));
    assert_non_null(strstr(out, "default: \"abc\""));
    assert_non_null(strstr(out, "--help"));

    assert_int_equal(with_stdout(out, sizeof(out), load_bad_then_help), CFG_HELP);
    assert_non_null(strstr(out, "Usage: prog"));
    /* After "--", --help is an argument, and this table takes none. */
    assert_int_equal(with_stdout(out, sizeof(out), load_help_after_dashdash), CFG_ERROR);
    assert_string_equal(out, "");
    assert_non_null(strstr(err, "unexpected argument '--help'"));
}

static void test_positional(void **state)
{
    char *argv[] = {"prog", "serve", "a.txt", "--workers=4", "-v", "--", "--name=x", NULL};
    int argc = 7;
    cfg_table t = {test_options, 6, &cfg};
    int pos[4], npos = 4;
    /* first = 2: argv[1] is a subcommand the caller consumed. */
    assert_int_equal(cfg_load(&t, 1, PREFIX, "prog", argc, argv, 2, pos, &npos, err, sizeof(err)),
                     CFG_OK);
    assert_int_equal(npos, 3);
    assert_int_equal(pos[0], 2);
    assert_int_equal(pos[1], 4);
    assert_int_equal(pos[2], 6);
    assert_int_equal(cfg.workers, 4);
    assert_string_equal(cfg.name, "abc"); /* "--name=x" came after "--" */

    npos = 2;
    expect_error(cfg_load(&t, 1, PREFIX, "prog", argc, argv, 2, pos, &npos, err, sizeof(err)),
                 "too many arguments", NULL);
    expect_error(cfg_load(&t, 1, PREFIX, "prog", argc, argv, 2, NULL, NULL, err, sizeof(err)),
                 "unexpected argument 'a.txt'", NULL);
    /* A bare bool flag never eats the next argument. */
    char *argv2[] = {"prog", "--verbose", "true"};
    npos = 4;
    assert_int_equal(cfg_load(&t, 1, PREFIX, "prog", 3, argv2, 1, pos, &npos, err, sizeof(err)),
                     CFG_OK);
    assert_true(cfg.verbose);
    assert_int_equal(npos, 1);
    assert_int_equal(pos[0], 2);
}

static void test_parse_duration(void **state)
{
    static const struct {
        const char *s;
        long long ms;
    } ok[] = {
        {"0", 0},       {"1500", 1500},  {"250ms", 250},   {"2s", 2000},
        {"4m", 240000}, {"1h", 3600000}, {"0s", 0},        {"24h", 86400000},
        {"1.5s", 1500}, {"2000us", 2},   {"1d", 86400000}, {"0.25h", 900000},
    };
    static const char *const bad[] = {"",
                                      "ms",
                                      "-1",
                                      "+1",
                                      "1.5ms", /* finer than a millisecond */
                                      "500us",
                                      "1 s",
                                      " 1s",
                                      "1sec",
                                      "1.s",
                                      ".5s",
                                      "1..5s",
                                      "1e3",
                                      "2S",
                                      "1s2",
                                      "99999999999999999999",
                                      "9999999999999999h",
                                      "0x10",
                                      NULL};
    long long ms;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        assert_int_equal(cfg_parse_duration(ok[i].s, &ms), 0);
        assert_int_equal(ms, ok[i].ms);
    }
    for (size_t i = 0; bad[i]; i++)
        if (cfg_parse_duration(bad[i], &ms) != -1)
            fail_msg("'%s' parsed as a duration", bad[i]);
    assert_int_equal(cfg_parse_duration(NULL, &ms), -1);
}

static void test_parse_duration_us(void **state)
{
    static const struct {
        const char *s;
        long long us;
    } ok[] = {
        {"2ms", 2000},
        {"9.5ms", 9500},
        {"9500us", 9500},
        {"0.0095s", 9500},
        {"9.5", 9500},
        {"0", 0},
        {"1.0000009s", 1000000}, /* past the sixth fraction digit: ignored */
        {"30d", 2592000000000LL},
        {"1.5h", 5400000000LL},
        {"0.5us", 0},
    };
    static const char *const bad[] = {"",           "us",    "-1ms", "9,5ms",
                                      "9.5 ms",     "1e3us", "inf",  "nan",
                                      "0x10",       ".5ms",  "5.ms", "99999999999999999999d",
                                      "200000000d", NULL};
    long long us;
    for (size_t i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
        if (cfg_parse_duration_us(ok[i].s, &us) != 0)
            fail_msg("'%s' refused", ok[i].s);
        assert_int_equal(us, ok[i].us);
    }
    for (size_t i = 0; bad[i]; i++)
        if (cfg_parse_duration_us(bad[i], &us) != -1)
            fail_msg("'%s' parsed as a duration", bad[i]);
    assert_int_equal(cfg_parse_duration_us(NULL, &us), -1);
}

static void test_table_size_mismatch(void **state)
{
    struct {
        char small[2];
    } s;
    const cfg_option bad[] = {{"n", CFG_INT, 0, sizeof(s.small), 0, 10, "1", "wrong field"}};
    cfg_table t = {bad, 1, &s};
    char *argv[] = {"prog"};
    expect_error(cfg_load(&t, 1, NULL, "prog", 1, argv, 1, NULL, NULL, err, sizeof(err)),
                 "default of --n", "option table error");
}

static void test_server_options(void **state)
{
    static const char *const names[] = {"listen",
                                        "metrics-listen",
                                        "workers",
                                        "max-message-bytes",
                                        "max-concurrent-streams",
                                        "keepalive",
                                        "shutdown-grace",
                                        "stream-queue-limit",
                                        "tls-cert",
                                        "tls-key",
                                        "tls-ca",
                                        "tls-server-name",
                                        "peer-tls-cert",
                                        "peer-tls-key",
                                        "peer-tls-ca",
                                        "peer-tls-server-name",
                                        "max-calls-per-connection",
                                        "max-calls",
                                        "max-resets",
                                        "abuse-penalty",
                                        "metrics-timeout",
                                        "metrics-conns-per-address",
                                        "metrics-conns",
                                        "certs-dir",
                                        "trace",
                                        "trace-sample",
                                        "insecure-internal"};
    size_t nnames = sizeof(names) / sizeof(names[0]);
    assert_int_equal(rpc_server_cfg_options_count, nnames);
    for (size_t i = 0; i < nnames; i++) {
        assert_string_equal(rpc_server_cfg_options[i].name, names[i]);
        assert_null(rpc_server_cfg_options[i].def);
    }

    rpc_server_config sc;
    rpc_server_config_defaults(&sc, 7100, 9100);
    assert_string_equal(sc.listen, "127.0.0.1:7100");
    assert_string_equal(sc.metrics_listen, "127.0.0.1:9100");
    assert_int_equal(sc.workers, 1); /* one poller thread: issue 18 */
    assert_int_equal(sc.max_message_bytes, 4 * 1024 * 1024);
    assert_int_equal(sc.max_concurrent_streams, 1000);
    assert_int_equal(sc.keepalive_ms, 7200000);
    assert_int_equal(sc.shutdown_grace_ms, 5000);
    assert_int_equal(sc.stream_queue_limit, 256);
    assert_int_equal(sc.max_calls_per_connection, 1000);
    assert_int_equal(sc.max_calls, 20000);
    assert_int_equal(sc.max_resets, 100);
    assert_int_equal(sc.abuse_penalty_ms, 10000);
    assert_int_equal(sc.metrics_timeout_ms, 5000);
    assert_int_equal(sc.metrics_conns_per_address, 8);
    assert_int_equal(sc.metrics_conns, 64);
    assert_true(sc.trace);
    assert_int_equal(sc.trace_sample, 100);
    assert_string_equal(sc.tls.cert_file, "");
    assert_string_equal(sc.tls.key_file, "");
    assert_string_equal(sc.tls.ca_file, "");
    assert_string_equal(sc.tls.server_name, "");
    /* Identities are on by default: make run's directory, no escape hatch. */
    assert_string_equal(sc.certs_dir, "var/certs");
    assert_false(sc.insecure_internal);

    /* A service's own table next to the shared one, with the documented
     * log-level pattern. */
    test_cfg own;
    cfg_table tables[] = {
        {rpc_server_cfg_options, rpc_server_cfg_options_count, &sc},
        {test_options + 5, 1, &own}, /* log-level only */
    };
    setenv("SCRABBLE_STORE_WORKERS", "4", 1);
    setenv("SCRABBLE_STORE_TLS_SERVER_NAME", "store-svc", 1);
    char *argv[] = {"store",
                    "--keepalive=30s",
                    "--tls-cert",
                    "/etc/c.pem",
                    "--shutdown-grace=0",
                    "--log-level=warn",
                    "--metrics-listen="};
    assert_int_equal(
        cfg_load(tables, 2, "SCRABBLE_STORE_", "store", 7, argv, 1, NULL, NULL, err, sizeof(err)),
        CFG_OK);
    unsetenv("SCRABBLE_STORE_WORKERS");
    unsetenv("SCRABBLE_STORE_TLS_SERVER_NAME");
    assert_int_equal(sc.workers, 4);
    assert_int_equal(sc.keepalive_ms, 30000);
    assert_int_equal(sc.shutdown_grace_ms, 0);
    assert_string_equal(sc.tls.cert_file, "/etc/c.pem");
    assert_string_equal(sc.tls.server_name, "store-svc");
    assert_string_equal(sc.listen, "127.0.0.1:7100"); /* def NULL keeps the pre-fill */
    assert_string_equal(sc.metrics_listen, "");
    assert_int_equal(log_level_parse(own.log_level), LOG_LEVEL_WARN);

    char *bad1[] = {"store", "--max-message-bytes=1023"};
    expect_error(cfg_load(tables, 2, NULL, "store", 2, bad1, 1, NULL, NULL, err, sizeof(err)),
                 "--max-message-bytes", "out of bounds [1024,67108864]");
    char *bad2[] = {"store", "--keepalive=500ms"};
    expect_error(cfg_load(tables, 2, NULL, "store", 2, bad2, 1, NULL, NULL, err, sizeof(err)),
                 "--keepalive", "out of bounds [1000,86400000] ms");
    char *bad3[] = {"store", "--workers=65"};
    expect_error(cfg_load(tables, 2, NULL, "store", 2, bad3, 1, NULL, NULL, err, sizeof(err)),
                 "--workers", "out of bounds [1,64]");
    char *bad4[] = {"store", "--max-concurrent-streams=100001"};
    expect_error(cfg_load(tables, 2, NULL, "store", 2, bad4, 1, NULL, NULL, err, sizeof(err)),
                 "--max-concurrent-streams", "out of bounds [1,100000]");

    /* Usage shows the pre-filled values of def-NULL options. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    rpc_server_config_defaults(&sc, 7100, 9100);
    cfg_usage(f, "store", tables, 2, "SCRABBLE_STORE_");
    fclose(f);
    assert_non_null(strstr(buf, "default: \"127.0.0.1:7100\""));
    assert_non_null(strstr(buf, "default: 7200000ms"));
    assert_non_null(strstr(buf, "env SCRABBLE_STORE_MAX_MESSAGE_BYTES"));
    free(buf);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup(test_defaults, reset),
        cmocka_unit_test_setup(test_flag_forms, reset),
        cmocka_unit_test_setup(test_unknown_option, reset),
        cmocka_unit_test_setup(test_bad_number, reset),
        cmocka_unit_test_setup(test_out_of_bounds, reset),
        cmocka_unit_test_setup(test_string_too_long, reset),
        cmocka_unit_test_setup(test_bad_duration, reset),
        cmocka_unit_test_setup(test_missing_value, reset),
        cmocka_unit_test_setup(test_env_twin_precedence, reset),
        cmocka_unit_test_setup(test_help, reset),
        cmocka_unit_test_setup(test_positional, reset),
        cmocka_unit_test_setup(test_parse_duration, reset),
        cmocka_unit_test_setup(test_parse_duration_us, reset),
        cmocka_unit_test_setup(test_duration_us, reset),
        cmocka_unit_test_setup(test_table_size_mismatch, reset),
        cmocka_unit_test_setup(test_server_options, reset),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
