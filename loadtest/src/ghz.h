/*
 * ghz.h — what the ghz driver (ghz.c) and its report writer (ghz_report.c)
 * share: the run's state. Private to those two files.
 */
#ifndef LT_GHZ_H
#define LT_GHZ_H

#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>

#include "ghz_opts.h"
#include "hist.h"
#include "mailbox.h"
#include "methods.h"
#include "lt.h"
#include "rpc/rpc.h"

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

/* Writes the finished run's report to f in g->o.format (summary, json,
 * pretty or csv), as ghz lays each out. */
void lt_ghz_report(lt_ghz *g, FILE *f);

#endif
