/*
 * cfg.c — the declarative option tables of rpc/cfg.h: defaults, then the
 * environment, then command-line flags, each value checked against its
 * option's kind and bounds.
 *
 * Details the header leaves open:
 * - For CFG_INT, CFG_INT64 and CFG_DURATION, min == max == 0 means "no
 *   bounds beyond the field's type".
 * - An environment variable that is set but empty is a value: it empties a
 *   string option and is an error for a number.
 * - "--" ends the flags; everything after it is positional. A lone "-" and
 *   anything starting with a single dash are positional too (header: only a
 *   leading "--" makes a flag).
 * - --help is honoured wherever it appears before "--", even after a bad
 *   flag, and the usage it prints shows the values in effect before the
 *   environment and flags are read (the defaults, or what the caller
 *   pre-filled for options whose def is NULL).
 * - A bool takes its value only as --flag=VALUE; a bare --flag is true and
 *   the next argument is never eaten as its value.
 * - The first table that declares a name owns it.
 */
#include "rpc/cfg.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CFG__ENV_MAX 128

/* env_prefix + name upper-cased with '-' as '_' into buf. Returns 0, or -1
 * when it does not fit. */
static int cfg__env_name(const char *prefix, const char *name, char *buf, size_t len)
{
    size_t n = 0;
    for (const char *p = prefix ? prefix : ""; *p; p++) {
        if (n + 1 >= len)
            return -1;
        buf[n++] = *p;
    }
    for (const char *p = name; *p; p++) {
        if (n + 1 >= len)
            return -1;
        buf[n++] = *p == '-' ? '_' : (char)toupper((unsigned char)*p);
    }
    buf[n] = '\0';
    return 0;
}

int cfg_parse_duration_us(const char *s, long long *us)
{
    /* Digits with at most one '.', then a unit or nothing (milliseconds).
     * Parsed by hand: strtod would take "1e3", "inf", "0x10", " 1". */
    static const struct {
        const char *name;
        long long us;
    } units[] = {{"", 1000},        {"us", 1},           {"ms", 1000},        {"s", 1000000},
                 {"m", 60000000LL}, {"h", 3600000000LL}, {"d", 86400000000LL}};
    if (s == NULL || !isdigit((unsigned char)s[0]))
        return -1;
    unsigned long long whole = 0, frac = 0, frac_div = 1;
    const char *p = s;
    for (; isdigit((unsigned char)*p); p++) {
        if (whole > (ULLONG_MAX - 9) / 10)
            return -1;
        whole = whole * 10 + (unsigned)(*p - '0');
    }
    if (*p == '.') {
        if (!isdigit((unsigned char)p[1]))
            return -1;
        /* Six fraction digits: a microsecond of a second; more are
         * ignored (and keep frac * mult below overflow for every unit). */
        for (p++; isdigit((unsigned char)*p); p++) {
            if (frac_div < 1000000) {
                frac = frac * 10 + (unsigned)(*p - '0');
                frac_div *= 10;
            }
        }
    }
    for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
        if (strcmp(p, units[i].name) != 0)
            continue;
        unsigned long long mult = (unsigned long long)units[i].us;
        if (whole > (unsigned long long)LLONG_MAX / mult)
            return -1;
        unsigned long long v = whole * mult + frac * mult / frac_div;
        if (v > (unsigned long long)LLONG_MAX)
            return -1;
        *us = (long long)v;
        return 0;
    }
    return -1;
}

int cfg_parse_duration(const char *s, long long *ms)
{
    long long us;
    if (cfg_parse_duration_us(s, &us) != 0 || us % 1000 != 0)
        return -1; /* finer than these options can hold: say so, do not round */
    *ms = us / 1000;
    return 0;
}

/* Parses a base-10 integer that must fill the whole string. */
static int cfg__parse_ll(const char *s, long long *out)
{
    if (s[0] == '\0' || isspace((unsigned char)s[0]))
        return -1;
    errno = 0;
    char *end;
    long long v = strtoll(s, &end, 10);
    if (*end != '\0')
        return -1;
    if (errno == ERANGE)
        return -2; /* a number, but out of any range */
    *out = v;
    return 0;
}

static int cfg__parse_bool(const char *s, bool *out)
{
    static const char *const yes[] = {"true", "1", "yes", "on"};
    static const char *const no[] = {"false", "0", "no", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return 0;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return 0;
        }
    }
    return -1;
}

/* The unit a duration option's value and bounds are counted in. */
static const char *cfg__unit(cfg_kind k)
{
    return k == CFG_DURATION_US ? "us" : "ms";
}

