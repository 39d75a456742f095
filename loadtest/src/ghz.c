/*
 * ghz.c — `loadtest ghz`: one method, ghz's options and ghz's report.
 *
 * One driver thread keeps the schedule: with --rps, request i is intended
 * at t0 + i/rps whether or not a worker is free (open loop), so a stall
 * shows up in the corrected latency (done - intended) instead of silently
 * delaying the schedule; without --rps, -c workers send back to back
 * (closed loop, corrected == service). Calls complete on two rpc_loop
 * threads, which stamp the time and post the result to the driver's
 * mailbox. Every run is bounded: -n or -z, and --max-duration / -x.
 */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "hist.h"
#include "json2pb.h"
#include "jsonw.h"
#include "lt.h"
#include "mailbox.h"
#include "methods.h"
#include "rpc/cfg.h"
#include "rpc/rpc.h"

typedef struct lt_ghz_opts {
    char call[160];
    char host[160];
    bool insecure;
    int concurrency;
    long long total;
    long long duration_ms;     /* -z */
    long long max_duration_ms; /* -x; 0: none */
    double rps;
    int connections;
    const char *data;      /* -d */
    const char *data_file; /* -D */
    const char *metadata;  /* -m */
    const char *format;    /* -O */
    const char *output;    /* -o */
    long long timeout_ms;  /* -t */
    long long connect_timeout_ms;
    const char *name;
    rpc_tls_config tls;
} lt_ghz_opts;

typedef struct lt_ghz_detail {
    int64_t wall_ns;
    uint64_t latency_ns;
    int32_t code;
    int32_t error; /* index into errors, -1 none */
} lt_ghz_detail;

typedef struct lt_ghz_error {
    char text[320];
    uint64_t count;
} lt_ghz_error;

struct lt_ghz;

typedef struct lt_ghz_slot {
    lt_msg msg;
    struct lt_ghz *g;
    struct lt_ghz_slot *next_free;
    uint64_t intended, sent, done;
    int64_t wall_sent;
    rpc_status st;
} lt_ghz_slot;

typedef struct lt_ghz {
    lt_ghz_opts o;
    lt_method m;
    lt_stop *stop;
    lt_mailbox mb;
    rpc_loop *loops[2];
    rpc_channel **channels;
    grpc_byte_buffer **payloads;
    size_t npayloads;
    rpc_metadata md[32];
    size_t nmd;
    cJSON *md_json;
    lt_ghz_slot *slots, *free_slots;
    int inflight;
    uint64_t issued, done;
    lt_hist service, corrected;
    uint64_t code_counts[17];
    lt_ghz_detail *details;
    size_t ndetails, cap_details;
    lt_ghz_error *errors;
    size_t nerrors, cap_errors;
    uint64_t t0, t_end;
    int64_t wall_start;
    const char *end_reason;
} lt_ghz;

/* ------------------------------------------------------------------ */
/* Options                                                             */

static void lt_ghz__usage(FILE *f)
{
    fprintf(f, "usage: loadtest ghz --call pkg.Service/Method [options] HOST:PORT\n"
               "  --call NAME            method, e.g. grpc.health.v1.Health/Check\n"
               "  -c, --concurrency N    workers (default 50)\n"
               "  -n, --total N          requests (default 200; ignored with -z)\n"
               "  -z, --duration D       send for this long (e.g. 10s)\n"
               "  -x, --max-duration D   hard bound on the whole run (default 10m)\n"
               "  --rps R                open-loop rate (0: as fast as the workers go)\n"
               "  --connections N        HTTP/2 connections (default 1)\n"
               "  -d, --data JSON        request message (or an array: round robin)\n"
               "  -D, --data-file FILE   same, from a file\n"
               "  -m, --metadata JSON    {\"key\":\"value\",...}\n"
               "  -O, --format F         summary|json|pretty|csv (default summary)\n"
               "  -o, --output FILE      write the report here (default stdout)\n"
               "  -t, --timeout D        per call (default 20s)\n"
               "  --connect-timeout D    (default 10s)\n"
               "  --insecure             plaintext (the default without --cacert)\n"
               "  --cacert/--cert/--key/--cname  TLS\n"
               "  --name NAME            a label for the report\n");
}

static int lt_ghz__dur(const char *flag, const char *v, long long *out, char *err, size_t errlen)
{
    /* ghz takes Go durations: "10s", "1m", "500ms"; also "1m30s". */
    long long total = 0;
    const char *p = v;
    if (!*p)
        goto bad;
    while (*p) {
        char *end;
        double num = strtod(p, &end);
        if (end == p || num < 0)
            goto bad;
        p = end;
        double mul;
        if (!strncmp(p, "ms", 2))
            mul = 1, p += 2;
        else if (!strncmp(p, "us", 2))
            mul = 0.001, p += 2;
        else if (!strncmp(p, "ns", 2))
            mul = 0.000001, p += 2;
        else if (*p == 's')
            mul = 1000, p++;
        else if (*p == 'm')
            mul = 60000, p++;
        else if (*p == 'h')
            mul = 3600000, p++;
        else if (*p == '\0' && p == v + strlen(v))
            mul = 1000; /* bare number: seconds */
        else
            goto bad;
        total += (long long)(num * mul);
    }
    *out = total;
    return 0;
bad:
    snprintf(err, errlen, "%s: '%s' is not a duration (e.g. 500ms, 10s, 1m)", flag, v);
    return -1;
}

