/*
 * jsonw.h — a streaming JSON writer to a FILE: reports with millions of
 * detail rows are written as they are walked, never built in memory.
 * Commas are tracked per nesting level.
 */
#ifndef LT_JSONW_H
#define LT_JSONW_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

typedef struct lt_jw {
    FILE *f;
    int depth;
    bool first[64];
    bool after_key;
    bool pretty;
} lt_jw;

void lt_jw_init(lt_jw *w, FILE *f, bool pretty);
void lt_jw_obj(lt_jw *w); /* { */
void lt_jw_end_obj(lt_jw *w);
void lt_jw_arr(lt_jw *w); /* [ */
void lt_jw_end_arr(lt_jw *w);
void lt_jw_key(lt_jw *w, const char *k);
void lt_jw_str(lt_jw *w, const char *s);
void lt_jw_int(lt_jw *w, int64_t v);
void lt_jw_uint(lt_jw *w, uint64_t v);
void lt_jw_dbl(lt_jw *w, double v); /* non-finite -> 0 */
void lt_jw_bool(lt_jw *w, bool v);
void lt_jw_null(lt_jw *w);
/* key + value shorthands */
void lt_jw_kstr(lt_jw *w, const char *k, const char *s);
void lt_jw_kint(lt_jw *w, const char *k, int64_t v);
void lt_jw_kuint(lt_jw *w, const char *k, uint64_t v);
void lt_jw_kdbl(lt_jw *w, const char *k, double v);
void lt_jw_kbool(lt_jw *w, const char *k, bool v);

#endif