/* Bounds of a numeric option: its own, or its type's when both are 0. */
static void cfg__bounds(const cfg_option *o, long long *lo, long long *hi)
{
    bool wide = o->kind == CFG_INT64 || o->kind == CFG_DURATION_US;
    long long tlo = wide ? (long long)INT64_MIN : INT_MIN;
    long long thi = wide ? (long long)INT64_MAX : INT_MAX;
    if (o->kind == CFG_DURATION || o->kind == CFG_DURATION_US)
        tlo = 0;
    if (o->min == 0 && o->max == 0) {
        *lo = tlo;
        *hi = thi;
        return;
    }
    *lo = o->min > tlo ? o->min : tlo;
    *hi = o->max < thi ? o->max : thi;
}

/* Checks a field's recorded size against what its kind writes; a mismatch
 * is a bug in the table, caught before anything is written. */
static int cfg__size_ok(const cfg_option *o)
{
    switch (o->kind) {
    case CFG_INT:
    case CFG_DURATION:
        return o->size == sizeof(int);
    case CFG_INT64:
    case CFG_DURATION_US:
        return o->size == sizeof(int64_t);
    case CFG_BOOL:
        return o->size == sizeof(bool);
    case CFG_STRING:
        return o->size > 0;
    }
    return 0;
}

/* Parses `value` for option o and stores it into target. `src` names where
 * the value came from ("--workers", "SCRABBLE_STORE_WORKERS (environment
 * twin of --workers)", "default of --workers"). Returns CFG_OK, or CFG_ERROR
 * with "<src>: <rule>" in err. */
static int cfg__apply(const cfg_option *o, void *target, const char *value, const char *src,
                      char *err, size_t errlen)
{
    char *field = (char *)target + o->offset;
    long long v = 0, lo, hi;

    if (!cfg__size_ok(o)) {
        snprintf(err, errlen, "%s: option table error (field size %zu does not fit its kind)", src,
                 o->size);
        return CFG_ERROR;
    }
    switch (o->kind) {
    case CFG_STRING: {
        size_t n = strlen(value);
        if (n >= o->size) {
            snprintf(err, errlen, "%s: value is too long (%zu bytes, at most %zu)", src, n,
                     o->size - 1);
            return CFG_ERROR;
        }
        memcpy(field, value, n + 1);
        return CFG_OK;
    }
    case CFG_BOOL: {
        bool b;
        if (cfg__parse_bool(value, &b) != 0) {
            snprintf(err, errlen, "%s: '%s' is not a boolean (true/false/1/0/yes/no/on/off)", src,
                     value);
            return CFG_ERROR;
        }
        memcpy(field, &b, sizeof(b));
        return CFG_OK;
    }
    case CFG_DURATION:
        if (cfg_parse_duration(value, &v) != 0) {
            snprintf(err, errlen,
                     "%s: '%s' is not a duration (use e.g. 250ms, 2s, 4m, 1h or a number of ms)",
                     src, value);
            return CFG_ERROR;
        }
        break;
    case CFG_DURATION_US:
        if (cfg_parse_duration_us(value, &v) != 0) {
            snprintf(err, errlen,
                     "%s: '%s' is not a duration (use e.g. 9500us, 9.5ms, 2s, 1.5h, 30d or a "
                     "number of ms)",
                     src, value);
            return CFG_ERROR;
        }
        break;
    case CFG_INT:
    case CFG_INT64: {
        int rc = cfg__parse_ll(value, &v);
        if (rc == -1) {
            snprintf(err, errlen, "%s: '%s' is not a number", src, value);
            return CFG_ERROR;
        }
        if (rc == -2) {
            cfg__bounds(o, &lo, &hi);
            snprintf(err, errlen, "%s: %s is out of bounds [%lld,%lld]", src, value, lo, hi);
            return CFG_ERROR;
        }
        break;
    }
    }

    cfg__bounds(o, &lo, &hi);
    if (v < lo || v > hi) {
        if (o->kind == CFG_DURATION || o->kind == CFG_DURATION_US)
            snprintf(err, errlen, "%s: %s (%lld %s) is out of bounds [%lld,%lld] %s", src, value, v,
                     cfg__unit(o->kind), lo, hi, cfg__unit(o->kind));
        else
            snprintf(err, errlen, "%s: %s is out of bounds [%lld,%lld]", src, value, lo, hi);
        return CFG_ERROR;
    }
    if (o->kind == CFG_INT64 || o->kind == CFG_DURATION_US) {
        int64_t x = (int64_t)v;
        memcpy(field, &x, sizeof(x));
    } else {
        int x = (int)v;
        memcpy(field, &x, sizeof(x));
    }
    return CFG_OK;
}

