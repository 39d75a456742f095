/*
 * log.h — levelled one-line `key=value` logs to stderr. The level is checked
 * before anything is formatted, so a disabled debug line costs one compare.
 *
 *   log_info("call_done", "method=%s code=%d ms=%.2f", m, code, ms);
 *   -> ts=2026-12-02T13:00:00.123Z level=info svc=store event=call_done method=... code=0 ms=0.41
 */
#ifndef RPC_LOG_H
#define RPC_LOG_H

enum log_level {
    LOG_LEVEL_DEBUG = 0,
    LOG_LEVEL_INFO,
    LOG_LEVEL_WARN,
    LOG_LEVEL_ERROR,
    LOG_LEVEL_OFF
};

/* The process's log threshold and service label, set once at start. */
extern int log_threshold;
void log_set_service(const char *svc);
/* "debug" | "info" | "warn" | "error" | "off" -> level; -1 if unknown. */
int log_level_parse(const char *name);

void log_emit(int level, const char *event, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define log_at(lvl, event, ...)                                                                    \
    do {                                                                                           \
        if ((lvl) >= log_threshold)                                                                \
            log_emit((lvl), (event), __VA_ARGS__);                                                 \
    } while (0)
#define log_debug(event, ...) log_at(LOG_LEVEL_DEBUG, event, __VA_ARGS__)
#define log_info(event, ...) log_at(LOG_LEVEL_INFO, event, __VA_ARGS__)
#define log_warn(event, ...) log_at(LOG_LEVEL_WARN, event, __VA_ARGS__)
#define log_error(event, ...) log_at(LOG_LEVEL_ERROR, event, __VA_ARGS__)

#endif
