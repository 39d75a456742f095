/*
 * The load driver's pure core: histogram geometry, percentiles and exact
 * merge; per-op outcome counting; JSON -> protobuf through descriptors;
 * /proc parsers; the streaming JSON writer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ghz_opts.h"
#include "grpc/health/v1/health.pb-c.h"
#include "hist.h"
#include "json2pb.h"
#include "jsonw.h"
#include "procstat.h"
#include "scrabble/v1/edge.pb-c.h"
#include "netpolicy.h"
#include "stats.h"

static void test_hist_exact_region_and_geometry(void **state)
{
    lt_hist h;
    assert_int_equal(lt_hist_init(&h, 7), 0);
    /* Below 2^8 every value has its own bucket. */
    for (uint64_t v = 0; v < 256; v++) {
        assert_int_equal(lt_hist_index(&h, v), v);
        assert_int_equal(lt_hist_bucket_low(&h, v), v);
        assert_int_equal(lt_hist_bucket_high(&h, v), v);
    }
    /* Buckets tile the value range with no gap and no overlap, and each is
     * narrower than 1/128 of its low bound. */
    uint64_t prev_high = 255;
    for (size_t i = 256; i < h.nbuckets; i++) {
        uint64_t lo = lt_hist_bucket_low(&h, i), hi = lt_hist_bucket_high(&h, i);
        assert_int_equal(lo, prev_high + 1);
        assert_true(hi >= lo);
        assert_true((hi - lo + 1) * 128 <= lo);
        assert_int_equal(lt_hist_index(&h, lo), i);
        assert_int_equal(lt_hist_index(&h, hi), i);
        prev_high = hi;
    }
    assert_int_equal(prev_high, (1ull << LT_HIST_MAX_BITS) - 1);
    /* Beyond the range: clamped into the last bucket. */
    assert_int_equal(lt_hist_index(&h, UINT64_MAX), h.nbuckets - 1);
    lt_hist_free(&h);
}

static void test_hist_percentiles(void **state)
{
    lt_hist h;
    lt_hist_init(&h, 7);
    assert_int_equal(lt_hist_percentile(&h, 99), 0);
    /* 1..1000 ms in ns. */
    for (uint64_t i = 1; i <= 1000; i++)
        lt_hist_record(&h, i * 1000000ull);
    assert_int_equal(h.count, 1000);
    assert_int_equal(h.min, 1000000ull);
    assert_int_equal(h.max, 1000000000ull);
    double want[] = {50, 90, 99, 99.9};
    for (size_t k = 0; k < 4; k++) {
        uint64_t exact = (uint64_t)(want[k] * 10 + 0.5) * 1000000ull;
        uint64_t got = lt_hist_percentile(&h, want[k]);
        /* Never below the exact value; at most one bucket (0.8%) above. */
        assert_true(got >= exact);
        assert_true(got <= exact + exact / 128 + 1);
    }
    assert_int_equal(lt_hist_percentile(&h, 100), 1000000000ull);
    assert_true(lt_hist_percentile(&h, 0) >= 1000000ull);
    assert_true(lt_hist_mean(&h) > 500.4e6 && lt_hist_mean(&h) < 500.6e6);
    lt_hist_free(&h);
}

static void test_hist_merge_is_exact(void **state)
{
    lt_hist a, b, all;
    lt_hist_init(&a, 7);
    lt_hist_init(&b, 7);
    lt_hist_init(&all, 7);
    uint64_t x = 88172645463325252ull;
    for (int i = 0; i < 100000; i++) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        uint64_t v = x % 5000000000ull;
        lt_hist_record(i % 3 ? &a : &b, v);
        lt_hist_record(&all, v);
    }
    assert_int_equal(lt_hist_merge(&a, &b), 0);
    assert_int_equal(a.count, all.count);
    assert_int_equal(a.min, all.min);
    assert_int_equal(a.max, all.max);
    assert_memory_equal(a.buckets, all.buckets, a.nbuckets * sizeof(uint64_t));
    assert_int_equal(lt_hist_percentile(&a, 99.9), lt_hist_percentile(&all, 99.9));
    lt_hist c;
    lt_hist_init(&c, 5);
    assert_int_equal(lt_hist_merge(&a, &c), -1); /* different layout */
    lt_hist_free(&a);
    lt_hist_free(&b);
    lt_hist_free(&all);
    lt_hist_free(&c);
}

