/* Internal declarations shared by the solver's source files (prefix solver__). */
#ifndef SOLVER_INTERNAL_H
#define SOLVER_INTERNAL_H

#include "solver.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* KWG node: one 32-bit word.  Sibling lists are contiguous runs of nodes
 * sorted by tile, the last one flagged IS_END.  ARC is the index of the first
 * node of the child list (0 = no children; node 0 is never a child).
 * Node 0's arc is the DAWG root list, node 1's arc the GADDAG root list.
 * Tile 0 in the GADDAG is the separator between the reversed prefix and the
 * suffix. */
#define SOLVER__ARC_MASK 0x3fffffu
#define SOLVER__IS_END (1u << 22)
#define SOLVER__ACCEPTS (1u << 23)
#define SOLVER__TILE_SHIFT 24
#define SOLVER__ARC(n) ((n)&SOLVER__ARC_MASK)
#define SOLVER__TILE(n) ((n) >> SOLVER__TILE_SHIFT)
#define SOLVER__SEP 0
#define SOLVER__NM_MASK(e) ((uint32_t)((e) >> 32))
#define SOLVER__NM_NODE(e) ((uint32_t)(e))
/* Child with tile t of the list at idx whose mask is have (bit t set). */
#define SOLVER__NM_CHILD(nm, idx, have, t)                                                         \
    SOLVER__NM_NODE((nm)[(idx) + (uint32_t)__builtin_popcount((have) & ((1u << (t)) - 1))])

/* File layout: header (little-endian) followed by node_count uint32 nodes. */
#define SOLVER__MAGIC "SKWG"
#define SOLVER__VERSION 1u
typedef struct solver__file_header {
    char magic[4];
    uint32_t version;
    uint32_t node_count;
    uint32_t word_count;
    uint64_t checksum; /* solver__image_checksum: header fields + nodes */
    uint32_t header_size;
    uint32_t reserved;
} solver__file_header;

struct solver_lexicon {
    const uint32_t *nodes;
    /* nm[i] = nodes[i] | mask << 32, where mask has bit t set for each tile
     * t in nodes[i .. end of its list].  Derived at load (heap), so move
     * generation finds a child by rank (popcount) instead of scanning the
     * list, and the mask and the node share a cache line. */
    uint64_t *nm;
    /* Fingerprints of the letter multisets of all words of 7+ letters
     * (lexicon_sig.c); NULL if not built. */
    uint64_t *sig;
    size_t sig_mask;
    /* The less-one table (lexicon_sig.c); NULL if not built. */
    uint64_t *sub;
    size_t sub_mask;
    /* The pair index (lexicon_sig.c): words of 7+ letters by their
     * multiset less two letters; NULL if not built. */
    uint32_t *pw_start; /* bucket b: entries pw_ent[pw_start[b] .. pw_start[b + 1]) */
    uint8_t *pw_ent;    /* SOLVER__PW_ENT bytes each: id << 7 | (length - 7) << 3 | tag */
    uint8_t (*pw_word)[16];
    uint32_t pw_mask; /* buckets - 1 */
    uint32_t node_count;
    uint32_t word_count;
    void *map; /* mmap base or NULL */
    size_t map_len;
};

uint64_t solver__checksum(const void *data, size_t len);
void solver__sig_build(solver_lexicon *lex);
/* Could some word of 7+ letters use exactly these tiles ([0] = blanks)?
 * May say yes wrongly, never no wrongly. */
bool solver__sig_may_spell(const solver_lexicon *lex, const uint8_t counts[27]);
/* With exactly one blank in counts: the letters d such that the tiles, with
 * the blank standing for d, may be the letters of a word of 7+ letters (a
 * superset, like solver__sig_may_spell).  Otherwise every letter. */
uint32_t solver__sig_blank_letters(const solver_lexicon *lex, const uint8_t counts[27]);
/* The same from a multiset key: the product of solver__sig_prime(c) over
 * the letters (blanks not included; `blanks` says how many).  Move
 * generation keeps the rack's product and multiplies in board letters,
 * instead of counting letters again for every window. */