static int lt_ghz__num(const char *flag, const char *v, long long min, long long max,
                       long long *out, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (errno || end == v || *end || n < min || n > max) {
        snprintf(err, errlen, "%s: '%s' is not an integer in %lld..%lld", flag, v, min, max);
        return -1;
    }
    *out = n;
    return 0;
}

static int lt_ghz__parse(lt_ghz_opts *o, int argc, char **argv, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->concurrency = 50;
    o->total = 200;
    o->connections = 1;
    o->format = "summary";
    o->timeout_ms = 20000;
    o->connect_timeout_ms = 10000;
    o->max_duration_ms = 600000;
    bool have_n = false;
    for (int i = 1; i < argc; i++) {
        char *a = argv[i];
        if (a[0] != '-') {
            if (o->host[0]) {
                snprintf(err, errlen, "unexpected argument '%s' (host already '%s')", a, o->host);
                return -1;
            }
            snprintf(o->host, sizeof(o->host), "%s", a);
            continue;
        }
        char name[64];
        const char *val = NULL;
        const char *eq = strchr(a, '=');
        if (eq) {
            snprintf(name, sizeof(name), "%.*s", (int)(eq - a), a);
            val = eq + 1;
        } else {
            snprintf(name, sizeof(name), "%s", a);
        }
        if (!strcmp(name, "-h") || !strcmp(name, "--help")) {
            lt_ghz__usage(stdout);
            return 1;
        }
        if (!strcmp(name, "--insecure")) {
            o->insecure = true;
            continue;
        }
        static const char *const takes_value[] = {"--call",
                                                  "-c",
                                                  "--concurrency",
                                                  "-n",
                                                  "--total",
                                                  "-z",
                                                  "--duration",
                                                  "-x",
                                                  "--max-duration",
                                                  "--rps",
                                                  "-r",
                                                  "--connections",
                                                  "-d",
                                                  "--data",
                                                  "-D",
                                                  "--data-file",
                                                  "-m",
                                                  "--metadata",
                                                  "-O",
                                                  "--format",
                                                  "-o",
                                                  "--output",
                                                  "-t",
                                                  "--timeout",
                                                  "--connect-timeout",
                                                  "--name",
                                                  "--cacert",
                                                  "--cert",
                                                  "--key",
                                                  "--cname",
                                                  "--cpus",
                                                  "--skipFirst",
                                                  NULL};
        bool known = false;
        for (int k = 0; takes_value[k]; k++)
            if (!strcmp(name, takes_value[k]))
                known = true;
        if (!known) {
            snprintf(err, errlen, "unknown flag '%s'", name);
            return -1;
        }
        if (val == NULL) {
            if (i + 1 >= argc) {
                snprintf(err, errlen, "%s needs a value", name);
                return -1;
            }
            val = argv[++i];
        }
        long long n;
        if (!strcmp(name, "--call")) {
            snprintf(o->call, sizeof(o->call), "%s", val);
        } else if (!strcmp(name, "-c") || !strcmp(name, "--concurrency")) {
            if (lt_ghz__num(name, val, 1, 100000, &n, err, errlen))
                return -1;
            o->concurrency = (int)n;
        } else if (!strcmp(name, "-n") || !strcmp(name, "--total")) {
            if (lt_ghz__num(name, val, 1, 1000000000LL, &n, err, errlen))
                return -1;
            o->total = n;
            have_n = true;
        } else if (!strcmp(name, "-z") || !strcmp(name, "--duration")) {
            if (lt_ghz__dur(name, val, &o->duration_ms, err, errlen))
                return -1;
        } else if (!strcmp(name, "-x") || !strcmp(name, "--max-duration")) {
            if (lt_ghz__dur(name, val, &o->max_duration_ms, err, errlen))
                return -1;
        } else if (!strcmp(name, "--rps") || !strcmp(name, "-r")) {
            char *end;
            o->rps = strtod(val, &end);
            if (end == val || *end || o->rps < 0 || o->rps > 10e6) {
                snprintf(err, errlen, "%s: '%s' is not a rate in 0..10000000", name, val);
                return -1;
            }
        } else if (!strcmp(name, "--connections")) {
            if (lt_ghz__num(name, val, 1, 19000, &n, err, errlen))
                return -1;
            o->connections = (int)n;
        } else if (!strcmp(name, "-d") || !strcmp(name, "--data")) {
            o->data = val;
        } else if (!strcmp(name, "-D") || !strcmp(name, "--data-file")) {
            o->data_file = val;
        } else if (!strcmp(name, "-m") || !strcmp(name, "--metadata")) {
            o->metadata = val;
        } else if (!strcmp(name, "-O") || !strcmp(name, "--format")) {
            o->format = val;
        } else if (!strcmp(name, "-o") || !strcmp(name, "--output")) {
            o->output = val;
        } else if (!strcmp(name, "-t") || !strcmp(name, "--timeout")) {
            if (lt_ghz__dur(name, val, &o->timeout_ms, err, errlen))
                return -1;
        } else if (!strcmp(name, "--connect-timeout")) {
            if (lt_ghz__dur(name, val, &o->connect_timeout_ms, err, errlen))
                return -1;
        } else if (!strcmp(name, "--name")) {
            o->name = val;
        } else if (!strcmp(name, "--cacert")) {
            snprintf(o->tls.ca_file, sizeof(o->tls.ca_file), "%s", val);
        } else if (!strcmp(name, "--cert")) {
            snprintf(o->tls.cert_file, sizeof(o->tls.cert_file), "%s", val);
        } else if (!strcmp(name, "--key")) {
            snprintf(o->tls.key_file, sizeof(o->tls.key_file), "%s", val);
        } else if (!strcmp(name, "--cname")) {
            snprintf(o->tls.server_name, sizeof(o->tls.server_name), "%s", val);
        } /* --cpus, --skipFirst: accepted for compatibility, no effect */
    }
    (void)have_n;
    if (!o->host[0]) {
        snprintf(err, errlen, "no host given (e.g. 127.0.0.1:7000)");
        return -1;
    }
    if (strcmp(o->format, "summary") && strcmp(o->format, "json") && strcmp(o->format, "pretty") &&
        strcmp(o->format, "csv")) {
        snprintf(err, errlen, "-O: unknown format '%s' (summary, json, pretty, csv)", o->format);
        return -1;
    }
    if (o->connections > o->concurrency) {
        snprintf(err, errlen, "--connections (%d) cannot exceed -c (%d)", o->connections,
                 o->concurrency);
        return -1;
    }
    if (o->timeout_ms <= 0)
        o->timeout_ms = 20000;
    if (o->max_duration_ms <= 0 || o->max_duration_ms > 24LL * 3600 * 1000)
        o->max_duration_ms = 24LL * 3600 * 1000;
    /* Loopback only: this driver is for our own stacks. */
    if (strncmp(o->host, "127.", 4) && strncmp(o->host, "localhost:", 10) &&
        strncmp(o->host, "ipv4:127.", 9) && strncmp(o->host, "[::1]:", 6)) {
        snprintf(err, errlen,
                 "host '%s' is not a loopback address (127.x.x.x:PORT, localhost:PORT)", o->host);
        return -1;
    }
    return 0;
}