static void test_opstats_outcomes(void **state)
{
    lt_opstats s, t;
    assert_int_equal(lt_opstats_init(&s, "SubmitPlay"), 0);
    assert_int_equal(lt_opstats_init(&t, "SubmitPlay"), 0);
    lt_opstats_record(&s, 0, "", false, 100, 150, 1150);
    lt_opstats_record(&s, 9, "not_your_turn", false, 0, 0, 10);
    lt_opstats_record(&s, 9, "not_your_turn", false, 0, 0, 10);
    lt_opstats_record(&s, 14, "", true, 0, 0, 10);
    assert_int_equal(s.count, 4);
    assert_int_equal(s.ok, 1);
    assert_int_equal(s.transport, 1);
    assert_int_equal(s.noutcomes, 3);
    assert_int_equal(lt_opstats_code_count(&s, 9), 2);
    /* corrected counts from the intended time, service from the send */
    assert_int_equal(s.corrected.max, 1050);
    assert_int_equal(s.service.max, 1000);
    lt_opstats_record(&t, 9, "stale_seq", false, 0, 0, 1);
    assert_int_equal(lt_opstats_merge(&t, &s), 0);
    assert_int_equal(t.count, 5);
    assert_int_equal(t.noutcomes, 4);
    uint64_t sum = 0;
    for (int i = 0; i < t.noutcomes; i++)
        sum += t.outcomes[i].count;
    assert_int_equal(sum, t.count);
    assert_true(lt_status_is_transport(14, "", "failed to connect"));
    assert_true(lt_status_is_transport(14, "unavailable", "call failed in transport"));
    assert_false(lt_status_is_transport(8, "rate_limited", "slow down"));
    assert_false(lt_status_is_transport(0, "", ""));
    lt_opstats_free(&s);
    lt_opstats_free(&t);
}

static void test_json2pb_scalars_nested_repeated(void **state)
{
    ProtobufCMessage *m;
    char err[256];
    int rc = lt_json_to_message(
        &scrabble__v1__submit_play_request__descriptor,
        "{\"gameId\": \"9007199254740993\", \"expected_seq\": 4, \"placements\": ["
        "{\"row\": 7, \"col\": 7, \"letter\": \"A\"},"
        "{\"row\": 7, \"col\": 8, \"letter\": \"T\", \"blank\": true}]}",
        &m, err, sizeof(err));
    assert_int_equal(rc, 0);
    Scrabble__V1__SubmitPlayRequest *r = (void *)m;
    assert_int_equal(r->game_id, 9007199254740993LL);
    assert_int_equal(r->expected_seq, 4);
    assert_int_equal(r->n_placements, 2);
    assert_string_equal(r->placements[1]->letter, "T");
    assert_true(r->placements[1]->blank);
    /* Round trip through the wire format. */
    uint8_t buf[256];
    size_t n = protobuf_c_message_pack(m, buf);
    ProtobufCMessage *back =
        protobuf_c_message_unpack(&scrabble__v1__submit_play_request__descriptor, NULL, n, buf);
    assert_non_null(back);
    assert_int_equal(((Scrabble__V1__SubmitPlayRequest *)back)->placements[0]->col, 7);
    protobuf_c_message_free_unpacked(back, NULL);
    protobuf_c_message_free_unpacked(m, NULL);

    /* Enums by name and by number. */
    assert_int_equal(lt_json_to_message(&scrabble__v1__list_games_request__descriptor,
                                        "{\"status\": \"GAME_STATUS_FINISHED\", \"page_size\": 5}",
                                        &m, err, sizeof(err)),
                     0);
    assert_int_equal(((Scrabble__V1__ListGamesRequest *)m)->status, 2);
    protobuf_c_message_free_unpacked(m, NULL);
    assert_int_equal(lt_json_to_message(&scrabble__v1__list_games_request__descriptor,
                                        "{\"status\": 1}", &m, err, sizeof(err)),
                     0);
    protobuf_c_message_free_unpacked(m, NULL);
    /* Empty data is the empty message. */
    assert_int_equal(lt_json_to_message(&grpc__health__v1__health_check_request__descriptor, "", &m,
                                        err, sizeof(err)),
                     0);
    protobuf_c_message_free_unpacked(m, NULL);
}

