/*
 * stats.c — see stats.h.
 */
#include "stats.h"

#include <stdio.h>
#include <string.h>

int lt_opstats_init(lt_opstats *s, const char *name)
{
    memset(s, 0, sizeof(*s));
    snprintf(s->name, sizeof(s->name), "%s", name);
    if (lt_hist_init(&s->corrected, LT_HIST_DEFAULT_SUB_BITS) != 0)
        return -1;
    if (lt_hist_init(&s->service, LT_HIST_DEFAULT_SUB_BITS) != 0) {
        lt_hist_free(&s->corrected);
        return -1;
    }
    return 0;
}

void lt_opstats_free(lt_opstats *s)
{
    lt_hist_free(&s->corrected);
    lt_hist_free(&s->service);
}

void lt_opstats_reset(lt_opstats *s)
{
    lt_hist_reset(&s->corrected);
    lt_hist_reset(&s->service);
    s->count = s->ok = s->transport = s->other_outcomes = 0;
    s->noutcomes = 0;
}

bool lt_status_is_transport(int code, const char *reason, const char *message)
{
    if (code == 0)
        return false;
    if (reason == NULL || reason[0] == '\0')
        return true;
    /* The runtime's own verdict when the core failed the batch. */
    return message && strcmp(message, "call failed in transport") == 0;
}

static void lt_opstats__outcome(lt_opstats *s, int code, const char *reason, uint64_t n)
{
    if (reason == NULL)
        reason = "";
    for (int i = 0; i < s->noutcomes; i++) {
        if (s->outcomes[i].code == code && strcmp(s->outcomes[i].reason, reason) == 0) {
            s->outcomes[i].count += n;
            return;
        }
    }
    if (s->noutcomes == LT_STATS_MAX_OUTCOMES) {
        s->other_outcomes += n;
        return;
    }
    lt_outcome *o = &s->outcomes[s->noutcomes++];
    o->code = code;
    snprintf(o->reason, sizeof(o->reason), "%s", reason);
    o->count = n;
}

void lt_opstats_record(lt_opstats *s, int code, const char *reason, bool transport,
                       uint64_t intended_ns, uint64_t sent_ns, uint64_t done_ns)
{
    if (intended_ns > sent_ns)
        intended_ns = sent_ns;
    if (done_ns < sent_ns)
        done_ns = sent_ns;
    s->count++;
    if (code == 0)
        s->ok++;
    if (transport)
        s->transport++;
    lt_hist_record(&s->corrected, done_ns - intended_ns);
    lt_hist_record(&s->service, done_ns - sent_ns);
    lt_opstats__outcome(s, code, code == 0 ? "" : reason, 1);
}

int lt_opstats_merge(lt_opstats *dst, const lt_opstats *src)
{
    if (lt_hist_merge(&dst->corrected, &src->corrected) != 0 ||
        lt_hist_merge(&dst->service, &src->service) != 0)
        return -1;
    dst->count += src->count;
    dst->ok += src->ok;
    dst->transport += src->transport;
    dst->other_outcomes += src->other_outcomes;
    for (int i = 0; i < src->noutcomes; i++)
        lt_opstats__outcome(dst, src->outcomes[i].code, src->outcomes[i].reason,
                            src->outcomes[i].count);
    return 0;
}

uint64_t lt_opstats_code_count(const lt_opstats *s, int code)
{
    uint64_t n = 0;
    for (int i = 0; i < s->noutcomes; i++)
        if (s->outcomes[i].code == code)
            n += s->outcomes[i].count;
    return n;
}