static char *lt_ghz__read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, n = 0;
    char *buf = malloc(cap);
    size_t r;
    while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
        n += r;
        if (n + 1 == cap) {
            char *nb = realloc(buf, cap *= 2);
            if (!nb) {
                free(buf);
                buf = NULL;
            } else
                buf = nb;
        }
    }
    fclose(f);
    if (buf)
        buf[n] = '\0';
    else
        snprintf(err, errlen, "out of memory reading %s", path);
    return buf;
}

/* Builds the request payload(s) and metadata; all input errors land here,
 * before any connection is made. */
static int lt_ghz__prepare(lt_ghz *g, char *err, size_t errlen)
{
    if (lt_method_lookup(g->o.call, &g->m, err, errlen) != 0)
        return -1;
    if (g->m.server_streaming) {
        snprintf(err, errlen, "%s is a server-streaming method; ghz mode drives unary methods",
                 g->m.path);
        return -1;
    }
    const ProtobufCMessageDescriptor *in = g->m.method->input;
    char *file_data = NULL;
    const char *data = g->o.data;
    if (g->o.data_file) {
        if ((file_data = lt_ghz__read_file(g->o.data_file, err, errlen)) == NULL)
            return -1;
        data = file_data;
    }
    int rc = -1;
    const char *p = data ? data : "";
    while (isspace((unsigned char)*p))
        p++;
    if (*p == '[') {
        cJSON *arr = cJSON_Parse(p);
        if (arr == NULL || !cJSON_IsArray(arr) || cJSON_GetArraySize(arr) == 0) {
            snprintf(err, errlen,
                     "-d: malformed JSON data (an object or a non-empty array of objects)");
            cJSON_Delete(arr);
            goto out;
        }
        g->npayloads = (size_t)cJSON_GetArraySize(arr);
        g->payloads = calloc(g->npayloads, sizeof(*g->payloads));
        size_t k = 0;
        for (cJSON *e = arr->child; e; e = e->next, k++) {
            char *txt = cJSON_PrintUnformatted(e);
            ProtobufCMessage *msg;
            char e2[200];
            int r = lt_json_to_message(in, txt, &msg, e2, sizeof(e2));
            free(txt);
            if (r != 0) {
                snprintf(err, errlen, "-d[%zu]: %s: %s", k, in->name, e2);
                cJSON_Delete(arr);
                goto out;
            }
            g->payloads[k] = rpc_pack(msg);
            protobuf_c_message_free_unpacked(msg, NULL);
        }
        cJSON_Delete(arr);
    } else {
        ProtobufCMessage *msg;
        char e2[200];
        if (lt_json_to_message(in, data, &msg, e2, sizeof(e2)) != 0) {
            snprintf(err, errlen, "-d: %s: %s", in->name, e2);
            goto out;
        }
        g->npayloads = 1;
        g->payloads = calloc(1, sizeof(*g->payloads));
        g->payloads[0] = rpc_pack(msg);
        protobuf_c_message_free_unpacked(msg, NULL);
    }
    if (g->o.metadata && g->o.metadata[0]) {
        g->md_json = cJSON_Parse(g->o.metadata);
        if (g->md_json == NULL || !cJSON_IsObject(g->md_json)) {
            snprintf(err, errlen, "-m: malformed JSON metadata (an object of strings)");
            goto out;
        }
        for (cJSON *e = g->md_json->child; e; e = e->next) {
            if (!cJSON_IsString(e)) {
                snprintf(err, errlen, "-m: the value of '%s' is not a string", e->string);
                goto out;
            }
            if (g->nmd == sizeof(g->md) / sizeof(g->md[0])) {
                snprintf(err, errlen, "-m: too many keys (at most 32)");
                goto out;
            }
            for (char *c = e->string; *c; c++)
                *c = (char)tolower((unsigned char)*c);
            g->md[g->nmd].key = e->string;
            g->md[g->nmd].value = e->valuestring;
            g->nmd++;
        }
    }
    rc = 0;
out:
    free(file_data);
    return rc;
}