/* Finds the option named by name[0..len); the first table wins. */
static const cfg_option *cfg__find(const cfg_table *tables, size_t ntables, const char *name,
                                   size_t len, void **target)
{
    for (size_t t = 0; t < ntables; t++) {
        for (size_t i = 0; i < tables[t].count; i++) {
            const cfg_option *o = &tables[t].options[i];
            if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) {
                *target = tables[t].target;
                return o;
            }
        }
    }
    return NULL;
}

/* Whether o is the first option of that name (later duplicates are
 * shadowed and skipped). */
static bool cfg__owner(const cfg_table *tables, size_t ntables, const cfg_option *o)
{
    void *unused;
    return cfg__find(tables, ntables, o->name, strlen(o->name), &unused) == o;
}

static int cfg__apply_defaults(const cfg_table *tables, size_t ntables, char *err, size_t errlen)
{
    char what[160];
    for (size_t t = 0; t < ntables; t++) {
        for (size_t i = 0; i < tables[t].count; i++) {
            const cfg_option *o = &tables[t].options[i];
            if (o->def == NULL || !cfg__owner(tables, ntables, o))
                continue;
            snprintf(what, sizeof(what), "default of --%s", o->name);
            if (cfg__apply(o, tables[t].target, o->def, what, err, errlen) != CFG_OK)
                return CFG_ERROR;
        }
    }
    return CFG_OK;
}

static int cfg__apply_env(const cfg_table *tables, size_t ntables, const char *prefix, char *err,
                          size_t errlen)
{
    char env[CFG__ENV_MAX];
    char what[CFG__ENV_MAX + 64];
    for (size_t t = 0; t < ntables; t++) {
        for (size_t i = 0; i < tables[t].count; i++) {
            const cfg_option *o = &tables[t].options[i];
            if (!cfg__owner(tables, ntables, o))
                continue;
            if (cfg__env_name(prefix, o->name, env, sizeof(env)) != 0) {
                snprintf(err, errlen, "--%s: environment name too long", o->name);
                return CFG_ERROR;
            }
            const char *value = getenv(env);
            if (value == NULL)
                continue;
            snprintf(what, sizeof(what), "%s (environment twin of --%s)", env, o->name);
            if (cfg__apply(o, tables[t].target, value, what, err, errlen) != CFG_OK)
                return CFG_ERROR;
        }
    }
    return CFG_OK;
}

/* Whether --help appears among the flags (before a "--"). */
static bool cfg__wants_help(int argc, char **argv, int first)
{
    for (int i = first; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0)
            return false;
        if (strcmp(argv[i], "--help") == 0)
            return true;
    }
    return false;
}

static int cfg__add_positional(int idx, char **argv, int *positional, int *npositional, int *count,
                               char *err, size_t errlen)
{
    if (positional == NULL || npositional == NULL) {
        snprintf(err, errlen, "unexpected argument '%s' (options start with --)", argv[idx]);
        return CFG_ERROR;
    }
    if (*count >= *npositional) {
        snprintf(err, errlen, "too many arguments at '%s' (at most %d)", argv[idx], *npositional);
        return CFG_ERROR;
    }
    positional[(*count)++] = idx;
    return CFG_OK;
}

static int cfg__apply_flags(const cfg_table *tables, size_t ntables, int argc, char **argv,
                            int first, int *positional, int *npositional, char *err, size_t errlen)
{
    char what[160];
    int count = 0;
    bool flags_done = false;

    for (int i = first; i < argc; i++) {
        const char *arg = argv[i];
        if (flags_done || strncmp(arg, "--", 2) != 0) {
            if (cfg__add_positional(i, argv, positional, npositional, &count, err, errlen) != 0)
                return CFG_ERROR;
            continue;
        }
        if (arg[2] == '\0') {
            flags_done = true;
            continue;
        }

        const char *name = arg + 2;
        const char *eq = strchr(name, '=');
        size_t name_len = eq ? (size_t)(eq - name) : strlen(name);
        void *target = NULL;
        const cfg_option *o = cfg__find(tables, ntables, name, name_len, &target);
        if (o == NULL) {
            snprintf(err, errlen, "unknown option --%.*s (see --help)", (int)name_len, name);
            return CFG_ERROR;
        }

        const char *value;
        if (eq != NULL) {
            value = eq + 1;
        } else if (o->kind == CFG_BOOL) {
            value = "true"; /* bare --flag */
        } else if (i + 1 < argc) {
            value = argv[++i];
        } else {
            snprintf(err, errlen, "--%s: needs a value (--%s=VALUE or --%s VALUE)", o->name,
                     o->name, o->name);
            return CFG_ERROR;
        }
        snprintf(what, sizeof(what), "--%s", o->name);
        if (cfg__apply(o, target, value, what, err, errlen) != CFG_OK)
            return CFG_ERROR;
    }
    if (npositional != NULL && positional != NULL)
        *npositional = count;
    return CFG_OK;
}

