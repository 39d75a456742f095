/*
 * jsonw.c — see jsonw.h.
 */
#include "jsonw.h"

#include <inttypes.h>
#include <math.h>

void lt_jw_init(lt_jw *w, FILE *f, bool pretty)
{
    w->f = f;
    w->depth = 0;
    w->first[0] = true;
    w->after_key = false;
    w->pretty = pretty;
}

static void lt_jw__indent(lt_jw *w)
{
    if (!w->pretty)
        return;
    fputc('\n', w->f);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->f);
}

/* Before any value: the comma and indent, unless it follows its key. */
static void lt_jw__pre(lt_jw *w)
{
    if (w->after_key) {
        w->after_key = false;
        return;
    }
    if (!w->first[w->depth])
        fputc(',', w->f);
    w->first[w->depth] = false;
    if (w->depth > 0)
        lt_jw__indent(w);
}

static void lt_jw__open(lt_jw *w, char c)
{
    lt_jw__pre(w);
    fputc(c, w->f);
    if (w->depth < 63)
        w->depth++;
    w->first[w->depth] = true;
}

static void lt_jw__close(lt_jw *w, char c)
{
    bool empty = w->first[w->depth];
    if (w->depth > 0)
        w->depth--;
    if (!empty)
        lt_jw__indent(w);
    fputc(c, w->f);
}

void lt_jw_obj(lt_jw *w)
{
    lt_jw__open(w, '{');
}
void lt_jw_end_obj(lt_jw *w)
{
    lt_jw__close(w, '}');
}
void lt_jw_arr(lt_jw *w)
{
    lt_jw__open(w, '[');
}
void lt_jw_end_arr(lt_jw *w)
{
    lt_jw__close(w, ']');
}

static void lt_jw__esc(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++) {
        switch (*p) {
        case '"':
            fputs("\\\"", f);
            break;
        case '\\':
            fputs("\\\\", f);
            break;
        case '\n':
            fputs("\\n", f);
            break;
        case '\r':
            fputs("\\r", f);
            break;
        case '\t':
            fputs("\\t", f);
            break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else
                fputc(*p, f);
        }
    }
    fputc('"', f);
}

void lt_jw_key(lt_jw *w, const char *k)
{
    lt_jw__pre(w);
    lt_jw__esc(w->f, k);
    fputs(w->pretty ? ": " : ":", w->f);
    w->after_key = true;
}

void lt_jw_str(lt_jw *w, const char *s)
{
    lt_jw__pre(w);
    lt_jw__esc(w->f, s);
}
void lt_jw_int(lt_jw *w, int64_t v)
{
    lt_jw__pre(w);
    fprintf(w->f, "%" PRId64, v);
}
void lt_jw_uint(lt_jw *w, uint64_t v)
{
    lt_jw__pre(w);
    fprintf(w->f, "%" PRIu64, v);
}
void lt_jw_dbl(lt_jw *w, double v)
{
    lt_jw__pre(w);
    if (!isfinite(v))
        v = 0;
    fprintf(w->f, "%.17g", v);
}
void lt_jw_bool(lt_jw *w, bool v)
{
    lt_jw__pre(w);
    fputs(v ? "true" : "false", w->f);
}
void lt_jw_null(lt_jw *w)
{
    lt_jw__pre(w);
    fputs("null", w->f);
}
void lt_jw_kstr(lt_jw *w, const char *k, const char *s)
{
    lt_jw_key(w, k);
    lt_jw_str(w, s);
}
void lt_jw_kint(lt_jw *w, const char *k, int64_t v)
{
    lt_jw_key(w, k);
    lt_jw_int(w, v);
}
void lt_jw_kuint(lt_jw *w, const char *k, uint64_t v)
{
    lt_jw_key(w, k);
    lt_jw_uint(w, v);
}
void lt_jw_kdbl(lt_jw *w, const char *k, double v)
{
    lt_jw_key(w, k);
    lt_jw_dbl(w, v);
}
void lt_jw_kbool(lt_jw *w, const char *k, bool v)
{
    lt_jw_key(w, k);
    lt_jw_bool(w, v);
}