/* ------------------------------------------------------------------ */
/* Driving                                                             */

static void lt_ghz__on_done(void *arg, const rpc_status *st, grpc_byte_buffer *reply)
{
    lt_ghz_slot *s = arg;
    s->done = lt_now_ns();
    s->st = *st;
    if (reply)
        grpc_byte_buffer_destroy(reply);
    lt_mailbox_post(&s->g->mb, &s->msg);
}

static int32_t lt_ghz__error_index(lt_ghz *g, const rpc_status *st)
{
    char text[320];
    snprintf(text, sizeof(text), "rpc error: code = %s desc = %s", lt_go_code_name(st->code),
             st->message);
    for (size_t i = 0; i < g->nerrors; i++) {
        if (!strcmp(g->errors[i].text, text)) {
            g->errors[i].count++;
            return (int32_t)i;
        }
    }
    if (g->nerrors == g->cap_errors) {
        if (g->cap_errors >= 4096)
            return -1;
        size_t nc = g->cap_errors ? g->cap_errors * 2 : 16;
        lt_ghz_error *ne = realloc(g->errors, nc * sizeof(*ne));
        if (!ne)
            return -1;
        g->errors = ne;
        g->cap_errors = nc;
    }
    snprintf(g->errors[g->nerrors].text, sizeof(g->errors[0].text), "%s", text);
    g->errors[g->nerrors].count = 1;
    return (int32_t)g->nerrors++;
}

static void lt_ghz__record(lt_ghz *g, lt_ghz_slot *s)
{
    g->done++;
    g->inflight--;
    lt_hist_record(&g->service, s->done - s->sent);
    lt_hist_record(&g->corrected, s->done - s->intended);
    int code = s->st.code >= 0 && s->st.code <= 16 ? s->st.code : 2;
    g->code_counts[code]++;
    if (g->ndetails == g->cap_details && g->cap_details < 50000000) {
        size_t nc = g->cap_details ? g->cap_details * 2 : 4096;
        lt_ghz_detail *nd = realloc(g->details, nc * sizeof(*nd));
        if (nd) {
            g->details = nd;
            g->cap_details = nc;
        }
    }
    int32_t eidx = code ? lt_ghz__error_index(g, &s->st) : -1;
    if (g->ndetails < g->cap_details)
        g->details[g->ndetails++] = (lt_ghz_detail){s->wall_sent, s->done - s->sent, code, eidx};
    s->next_free = g->free_slots;
    g->free_slots = s;
}

