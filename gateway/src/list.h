/*
 * list.h — the one splitter of the gateway's comma-list options (--games,
 * --trusted-proxies): items are trimmed of spaces and tabs; an empty item
 * is returned as such so the caller can refuse it.
 */
#ifndef GW_LIST_H
#define GW_LIST_H

#include <stddef.h>

/* The next item of the list at *cursor: returns its start and sets *len
 * (trimmed); moves *cursor past the comma, or to NULL after the last item.
 * Call only while *cursor is not NULL. */
const char *gw_list_item(const char **cursor, size_t *len);

#endif
