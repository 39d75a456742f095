/*
 * cfg.h — declarative configuration. Each binary describes its options in a
 * table: name (the flag, --name=value or --name value), kind, where the value
 * goes (offset into a struct), bounds, default and help. Every option has an
 * environment twin: the binary's prefix + the name upper-cased with '-' as
 * '_' (prefix "SCRABBLE_STORE_" + "batch-max" -> SCRABBLE_STORE_BATCH_MAX).
 * Precedence: flag > environment > default.
 */
#ifndef RPC_CFG_H
#define RPC_CFG_H

#include <stddef.h>
#include <stdio.h>

typedef enum cfg_kind {
    CFG_INT,         /* int; min/max inclusive */
    CFG_INT64,       /* int64_t */
    CFG_BOOL,        /* bool: true/false/1/0/yes/no/on/off; a bare --flag is true */
    CFG_STRING,      /* char[size]; over-long values are an error */
    CFG_DURATION,    /* int milliseconds; accepts "250ms", "2s", "4m", "1h" or a bare ms count */
    CFG_DURATION_US, /* int64_t microseconds; also "9.5ms", "9500us", "30d"; min/max in us */
} cfg_kind;

typedef struct cfg_option {
    const char *name;
    cfg_kind kind;
    size_t offset; /* into the table's target struct */
    size_t size;   /* CFG_STRING: the buffer's size */
    long long min, max;
    const char *def; /* NULL: keep the value already in the struct */
    const char *help;
} cfg_option;

#define CFG_INT_OPT(st, field, name, min, max, def, help)                                          \
    {                                                                                              \
        name, CFG_INT, offsetof(st, field), sizeof(((st *)0)->field), min, max, def, help          \
    }
#define CFG_INT64_OPT(st, field, name, min, max, def, help)                                        \
    {                                                                                              \
        name, CFG_INT64, offsetof(st, field), sizeof(((st *)0)->field), min, max, def, help        \
    }
#define CFG_BOOL_OPT(st, field, name, def, help)                                                   \
    {                                                                                              \
        name, CFG_BOOL, offsetof(st, field), sizeof(((st *)0)->field), 0, 1, def, help             \
    }
#define CFG_STR_OPT(st, field, name, def, help)                                                    \
    {                                                                                              \
        name, CFG_STRING, offsetof(st, field), sizeof(((st *)0)->field), 0, 0, def, help           \
    }
#define CFG_DUR_OPT(st, field, name, min, max, def, help)                                          \
    {                                                                                              \
        name, CFG_DURATION, offsetof(st, field), sizeof(((st *)0)->field), min, max, def, help     \
    }
#define CFG_DURUS_OPT(st, field, name, min, max, def, help)                                        \
    {                                                                                              \
        name, CFG_DURATION_US, offsetof(st, field), sizeof(((st *)0)->field), min, max, def, help  \
    }

/* One table and the struct it fills. */
typedef struct cfg_table {
    const cfg_option *options;
    size_t count;
    void *target;
} cfg_table;

enum { CFG_OK = 0, CFG_ERROR = -1, CFG_HELP = 1 };

/* Applies defaults, then the environment, then argv[first..argc) flags.
 * Returns CFG_OK; CFG_HELP when --help was given (usage already printed to
 * stdout); CFG_ERROR with a message naming the option and the rule broken in
 * err. Arguments that are not flags (no leading "--") are left alone and
 * their indexes stored in positional[] (up to *npositional, updated) when
 * positional is not NULL; otherwise they are an error. */
int cfg_load(const cfg_table *tables, size_t ntables, const char *env_prefix, const char *prog,
             int argc, char **argv, int first, int *positional, int *npositional, char *err,
             size_t errlen);

/* Prints every option: flag, env twin, default, bounds, help. */
void cfg_usage(FILE *out, const char *prog, const cfg_table *tables, size_t ntables,
               const char *env_prefix);

/* Parses a duration: a number, maybe with a fraction, and a unit — us, ms,
 * s, m, h or d — or none for milliseconds: "250ms", "9.5ms", "9500us",
 * "2s", "1.5h", "30d", "1500". Returns 0 and *us, or -1. */
int cfg_parse_duration_us(const char *s, long long *us);

/* The same in whole milliseconds (CFG_DURATION options): a duration with a
 * part finer than a millisecond is refused, not rounded. Returns 0 and
 * *ms, or -1. */
int cfg_parse_duration(const char *s, long long *ms);

/* The options of rpc_server_config (listen, metrics-listen, workers,
 * max-message-bytes, max-concurrent-streams, keepalive, shutdown-grace,
 * stream-queue-limit, tls-cert, tls-key, tls-ca, tls-server-name, and the
 * peer-tls-* twins for calls to other services), all with
 * def NULL: fill the struct with rpc_server_config_defaults first.
 * The log level is not in this table (no kind writes an enum): a service
 * declares `char log_level[16]` in its own config struct with
 * CFG_STR_OPT(..., "log-level", "info", ...) and, after cfg_load, sets
 * log_threshold = log_level_parse(cfg.log_level), failing when it is -1. */
extern const cfg_option rpc_server_cfg_options[];
extern const size_t rpc_server_cfg_options_count;

#endif