static void lt_ghz__issue(lt_ghz *g, uint64_t intended)
{
    lt_ghz_slot *s = g->free_slots;
    g->free_slots = s->next_free;
    uint64_t i = g->issued++;
    s->intended = intended;
    s->sent = lt_now_ns();
    s->wall_sent = lt_wall_ns();
    rpc_client_opts opts = {
        .timeout_ms = g->o.timeout_ms, .md = g->md, .md_count = g->nmd, .loop = g->loops[i % 2]};
    int w = (int)(i % (uint64_t)g->o.concurrency);
    rpc_channel *ch = g->channels[w % g->o.connections];
    g->inflight++;
    if (rpc_client_raw(ch, g->m.path, g->payloads[i % g->npayloads], &opts, lt_ghz__on_done, s) !=
        RPC_OK) {
        s->done = lt_now_ns();
        rpc_status_set(&s->st, GRPC_STATUS_INTERNAL, "start_failed", "could not start the call");
        lt_ghz__record(g, s);
    }
}

static int lt_ghz__connect(lt_ghz *g, char *err, size_t errlen)
{
    rpc_channel_opts copts = {.own_connection = true, .tls = &g->o.tls};
    g->channels = calloc((size_t)g->o.connections, sizeof(*g->channels));
    for (int i = 0; i < g->o.connections; i++) {
        g->channels[i] = rpc_channel_create(g->o.host, &copts);
        if (g->channels[i] == NULL) {
            snprintf(err, errlen, "cannot create a channel to %s", g->o.host);
            return -1;
        }
        rpc_channel_connect(g->channels[i]);
    }
    uint64_t until = lt_now_ns() + (uint64_t)g->o.connect_timeout_ms * 1000000ull;
    for (;;) {
        int ready = 0;
        for (int i = 0; i < g->o.connections; i++)
            if (rpc_channel_ready(g->channels[i]))
                ready++;
            else
                rpc_channel_connect(g->channels[i]);
        if (ready == g->o.connections)
            return 0;
        if (lt_now_ns() >= until || atomic_load(&g->stop->stop)) {
            snprintf(err, errlen, "cannot connect to %s: %d of %d connections ready after %lld ms",
                     g->o.host, ready, g->o.connections, g->o.connect_timeout_ms);
            return -1;
        }
        usleep(5000);
    }
}

static void lt_ghz__drive(lt_ghz *g)
{
    g->t0 = lt_now_ns();
    g->wall_start = lt_wall_ns();
    uint64_t hard_end = g->t0 + (uint64_t)g->o.max_duration_ms * 1000000ull;
    uint64_t send_end =
        g->o.duration_ms > 0 ? g->t0 + (uint64_t)g->o.duration_ms * 1000000ull : UINT64_MAX;
    uint64_t limit = g->o.duration_ms > 0 ? UINT64_MAX : (uint64_t)g->o.total;
    double interval = g->o.rps > 0 ? 1e9 / g->o.rps : 0;
    bool sending = true;
    g->end_reason = "normal";
    uint64_t drain_until = 0;
    for (;;) {
        uint64_t now = lt_now_ns();
        if (sending && atomic_load(&g->stop->stop)) {
            sending = false;
            g->end_reason = "cancel";
        }
        if (sending && now >= send_end) {
            sending = false;
            g->end_reason = "timeout";
        }
        if (sending && now >= hard_end) {
            sending = false;
            g->end_reason = "max-duration";
        }
        if (sending && g->issued >= limit)
            sending = false;
        if (!sending && drain_until == 0)
            drain_until = now + (uint64_t)g->o.timeout_ms * 1000000ull + 2000000000ull;
        uint64_t next = now + 100000000ull;
        if (sending) {
            while (g->free_slots && g->issued < limit) {
                uint64_t intended = interval > 0 ? g->t0 + (uint64_t)(g->issued * interval) : now;
                if (intended > now) {
                    next = intended;
                    break;
                }
                lt_ghz__issue(g, intended);
                now = lt_now_ns();
            }
            if (next > send_end)
                next = send_end;
        } else if (g->inflight == 0 || now >= drain_until) {
            break;
        }
        if (next > hard_end && sending)
            next = hard_end;
        lt_msg *list = lt_mailbox_take(&g->mb, next);
        while (list) {
            lt_msg *m = list;
            list = list->next;
            if (m == &g->stop->wake_msg)
                continue;
            lt_ghz__record(g, (lt_ghz_slot *)((char *)m - offsetof(lt_ghz_slot, msg)));
        }
    }
    g->t_end = lt_now_ns();
}

/* ------------------------------------------------------------------ */
/* Reports                                                             */

static void lt_ghz__fmt_dur(char *buf, size_t len, uint64_t ns)
{
    if (ns >= 1000000000ull)
        snprintf(buf, len, "%.2f s", ns / 1e9);
    else if (ns >= 1000000ull)
        snprintf(buf, len, "%.2f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.2f µs", ns / 1e3);
}

static const double lt_ghz_pcts[] = {10, 25, 50, 75, 90, 95, 99, 99.9};
#define LT_GHZ_NPCTS (sizeof(lt_ghz_pcts) / sizeof(lt_ghz_pcts[0]))

