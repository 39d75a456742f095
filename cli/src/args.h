/*
 * args.h — small pure parsers of what people type: a shell line split into
 * words, identifiers, exchange tiles.
 */
#ifndef CLI_ARGS_H
#define CLI_ARGS_H

#include <stddef.h>
#include <stdint.h>

/* Splits `line` in place into words: blanks separate words; "double" or
 * 'single' quotes group (a backslash escapes the next character outside
 * single quotes). Fills argv[0..*argc) with pointers into line. Returns 0,
 * or -1 with a message in err (unbalanced quote, more than max words). */
int cli_split_line(char *line, char **argv, int max, int *argc, char *err, size_t errlen);

/* A positive decimal id ("12", "#12" is accepted too). Returns 0 or -1. */
int cli_parse_id(const char *s, int64_t *id);

/* Exchange tiles: letters and '?' (a blank), upper-cased into out (size
 * outlen). Returns 0, or -1 with a message. */
int cli_parse_tiles(const char *s, char *out, size_t outlen, char *err, size_t errlen);

#endif