static void test_json2pb_errors(void **state)
{
    ProtobufCMessage *m = NULL;
    char err[256];
    assert_int_equal(lt_json_to_message(&scrabble__v1__game_ref__descriptor, "{\"game_id\": ", &m,
                                        err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "malformed JSON"));
    assert_int_equal(lt_json_to_message(&scrabble__v1__game_ref__descriptor, "{\"gmae_id\": 1}", &m,
                                        err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "gmae_id"));
    assert_int_equal(lt_json_to_message(&scrabble__v1__game_ref__descriptor, "{\"game_id\": \"x\"}",
                                        &m, err, sizeof(err)),
                     -1);
    assert_int_equal(lt_json_to_message(&scrabble__v1__placement__descriptor,
                                        "{\"row\": 3000000000}", &m, err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "row"));
    assert_int_equal(lt_json_to_message(&scrabble__v1__list_games_request__descriptor,
                                        "{\"status\": \"NOPE\"}", &m, err, sizeof(err)),
                     -1);
    assert_int_equal(lt_json_to_message(&scrabble__v1__submit_play_request__descriptor,
                                        "{\"placements\": [{\"row\": 1}, {\"letter\": 5}]}", &m,
                                        err, sizeof(err)),
                     -1);
    assert_non_null(strstr(err, "placements[1].letter"));
    assert_int_equal(
        lt_json_to_message(&scrabble__v1__game_ref__descriptor, "[1,2]", &m, err, sizeof(err)), -1);
    assert_null(m);
}

static void test_base64(void **state)
{
    unsigned char out[16];
    assert_int_equal(lt_base64_decode("aGVsbG8=", 8, out), 5);
    assert_memory_equal(out, "hello", 5);
    assert_int_equal(lt_base64_decode("aGVsbG8", 7, out), 5);
    assert_int_equal(lt_base64_decode("a*==", 4, out), -1);
}

static void test_proc_parsers(void **state)
{
    pid_t ppid;
    uint64_t ticks, child;
    const char *line =
        "1234 (game svc (x)) S 77 1234 1234 0 -1 4194560 500 0 0 0 150 25 7 3 20 0 5 0 100 "
        "1000000 200 18446744073709551615";
    assert_int_equal(lt_proc_parse_stat(line, &ppid, &ticks, &child), 0);
    assert_int_equal(ppid, 77);
    assert_int_equal(ticks, 175);
    assert_int_equal(child, 10);
    assert_int_equal(lt_proc_parse_stat("garbage", &ppid, &ticks, &child), -1);
    const char *tcp = "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt "
                      "  uid  timeout inode\n"
                      "   0: 0100007F:1B58 00000000:0000 0A 00000000:00000000 00:00000000 00000000 "
                      "    0        0 4242 1 0 100 0 0 10 0\n"
                      "   1: 0100007F:1B58 0100007F:D431 01 00000000:00000000 00:00000000 00000000 "
                      "    0        0 5555 1 0 20 4 30 10 -1\n";
    assert_int_equal(lt_proc_listen_inode(tcp, 7000), 4242);
    assert_int_equal(lt_proc_listen_inode(tcp, 7001), 0);
}