/* ghz's histogram: 10 equal-width buckets from fastest to slowest, each
 * counting the latencies up to its mark. */
static void lt_ghz__buckets(const lt_hist *h, double marks[11], uint64_t counts[11])
{
    double fastest = (double)h->min, slowest = (double)h->max;
    double bs = (slowest - fastest) / 10.0;
    for (int i = 0; i < 10; i++)
        marks[i] = fastest + bs * i;
    marks[10] = slowest;
    memset(counts, 0, 11 * sizeof(uint64_t));
    if (h->count == 0)
        return;
    for (size_t i = 0; i < h->nbuckets; i++) {
        if (!h->buckets[i])
            continue;
        double v = (double)lt_hist_bucket_low(h, i);
        if (v < fastest)
            v = fastest;
        int b = 0;
        while (b < 10 && v > marks[b])
            b++;
        counts[b] += h->buckets[i];
    }
}

static void lt_ghz__summary(lt_ghz *g, FILE *f)
{
    const lt_hist *h = &g->service;
    uint64_t total = g->t_end - g->t0;
    char b1[32];
    fprintf(f, "\nSummary:\n");
    if (g->o.name)
        fprintf(f, "  Name:\t%s\n", g->o.name);
    fprintf(f, "  Count:\t%" PRIu64 "\n", g->done);
    lt_ghz__fmt_dur(b1, sizeof(b1), total);
    fprintf(f, "  Total:\t%s\n", b1);
    lt_ghz__fmt_dur(b1, sizeof(b1), h->count ? h->max : 0);
    fprintf(f, "  Slowest:\t%s\n", b1);
    lt_ghz__fmt_dur(b1, sizeof(b1), h->count ? h->min : 0);
    fprintf(f, "  Fastest:\t%s\n", b1);
    lt_ghz__fmt_dur(b1, sizeof(b1), (uint64_t)lt_hist_mean(h));
    fprintf(f, "  Average:\t%s\n", b1);
    fprintf(f, "  Requests/sec:\t%.2f\n", total ? g->done / (total / 1e9) : 0.0);
    fprintf(f, "\nResponse time histogram:\n");
    double marks[11];
    uint64_t counts[11], maxc = 1;
    lt_ghz__buckets(h, marks, counts);
    for (int i = 0; i < 11; i++)
        if (counts[i] > maxc)
            maxc = counts[i];
    for (int i = 0; i < 11 && h->count; i++) {
        int bar = (int)(counts[i] * 40 / maxc);
        fprintf(f, "  %.3f [%" PRIu64 "]\t|", marks[i] / 1e6, counts[i]);
        for (int k = 0; k < bar; k++)
            fputs("∎", f);
        fputc('\n', f);
    }
    fprintf(f, "\nLatency distribution:\n");
    for (size_t i = 0; i < LT_GHZ_NPCTS && h->count; i++) {
        lt_ghz__fmt_dur(b1, sizeof(b1), lt_hist_percentile(h, lt_ghz_pcts[i]));
        fprintf(f, "  %g %% in %s \n", lt_ghz_pcts[i], b1);
    }
    fprintf(f, "\nCorrected latency (from the intended send time%s):\n",
            g->o.rps > 0 ? ", open loop" : "; closed loop without --rps, so equal to the above");
    if (g->corrected.count) {
        static const double cp[] = {50, 90, 99, 99.9, 100};
        for (size_t i = 0; i < 5; i++) {
            lt_ghz__fmt_dur(b1, sizeof(b1), lt_hist_percentile(&g->corrected, cp[i]));
            fprintf(f, "  %s%g %% in %s\n", cp[i] == 100 ? "max " : "", cp[i], b1);
        }
    }
    fprintf(f, "\nStatus code distribution:\n");
    for (int c = 0; c <= 16; c++)
        if (g->code_counts[c])
            fprintf(f, "  [%s]   %" PRIu64 " responses   \n", lt_go_code_name(c),
                    g->code_counts[c]);
    if (g->nerrors) {
        fprintf(f, "\nError distribution:\n");
        for (size_t i = 0; i < g->nerrors; i++)
            fprintf(f, "  [%" PRIu64 "]   %s   \n", g->errors[i].count, g->errors[i].text);
    }
    fprintf(f, "\nEnd reason: %s\n", g->end_reason);
}

static void lt_ghz__iso(char *buf, size_t len, int64_t wall_ns)
{
    time_t s = (time_t)(wall_ns / 1000000000ll);
    struct tm tm;
    gmtime_r(&s, &tm);
    size_t n = strftime(buf, len, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, len - n, ".%09lldZ", (long long)(wall_ns % 1000000000ll));
}