typedef unsigned __int128 solver__sig_key;
extern const uint8_t solver__sig_primes[27];
solver__sig_key solver__sig_key_of(const uint8_t counts[27]);
bool solver__sig_may_spell_key(const solver_lexicon *lex, solver__sig_key key, int blanks);
uint32_t solver__sig_blank_letters_key(const solver_lexicon *lex, solver__sig_key key, int blanks);
/* The letters c such that the key's letters plus c may be the letters of a
 * word of 7+ letters: one look-up in the less-one table (26 in the
 * signature table without it).  A superset, like above. */
uint32_t solver__sig_less_one(const solver_lexicon *lex, solver__sig_key key);
/* Two blanks: pairs[c] (c = 1..26) = the letters d such that the key's
 * letters plus c and d may be a word of 7+ letters (symmetric); returns the
 * union, the letters either blank may stand for.  Supersets, like above. */
uint32_t solver__sig_blank_pairs(const solver_lexicon *lex, solver__sig_key key,
                                 uint32_t pairs[27]);
/* The pair index: the words whose letters are the key's letters plus two
 * more.  Sets *end and returns the first entry of the key's bucket;
 * entries whose low 7 bits are not *want belong to other keys,
 * and an entry that matches may still belong to another key (the caller
 * checks the word's letters).  Within a bucket word ids do not decrease. */
#define SOLVER__PW_WORDS_MAX (1u << 17)
#define SOLVER__PW_ENT 3
static inline uint32_t solver__pw_ent(const solver_lexicon *lex, uint32_t i)
{
    const uint8_t *p = lex->pw_ent + (size_t)i * SOLVER__PW_ENT;
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16;
}
uint32_t solver__pw_bucket(const solver_lexicon *lex, solver__sig_key key, int len, uint32_t *want,
                           uint32_t *end);
void solver__pw_build(solver_lexicon *lex);

/* Covers magic, version, counts and every node byte, so no byte of a file
 * can change unnoticed (header_size and reserved are checked by value). */
static inline uint64_t solver__image_checksum(const solver__file_header *h, const void *nodes)
{
    return solver__checksum(nodes, (size_t)h->node_count * 4) ^
           solver__checksum(h, 16) * 0x9e3779b97f4a7c15ull;
}

#define SOLVER__TRIVIAL 1u             /* xset bit: no perpendicular word */
#define SOLVER__ALL_LETTERS 0x7fffffeu /* bits 1..26 */

/* Standard premium layout, one char per square: T triple word, D double
 * word, t triple letter, d double letter, '.' plain. */
extern const char solver__layout[SOLVER_DIM][SOLVER_DIM + 1];
static inline int solver__lm(int sq)
{
    char c = solver__layout[sq / SOLVER_DIM][sq % SOLVER_DIM];
    return c == 't' ? 3 : c == 'd' ? 2 : 1;
}
static inline int solver__wm(int sq)
{
    char c = solver__layout[sq / SOLVER_DIM][sq % SOLVER_DIM];
    return c == 'T' ? 3 : c == 'D' ? 2 : 1;
}

/* Cross-set of letters allowed between prefix and suffix (codes 1..26). */
uint32_t solver__cross_set(const solver_lexicon *lex, const uint8_t *prefix, int plen,
                           const uint8_t *suffix, int slen);
/* Find child with tile t in the sibling list starting at idx; 0 if none. */
static inline uint32_t solver__find(const uint32_t *nodes, uint32_t idx, unsigned t)
{
    if (idx == 0)
        return 0;
    for (;; idx++) {
        uint32_t n = nodes[idx];
        unsigned nt = SOLVER__TILE(n);
        if (nt == t)
            return idx;
        if (nt > t || (n & SOLVER__IS_END))
            return 0;
    }
}

/* Score a play described by a move (tiles w/ THROUGH flags) on a board,
 * computing the main and cross words directly from the squares (not from the
 * cross-score cache).  Optionally reports the words.  Returns the score. */
int solver__score_move(const solver_board *b, const solver_dist *dist, const solver_move *m,
                       solver_result *words_out);

void solver__errf(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static inline int solver__sq(int row, int col)
{
    return row * SOLVER_DIM + col;
}

/* Copies the n-character text tmp (NUL-terminated) to buf[len], cut to
 * fit, and returns n: the snprintf convention of the format functions. */
static inline size_t solver__copy_out(char *buf, size_t len, const char *tmp, size_t n)
{
    if (len) {
        size_t k = n < len ? n : len - 1;
        memcpy(buf, tmp, k);
        buf[k] = 0;
    }
    return n;
}

#endif
