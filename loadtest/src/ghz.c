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
#include "ghz.h"
#include "hist.h"
#include "json2pb.h"
#include "jsonw.h"
#include "lt.h"
#include "mailbox.h"
#include "methods.h"
#include "rpc/cfg.h"
#include "rpc/rpc.h"

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

int lt_cmd_ghz(int argc, char **argv, lt_stop *stop)
{
    lt_ghz *g = calloc(1, sizeof(*g));
    char err[1024];
    int rc = LT_EXIT_USAGE;
    g->stop = stop;
    lt_mailbox_init(&g->mb);
    int pr = lt_ghz_opts_parse(&g->o, argc, argv, err, sizeof(err));
    if (pr == LT_GHZ_OPTS_HELP) {
        lt_ghz_opts_usage(stdout);
        rc = LT_EXIT_OK;
        goto out;
    }
    if (pr != LT_GHZ_OPTS_OK || lt_ghz__prepare(g, err, sizeof(err)) != 0) {
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
        lt_ghz_report(g, out);
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