static void lt_ghz__latdist(lt_jw *w, const char *key, const lt_hist *h)
{
    lt_jw_key(w, key);
    lt_jw_arr(w);
    for (size_t i = 0; i < LT_GHZ_NPCTS && h->count; i++) {
        lt_jw_obj(w);
        lt_jw_kdbl(w, "percentage", lt_ghz_pcts[i]);
        lt_jw_kuint(w, "latency", lt_hist_percentile(h, lt_ghz_pcts[i]));
        lt_jw_end_obj(w);
    }
    lt_jw_end_arr(w);
}

static void lt_ghz__json(lt_ghz *g, FILE *f, bool pretty)
{
    const lt_hist *h = &g->service;
    lt_jw w;
    lt_jw_init(&w, f, pretty);
    char ts[64];
    uint64_t total = g->t_end - g->t0;
    lt_jw_obj(&w);
    if (g->o.name)
        lt_jw_kstr(&w, "name", g->o.name);
    lt_ghz__iso(ts, sizeof(ts), g->wall_start);
    lt_jw_kstr(&w, "date", ts);
    lt_jw_kstr(&w, "endReason", g->end_reason);
    lt_jw_key(&w, "options");
    lt_jw_obj(&w);
    lt_jw_kstr(&w, "host", g->o.host);
    lt_jw_kstr(&w, "call", g->m.path + 1);
    lt_jw_kbool(&w, "insecure", g->o.tls.ca_file[0] == '\0');
    lt_jw_kuint(&w, "total", g->o.duration_ms > 0 ? 0 : (uint64_t)g->o.total);
    lt_jw_kint(&w, "concurrency", g->o.concurrency);
    lt_jw_kint(&w, "connections", g->o.connections);
    lt_jw_kdbl(&w, "rps", g->o.rps);
    lt_jw_kint(&w, "duration", g->o.duration_ms * 1000000ll);
    lt_jw_kint(&w, "max-duration", g->o.max_duration_ms * 1000000ll);
    lt_jw_kint(&w, "timeout", g->o.timeout_ms * 1000000ll);
    lt_jw_kint(&w, "dial-timeout", g->o.connect_timeout_ms * 1000000ll);
    lt_jw_key(&w, "data");
    if (g->o.data) {
        cJSON *d = cJSON_Parse(g->o.data);
        char *txt = d ? cJSON_PrintUnformatted(d) : NULL;
        /* Raw JSON, as ghz echoes it. */
        if (txt) {
            if (!w.after_key)
                fputc(',', f);
            w.after_key = false;
            fputs(txt, f);
        } else {
            lt_jw_null(&w);
        }
        free(txt);
        cJSON_Delete(d);
    } else {
        lt_jw_null(&w);
    }
    lt_jw_key(&w, "metadata");
    lt_jw_obj(&w);
    for (size_t i = 0; i < g->nmd; i++)
        lt_jw_kstr(&w, g->md[i].key, g->md[i].value);
    lt_jw_end_obj(&w);
    lt_jw_kint(&w, "CPUs", sysconf(_SC_NPROCESSORS_ONLN));
    lt_jw_end_obj(&w);
    lt_jw_kuint(&w, "count", g->done);
    lt_jw_kuint(&w, "total", total);
    lt_jw_kuint(&w, "average", (uint64_t)lt_hist_mean(h));
    lt_jw_kuint(&w, "fastest", h->count ? h->min : 0);
    lt_jw_kuint(&w, "slowest", h->max);
    lt_jw_kdbl(&w, "rps", total ? g->done / (total / 1e9) : 0.0);
    lt_jw_key(&w, "errorDistribution");
    lt_jw_obj(&w);
    for (size_t i = 0; i < g->nerrors; i++)
        lt_jw_kuint(&w, g->errors[i].text, g->errors[i].count);
    lt_jw_end_obj(&w);
    lt_jw_key(&w, "statusCodeDistribution");
    lt_jw_obj(&w);
    for (int c = 0; c <= 16; c++)
        if (g->code_counts[c])
            lt_jw_kuint(&w, lt_go_code_name(c), g->code_counts[c]);
    lt_jw_end_obj(&w);
    lt_ghz__latdist(&w, "latencyDistribution", h);
    lt_jw_key(&w, "histogram");
    lt_jw_arr(&w);
    if (h->count) {
        double marks[11];
        uint64_t counts[11];
        lt_ghz__buckets(h, marks, counts);
        for (int i = 0; i < 11; i++) {
            lt_jw_obj(&w);
            lt_jw_kdbl(&w, "mark", marks[i] / 1e9);
            lt_jw_kuint(&w, "count", counts[i]);
            lt_jw_kdbl(&w, "frequency", (double)counts[i] / (double)h->count);
            lt_jw_end_obj(&w);
        }
    }
    lt_jw_end_arr(&w);
    lt_jw_key(&w, "details");
    lt_jw_arr(&w);
    for (size_t i = 0; i < g->ndetails; i++) {
        const lt_ghz_detail *d = &g->details[i];
        lt_ghz__iso(ts, sizeof(ts), d->wall_ns);
        lt_jw_obj(&w);
        lt_jw_kstr(&w, "timestamp", ts);
        lt_jw_kuint(&w, "latency", d->latency_ns);
        lt_jw_kstr(&w, "error", d->error >= 0 ? g->errors[d->error].text : "");
        lt_jw_kstr(&w, "status", lt_go_code_name(d->code));
        lt_jw_end_obj(&w);
    }
    lt_jw_end_arr(&w);
    /* Beyond ghz: the open-loop view and p99.9. */
    lt_ghz__latdist(&w, "correctedLatencyDistribution", &g->corrected);
    lt_jw_kuint(&w, "correctedSlowest", g->corrected.max);
    lt_jw_kuint(&w, "p999", lt_hist_percentile(h, 99.9));
    lt_jw_kuint(&w, "correctedP999", lt_hist_percentile(&g->corrected, 99.9));
    lt_jw_end_obj(&w);
    fputc('\n', f);
}

