/*
 * ghz_opts.h — `loadtest ghz`'s command line: ghz's flags (getopt_long), its
 * defaults and the checks that need no network. A pure parser, so the unit
 * tests reach every flag and every refusal.
 */
#ifndef LT_GHZ_OPTS_H
#define LT_GHZ_OPTS_H

#include <stdbool.h>
#include <stdio.h>

#include "rpc/rpc.h"

typedef struct lt_ghz_opts {
    char call[160];
    char host[160];
    bool insecure;
    int concurrency;
    long long total;
    long long duration_ms;     /* -z; 0: none (-n bounds the run) */
    long long max_duration_ms; /* -x */
    double rps;
    int connections;
    const char *data;      /* -d (points into argv) */
    const char *data_file; /* -D */
    const char *metadata;  /* -m */
    const char *format;    /* -O: summary|json|pretty|csv */
    const char *output;    /* -o */
    long long timeout_ms;  /* -t */
    long long connect_timeout_ms;
    const char *name;
    rpc_tls_config tls;
} lt_ghz_opts;

enum { LT_GHZ_OPTS_OK = 0, LT_GHZ_OPTS_HELP = 1, LT_GHZ_OPTS_ERROR = -1 };

/* Parses argv[1..argc) (argv[0] is the mode's name) into *o. Returns
 * LT_GHZ_OPTS_OK, LT_GHZ_OPTS_HELP (-h: the caller prints the usage) or
 * LT_GHZ_OPTS_ERROR with a message in err. Durations take a unit, as
 * ghz's Go durations do ("500ms", "10s", "1m"); the only unitless one is 0.
 * Strings in *o point into argv. May reorder argv (getopt_long). */
int lt_ghz_opts_parse(lt_ghz_opts *o, int argc, char **argv, char *err, size_t errlen);

void lt_ghz_opts_usage(FILE *f);

#endif