static void test_jsonw(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    lt_jw w;
    lt_jw_init(&w, f, false);
    lt_jw_obj(&w);
    lt_jw_kstr(&w, "a\"b", "x\ny");
    lt_jw_key(&w, "arr");
    lt_jw_arr(&w);
    lt_jw_int(&w, -1);
    lt_jw_dbl(&w, 0.5);
    lt_jw_obj(&w);
    lt_jw_end_obj(&w);
    lt_jw_end_arr(&w);
    lt_jw_kbool(&w, "t", true);
    lt_jw_end_obj(&w);
    fclose(f);
    assert_string_equal(buf, "{\"a\\\"b\":\"x\\ny\",\"arr\":[-1,0.5,{}],\"t\":true}");
    cJSON *j = cJSON_Parse(buf);
    assert_non_null(j);
    cJSON_Delete(j);
    free(buf);
}

/* Parses a space-separated command line (words hold no spaces). */
static int ghz_parse(lt_ghz_opts *o, const char *line, char *err, size_t errlen)
{
    static char buf[512];
    static char *argv[64];
    snprintf(buf, sizeof buf, "ghz %s", line);
    int argc = 0;
    for (char *t = strtok(buf, " "); t && argc < 63; t = strtok(NULL, " "))
        argv[argc++] = t;
    argv[argc] = NULL;
    return lt_ghz_opts_parse(o, argc, argv, err, errlen);
}

static void test_ghz_opts(void **state)
{
    (void)state;
    lt_ghz_opts o;
    char err[256];
    /* Defaults. */
    assert_int_equal(ghz_parse(&o, "--call a.B/C 127.0.0.1:7000", err, sizeof err), 0);
    assert_string_equal(o.call, "a.B/C");
    assert_string_equal(o.host, "127.0.0.1:7000");
    assert_int_equal(o.concurrency, 50);
    assert_int_equal(o.total, 200);
    assert_int_equal(o.connections, 1);
    assert_string_equal(o.format, "summary");
    assert_int_equal(o.timeout_ms, 20000);
    assert_int_equal(o.max_duration_ms, 600000);
    /* Short, long, --flag=value, flags after the host, ignored ghz flags. */
    assert_int_equal(ghz_parse(&o,
                               "--call=x.Y/Z -c 8 --total=50 -z 1.5s -x 2m -r 250.5 "
                               "--connections 4 -O csv -o out.csv -t 500ms --connect-timeout=3s "
                               "--insecure --name run1 -d {} -m {\"a\":\"b\"} localhost:7 --cpus 2 "
                               "--skipFirst 1",
                               err, sizeof err),
                     0);
    assert_int_equal(o.concurrency, 8);
    assert_int_equal(o.total, 50);
    assert_int_equal(o.duration_ms, 1500);
    assert_int_equal(o.max_duration_ms, 120000);
    assert_true(o.rps > 250.4 && o.rps < 250.6);
    assert_int_equal(o.connections, 4);
    assert_string_equal(o.format, "csv");
    assert_string_equal(o.output, "out.csv");
    assert_int_equal(o.timeout_ms, 500);
    assert_int_equal(o.connect_timeout_ms, 3000);
    assert_true(o.insecure);
    assert_string_equal(o.name, "run1");
    assert_string_equal(o.data, "{}");
    assert_string_equal(o.host, "localhost:7");
    assert_int_equal(ghz_parse(&o,
                               "--cacert ca.pem --cert c.pem --key k.pem --cname gw 127.0.0.1:1",
                               err, sizeof err),
                     0);
    assert_string_equal(o.tls.ca_file, "ca.pem");
    assert_string_equal(o.tls.server_name, "gw");
    assert_int_equal(ghz_parse(&o, "-h", err, sizeof err), LT_GHZ_OPTS_HELP);
}

