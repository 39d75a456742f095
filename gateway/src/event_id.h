/*
 * event_id.h — the client-facing form of an event id (Event.event_id,
 * SubscribeRequest.after_event_id): decimal digits of a positive 64-bit
 * number, opaque to clients. Pure.
 */
#ifndef GW_EVENT_ID_H
#define GW_EVENT_ID_H

#include <stdint.h>

/* "" (or NULL) -> -1 (no id: live events only); 1..18 decimal digits ->
 * the number (18 digits always fit an int64; ids that long are centuries
 * away). Returns 0, or -1 when malformed (signs, spaces, other characters,
 * more digits). */
int gw_event_id_parse(const char *s, int64_t *out);

#endif
