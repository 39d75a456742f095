/*
 * ghz_opts.c — see ghz_opts.h. Each flag is listed once, in the long-option
 * table; the short letters are the same table's `val`s.
 */
#include "ghz_opts.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "rpc/cfg.h"

/* Long-only options get values past the char range. */
enum {
    OPT_CALL = 256,
    OPT_CONNECTIONS,
    OPT_CONNECT_TIMEOUT,
    OPT_NAME,
    OPT_INSECURE,
    OPT_CACERT,
    OPT_CERT,
    OPT_KEY,
    OPT_CNAME,
    OPT_IGNORED, /* ghz flags accepted for compatibility, no effect */
};

static const struct option lt_ghz_opts__long[] = {
    {"call", required_argument, NULL, OPT_CALL},
    {"concurrency", required_argument, NULL, 'c'},
    {"total", required_argument, NULL, 'n'},
    {"duration", required_argument, NULL, 'z'},
    {"max-duration", required_argument, NULL, 'x'},
    {"rps", required_argument, NULL, 'r'},
    {"connections", required_argument, NULL, OPT_CONNECTIONS},
    {"data", required_argument, NULL, 'd'},
    {"data-file", required_argument, NULL, 'D'},
    {"metadata", required_argument, NULL, 'm'},
    {"format", required_argument, NULL, 'O'},
    {"output", required_argument, NULL, 'o'},
    {"timeout", required_argument, NULL, 't'},
    {"connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT},
    {"name", required_argument, NULL, OPT_NAME},
    {"insecure", no_argument, NULL, OPT_INSECURE},
    {"cacert", required_argument, NULL, OPT_CACERT},
    {"cert", required_argument, NULL, OPT_CERT},
    {"key", required_argument, NULL, OPT_KEY},
    {"cname", required_argument, NULL, OPT_CNAME},
    {"cpus", required_argument, NULL, OPT_IGNORED},
    {"skipFirst", required_argument, NULL, OPT_IGNORED},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};
static const char lt_ghz_opts__short[] = ":c:n:z:x:r:d:D:m:O:o:t:h";

void lt_ghz_opts_usage(FILE *f)
{
    fprintf(f, "usage: loadtest ghz --call pkg.Service/Method [options] HOST:PORT\n"
               "  --call NAME            method, e.g. grpc.health.v1.Health/Check\n"
               "  -c, --concurrency N    workers (default 50)\n"
               "  -n, --total N          requests (default 200; ignored with -z)\n"
               "  -z, --duration D       send for this long (e.g. 10s)\n"
               "  -x, --max-duration D   hard bound on the whole run (default 10m)\n"
               "  -r, --rps R            open-loop rate (0: as fast as the workers go)\n"
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
               "  --name NAME            a label for the report\n"
               "Durations take a unit: us, ms, s, m, h (e.g. 500ms, 10s, 1.5m).\n");
}

/* A duration with its unit, through the tree's one duration parser. A bare
 * number is refused (ghz's Go durations need a unit) rather than guessed. */
static int lt_ghz_opts__dur(const char *flag, const char *v, long long *ms, char *err,
                            size_t errlen)
{
    long long us;
    size_t n = strlen(v);
    bool unitless = n > 0 && strspn(v, "0123456789.") == n;
    if (strcmp(v, "0") == 0) {
        *ms = 0;
        return 0;
    }
    if (unitless || cfg_parse_duration_us(v, &us) != 0 || us < 0) {
        snprintf(err, errlen, "%s: '%s' is not a duration with a unit (e.g. 500ms, 10s, 1m)", flag,
                 v);
        return -1;
    }
    *ms = (us + 999) / 1000;
    return 0;
}

static int lt_ghz_opts__num(const char *flag, const char *v, long long min, long long max,
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

/* The flag as the user wrote it, for messages. */
static const char *lt_ghz_opts__flag(int c, char *buf, size_t len)
{
    for (const struct option *o = lt_ghz_opts__long; o->name; o++)
        if (o->val == c) {
            if (c < 256)
                snprintf(buf, len, "-%c/--%s", c, o->name);
            else
                snprintf(buf, len, "--%s", o->name);
            return buf;
        }
    snprintf(buf, len, "-%c", c);
    return buf;
}

/* Checks what only the whole command line can tell. */
static int lt_ghz_opts__check(lt_ghz_opts *o, char *err, size_t errlen)
{
    if (!o->host[0]) {
        snprintf(err, errlen, "no host given (e.g. 127.0.0.1:7000)");
        return LT_GHZ_OPTS_ERROR;
    }
    if (strcmp(o->format, "summary") && strcmp(o->format, "json") && strcmp(o->format, "pretty") &&
        strcmp(o->format, "csv")) {
        snprintf(err, errlen, "-O: unknown format '%s' (summary, json, pretty, csv)", o->format);
        return LT_GHZ_OPTS_ERROR;
    }
    if (o->connections > o->concurrency) {
        snprintf(err, errlen, "--connections (%d) cannot exceed -c (%d)", o->connections,
                 o->concurrency);
        return LT_GHZ_OPTS_ERROR;
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
        return LT_GHZ_OPTS_ERROR;
    }
    return LT_GHZ_OPTS_OK;
}

int lt_ghz_opts_parse(lt_ghz_opts *o, int argc, char **argv, char *err, size_t errlen)
{
    memset(o, 0, sizeof(*o));
    o->concurrency = 50;
    o->total = 200;
    o->connections = 1;
    o->format = "summary";
    o->timeout_ms = 20000;
    o->connect_timeout_ms = 10000;
    o->max_duration_ms = 600000;

    char flag[48];
    long long n;
    int c;
    opterr = 0; /* our messages, in err */
    optind = 0; /* GNU: start afresh (the parser may run more than once) */
    while ((c = getopt_long(argc, argv, lt_ghz_opts__short, lt_ghz_opts__long, NULL)) != -1) {
        const char *v = optarg;
        const char *f = lt_ghz_opts__flag(c, flag, sizeof flag);
        switch (c) {
        case 'h':
            return LT_GHZ_OPTS_HELP;
        case '?':
            if (optopt)
                snprintf(err, errlen, "unknown flag '-%c'", optopt);
            else
                snprintf(err, errlen, "unknown flag '%s'", argv[optind - 1]);
            return LT_GHZ_OPTS_ERROR;
        case ':':
            snprintf(err, errlen, "%s needs a value", argv[optind - 1]);
            return LT_GHZ_OPTS_ERROR;
        case OPT_CALL:
            snprintf(o->call, sizeof(o->call), "%s", v);
            break;
        case 'c':
            if (lt_ghz_opts__num(f, v, 1, 100000, &n, err, errlen))
                return LT_GHZ_OPTS_ERROR;
            o->concurrency = (int)n;
            break;
        case 'n':
            if (lt_ghz_opts__num(f, v, 1, 1000000000LL, &o->total, err, errlen))
                return LT_GHZ_OPTS_ERROR;
            break;
        case 'z':
            if (lt_ghz_opts__dur(f, v, &o->duration_ms, err, errlen))
                return LT_GHZ_OPTS_ERROR;
            break;
        case 'x':
            if (lt_ghz_opts__dur(f, v, &o->max_duration_ms, err, errlen))
                return LT_GHZ_OPTS_ERROR;
            break;
        case 'r': {
            char *end;
            o->rps = strtod(v, &end);
            if (end == v || *end || !(o->rps >= 0 && o->rps <= 10e6)) {
                snprintf(err, errlen, "%s: '%s' is not a rate in 0..10000000", f, v);
                return LT_GHZ_OPTS_ERROR;
            }
            break;
        }
        case OPT_CONNECTIONS:
            if (lt_ghz_opts__num(f, v, 1, 19000, &n, err, errlen))
                return LT_GHZ_OPTS_ERROR;
            o->connections = (int)n;
            break;
        case 'd':
            o->data = v;
            break;
        case 'D':
            o->data_file = v;
            break;
        case 'm':
            o->metadata = v;
            break;
        case 'O':
            o->format = v;
            break;
        case 'o':
            o->output = v;
            break;
        case 't':
            if (lt_ghz_opts__dur(f, v, &o->timeout_ms, err, errlen))
                return LT_GHZ_OPTS_ERROR;
            break;
        case OPT_CONNECT_TIMEOUT:
            if (lt_ghz_opts__dur(f, v, &o->connect_timeout_ms, err, errlen))
                return LT_GHZ_OPTS_ERROR;
            break;
        case OPT_NAME:
            o->name = v;
            break;
        case OPT_INSECURE:
            o->insecure = true;
            break;
        case OPT_CACERT:
            snprintf(o->tls.ca_file, sizeof(o->tls.ca_file), "%s", v);
            break;
        case OPT_CERT:
            snprintf(o->tls.cert_file, sizeof(o->tls.cert_file), "%s", v);
            break;
        case OPT_KEY:
            snprintf(o->tls.key_file, sizeof(o->tls.key_file), "%s", v);
            break;
        case OPT_CNAME:
            snprintf(o->tls.server_name, sizeof(o->tls.server_name), "%s", v);
            break;
        case OPT_IGNORED:
            break;
        }
    }
    for (int i = optind; i < argc; i++) {
        if (o->host[0]) {
            snprintf(err, errlen, "unexpected argument '%s' (host already '%s')", argv[i], o->host);
            return LT_GHZ_OPTS_ERROR;
        }
        snprintf(o->host, sizeof(o->host), "%s", argv[i]);
    }
    return lt_ghz_opts__check(o, err, errlen);
}