static void test_ghz_opts_refused(void **state)
{
    (void)state;
    static const struct {
        const char *line, *msg;
    } bad[] = {
        {"--call a/b", "no host"},
        {"127.0.0.1:1 127.0.0.1:2", "unexpected argument"},
        {"--bogus 127.0.0.1:1", "unknown flag '--bogus'"},
        {"-q 127.0.0.1:1", "unknown flag '-q'"},
        {"127.0.0.1:1 -c", "needs a value"},
        {"-c 0 127.0.0.1:1", "not an integer in 1..100000"},
        {"-n x 127.0.0.1:1", "not an integer"},
        {"-z 10 127.0.0.1:1", "not a duration with a unit"}, /* bare: refused, not guessed */
        {"-t 5parsecs 127.0.0.1:1", "not a duration"},
        {"-r -1 127.0.0.1:1", "not a rate"},
        {"-O xml 127.0.0.1:1", "unknown format"},
        {"-c 2 --connections 3 127.0.0.1:1", "cannot exceed"},
        {"10.0.0.1:7000", "not a loopback address"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        lt_ghz_opts o;
        char err[256] = "";
        assert_int_equal(ghz_parse(&o, bad[i].line, err, sizeof err), LT_GHZ_OPTS_ERROR);
        if (!strstr(err, bad[i].msg))
            fail_msg("'%s': got '%s', want '%s'", bad[i].line, err, bad[i].msg);
    }
    lt_ghz_opts o;
    char err[256];
    assert_int_equal(ghz_parse(&o, "-z 0 127.0.0.1:1", err, sizeof err), 0); /* 0 needs no unit */
}

/* Loopback always; private networks only with the opt-in; public never.
 * Literals and localhost only: no test depends on a resolver. */
static void test_netpolicy(void **state)
{
    (void)state;
    char err[256];
    static const struct {
        const char *target;
        bool plain, private_ok;
    } cases[] = {
        {"127.0.0.1:7000", true, true},
        {"localhost:7000", true, true},
        {"ipv4:127.9.8.7:1", true, true},
        {"[::1]:7000", true, true},
        {"dns:///127.0.0.1:7000", true, true},
        {"10.1.2.3:7000", false, true},
        {"172.16.0.1:7000", false, true},
        {"172.31.255.255:7000", false, true},
        {"192.168.1.1:7000", false, true},
        {"[fd00::1]:7000", false, true},
        {"[::ffff:10.0.0.1]:7000", false, true},
        {"172.32.0.1:7000", false, false},
        {"172.15.0.1:7000", false, false},
        {"8.8.8.8:53", false, false},
        {"[2001:db8::1]:7000", false, false},
        {"balancer:7000", false, false}, /* a name: only resolved with the opt-in */
        {"127.0.0.1", false, false},
        {"::1:7000", false, false},
        {"127.0.0.1:70x", false, false},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        err[0] = '\0';
        bool ok = lt_net_target_allowed(cases[i].target, false, err, sizeof(err));
        if (ok != cases[i].plain)
            fail_msg("%s without --allow-private: %d (%s)", cases[i].target, ok, err);
        if (!ok)
            assert_non_null(strstr(err, cases[i].target));
        if (strncmp(cases[i].target, "balancer", 8) == 0)
            continue; /* resolution depends on the machine */
        ok = lt_net_target_allowed(cases[i].target, true, err, sizeof(err));
        if (ok != cases[i].private_ok)
            fail_msg("%s with --allow-private: %d (%s)", cases[i].target, ok, err);
    }
    assert_false(lt_net_target_allowed("balancer:7000", false, err, sizeof(err)));
    assert_non_null(strstr(err, "--allow-private"));
    assert_true(lt_net_host_allowed("/var/run/postgresql", false, err, sizeof(err)));
    assert_true(lt_net_host_allowed("localhost", false, err, sizeof(err)));
    assert_false(lt_net_host_allowed("postgres.example", false, err, sizeof(err)));
    assert_false(lt_net_host_allowed("", true, err, sizeof(err)));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_hist_exact_region_and_geometry),
        cmocka_unit_test(test_hist_percentiles),
        cmocka_unit_test(test_hist_merge_is_exact),
        cmocka_unit_test(test_opstats_outcomes),
        cmocka_unit_test(test_json2pb_scalars_nested_repeated),
        cmocka_unit_test(test_json2pb_errors),
        cmocka_unit_test(test_base64),
        cmocka_unit_test(test_proc_parsers),
        cmocka_unit_test(test_jsonw),
        cmocka_unit_test(test_ghz_opts),
        cmocka_unit_test(test_ghz_opts_refused),
        cmocka_unit_test(test_netpolicy),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