int cfg_load(const cfg_table *tables, size_t ntables, const char *env_prefix, const char *prog,
             int argc, char **argv, int first, int *positional, int *npositional, char *err,
             size_t errlen)
{
    int rc = CFG_ERROR;
    if (errlen > 0)
        err[0] = '\0';

    if (cfg__apply_defaults(tables, ntables, err, errlen) != CFG_OK)
        goto done;
    if (cfg__wants_help(argc, argv, first)) {
        cfg_usage(stdout, prog, tables, ntables, env_prefix);
        fflush(stdout);
        rc = CFG_HELP;
        goto done;
    }
    if (env_prefix != NULL && cfg__apply_env(tables, ntables, env_prefix, err, errlen) != CFG_OK)
        goto done;
    if (cfg__apply_flags(tables, ntables, argc, argv, first, positional, npositional, err,
                         errlen) != CFG_OK)
        goto done;
    rc = CFG_OK;
done:
    return rc;
}

static const char *cfg__kind_meta(cfg_kind k)
{
    switch (k) {
    case CFG_INT:
    case CFG_INT64:
        return "=N";
    case CFG_BOOL:
        return "[=BOOL]";
    case CFG_STRING:
        return "=STRING";
    case CFG_DURATION:
    case CFG_DURATION_US:
        return "=DURATION";
    }
    return "";
}

/* The value currently in the struct, for options without a def. */
static void cfg__current(const cfg_option *o, const void *target, char *buf, size_t len)
{
    const char *field = (const char *)target + o->offset;
    if (!cfg__size_ok(o)) {
        snprintf(buf, len, "?");
        return;
    }
    switch (o->kind) {
    case CFG_STRING:
        snprintf(buf, len, "\"%.*s\"", (int)strnlen(field, o->size), field);
        break;
    case CFG_BOOL: {
        bool b;
        memcpy(&b, field, sizeof(b));
        snprintf(buf, len, "%s", b ? "true" : "false");
        break;
    }
    case CFG_INT64:
    case CFG_DURATION_US: {
        int64_t v;
        memcpy(&v, field, sizeof(v));
        snprintf(buf, len, o->kind == CFG_DURATION_US ? "%" PRId64 "us" : "%" PRId64, v);
        break;
    }
    case CFG_INT:
    case CFG_DURATION: {
        int v;
        memcpy(&v, field, sizeof(v));
        snprintf(buf, len, o->kind == CFG_DURATION ? "%dms" : "%d", v);
        break;
    }
    }
}

void cfg_usage(FILE *out, const char *prog, const cfg_table *tables, size_t ntables,
               const char *env_prefix)
{
    char flag[96], env[CFG__ENV_MAX], cur[160];
    fprintf(out, "Usage: %s [options]\n\n", prog ? prog : "prog");
    fprintf(out, "Each option can also be set by its environment variable; a flag wins over\n"
                 "the environment, which wins over the default. Durations take ms, s, m, h\n"
                 "(and, where the range is in us, fractions and us, e.g. 9.5ms, and d).\n\n");
    for (size_t t = 0; t < ntables; t++) {
        for (size_t i = 0; i < tables[t].count; i++) {
            const cfg_option *o = &tables[t].options[i];
            if (!cfg__owner(tables, ntables, o))
                continue;
            snprintf(flag, sizeof(flag), "--%s%s", o->name, cfg__kind_meta(o->kind));
            fprintf(out, "  %-34s", flag);
            if (env_prefix != NULL && cfg__env_name(env_prefix, o->name, env, sizeof(env)) == 0)
                fprintf(out, " env %s", env);
            fprintf(out, "\n      %s\n", o->help ? o->help : "");
            if (o->def != NULL && o->kind == CFG_STRING)
                snprintf(cur, sizeof(cur), "\"%s\"", o->def);
            else if (o->def != NULL)
                snprintf(cur, sizeof(cur), "%s", o->def);
            else
                cfg__current(o, tables[t].target, cur, sizeof(cur));
            fprintf(out, "      default: %s", cur);
            if ((o->kind == CFG_INT || o->kind == CFG_INT64 || o->kind == CFG_DURATION ||
                 o->kind == CFG_DURATION_US) &&
                !(o->min == 0 && o->max == 0))
                fprintf(out, "  range: [%lld,%lld]%s%s", o->min, o->max,
                        o->kind == CFG_INT || o->kind == CFG_INT64 ? "" : " ",
                        o->kind == CFG_INT || o->kind == CFG_INT64 ? "" : cfg__unit(o->kind));
            fputc('\n', out);
        }
    }
    fprintf(out, "  %-34s\n      print this help and exit\n", "--help");
}