static void lt_ghz__csv(lt_ghz *g, FILE *f)
{
    fprintf(f, "duration (ms),status,error\n");
    for (size_t i = 0; i < g->ndetails; i++) {
        const lt_ghz_detail *d = &g->details[i];
        const char *e = d->error >= 0 ? g->errors[d->error].text : "";
        fprintf(f, "%.2f,%s,", d->latency_ns / 1e6, lt_go_code_name(d->code));
        if (strchr(e, ',') || strchr(e, '"')) {
            fputc('"', f);
            for (const char *p = e; *p; p++) {
                if (*p == '"')
                    fputc('"', f);
                fputc(*p, f);
            }
            fputc('"', f);
        } else {
            fputs(e, f);
        }
        fputc('\n', f);
    }
}

/* ------------------------------------------------------------------ */

int lt_cmd_ghz(int argc, char **argv, lt_stop *stop)
{
    lt_ghz *g = calloc(1, sizeof(*g));
    char err[1024];
    int rc = LT_EXIT_USAGE;
    g->stop = stop;
    lt_mailbox_init(&g->mb);
    int pr = lt_ghz__parse(&g->o, argc, argv, err, sizeof(err));
    if (pr == 1) {
        rc = LT_EXIT_OK;
        goto out;
    }
    if (pr != 0 || lt_ghz__prepare(g, err, sizeof(err)) != 0) {
        fprintf(stderr, "loadtest ghz: %s\n", err);
        goto out;
    }
    if (!g->o.insecure && !g->o.tls.ca_file[0])
        fprintf(stderr, "loadtest ghz: no --cacert given: plaintext (as --insecure)\n");
    FILE *out = stdout;
    if (g->o.output && (out = fopen(g->o.output, "w")) == NULL) {
        fprintf(stderr, "loadtest ghz: cannot write %s: %s\n", g->o.output, strerror(errno));
        goto out;
    }
    lt_hist_init(&g->service, LT_HIST_DEFAULT_SUB_BITS);
    lt_hist_init(&g->corrected, LT_HIST_DEFAULT_SUB_BITS);
    g->slots = calloc((size_t)g->o.concurrency, sizeof(*g->slots));
    for (int i = 0; i < g->o.concurrency; i++) {
        g->slots[i].g = g;
        g->slots[i].next_free = g->free_slots;
        g->free_slots = &g->slots[i];
    }
    g->loops[0] = rpc_loop_start("ghz-0");
    g->loops[1] = rpc_loop_start("ghz-1");
    atomic_store(&stop->wake, &g->mb);
    if (lt_ghz__connect(g, err, sizeof(err)) != 0) {
        fprintf(stderr, "loadtest ghz: %s\n", err);
        rc = LT_EXIT_FAIL;
    } else {
        lt_ghz__drive(g);
        if (!strcmp(g->o.format, "json"))
            lt_ghz__json(g, out, false);
        else if (!strcmp(g->o.format, "pretty"))
            lt_ghz__json(g, out, true);
        else if (!strcmp(g->o.format, "csv"))
            lt_ghz__csv(g, out);
        else
            lt_ghz__summary(g, out);
        rc = LT_EXIT_OK;
    }
    atomic_store(&stop->wake, NULL);
    if (out != stdout)
        fclose(out);
    else
        fflush(out);
    for (int i = 0; i < g->o.connections && g->channels; i++)
        rpc_channel_destroy(g->channels[i]);
    rpc_loop_stop(g->loops[0]);
    rpc_loop_stop(g->loops[1]);
    lt_hist_free(&g->service);
    lt_hist_free(&g->corrected);
out:
    for (size_t i = 0; i < g->npayloads; i++)
        if (g->payloads[i])
            grpc_byte_buffer_destroy(g->payloads[i]);
    free(g->payloads);
    cJSON_Delete(g->md_json);
    free(g->channels);
    free(g->slots);
    free(g->details);
    free(g->errors);
    lt_mailbox_destroy(&g->mb);
    free(g);
    return rc;
}
