/* Bingo signatures: the set of letter multisets of every word of 7 or more
 * letters, so move generation can ask "could these tiles plus these board
 * letters spell any long word?" in O(1).  A multiset is keyed by the product
 * of one prime per letter (unique factorisation makes it exact; 15 letters
 * fit in 128 bits), and the table stores 64-bit fingerprints of those keys:
 * a collision can only answer "maybe", which is the safe direction for a
 * pruning test. */
#include "internal.h"

#include <stdlib.h>
#include <string.h>

/* Small primes for frequent letters keep the products small. */
const uint8_t solver__sig_primes[27] = {
    0,  5,  47, 37,  31, 2,  61, 53, 59, 7,  89, 71, 19, 43, /* - a..m */
    11, 13, 41, 101, 17, 23, 3,  29, 67, 73, 83, 79, 97,     /* n..z */
};

typedef solver__sig_key u128;

static uint64_t fingerprint(u128 key)
{
    uint64_t h = (uint64_t)key ^ ((uint64_t)(key >> 64) * 0x9e3779b97f4a7c15ull);
    h ^= h >> 31;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 29;
    return h | 1; /* 0 marks an empty slot */
}

typedef struct {
    solver_lexicon *lex;
    uint64_t *keys;
    size_t n, cap;
    long budget;
} walk_t;

static int add(walk_t *w, uint64_t fp)
{
    if (w->n == w->cap) {
        size_t c = w->cap ? w->cap * 2 : 4096;
        uint64_t *k = realloc(w->keys, c * sizeof *k);
        if (!k)
            return -1;
        w->keys = k;
        w->cap = c;
    }
    w->keys[w->n++] = fp;
    return 0;
}

/* DFS over the DAWG.  The budget bounds the work on graphs that were not
 * made by our compiler (a small graph can spell exponentially many words). */
static int walk(walk_t *w, uint32_t list, int depth, u128 key)
{
    if (!list)
        return 0;
    for (uint32_t i = list; i < w->lex->node_count; i++) {
        if (--w->budget < 0)
            return -1;
        uint32_t v = w->lex->nodes[i];
        unsigned t = SOLVER__TILE(v);
        if (t >= 1 && t <= 26 && depth < SOLVER_DIM) {
            u128 k = key * solver__sig_primes[t];
            if ((v & SOLVER__ACCEPTS) && depth + 1 >= SOLVER_RACK_MAX && add(w, fingerprint(k)))
                return -1;
            if (walk(w, SOLVER__ARC(v), depth + 1, k))
                return -1;
        }
        if (v & SOLVER__IS_END)
            break;
    }
    return 0;
}

void solver__sig_build(solver_lexicon *lex)
{
    walk_t w = {.lex = lex, .budget = 16l << 20};
    lex->sig = NULL;
    lex->sig_mask = 0;
    if (walk(&w, SOLVER__ARC(lex->nodes[0]), 0, 1) == 0) {
        size_t slots = 1024;
        while (slots < w.n * 2)
            slots *= 2;
        lex->sig = calloc(slots, sizeof *lex->sig);
        if (lex->sig) {
            lex->sig_mask = slots - 1;
            for (size_t i = 0; i < w.n; i++) {
                size_t h = (size_t)(w.keys[i] >> 7) & lex->sig_mask;
                while (lex->sig[h] && lex->sig[h] != w.keys[i])
                    h = (h + 1) & lex->sig_mask;
                lex->sig[h] = w.keys[i];
            }
        }
    }
    free(w.keys);
}

static bool lookup(const solver_lexicon *lex, u128 key)
{
    uint64_t fp = fingerprint(key);
    for (size_t h = (size_t)(fp >> 7) & lex->sig_mask;; h = (h + 1) & lex->sig_mask) {
        if (lex->sig[h] == fp)
            return true;
        if (!lex->sig[h])
            return false;
    }
}

solver__sig_key solver__sig_key_of(const uint8_t counts[27])
{
    u128 key = 1;
    for (int c = 1; c <= 26; c++)
        for (int k = 0; k < counts[c]; k++)
            key *= solver__sig_primes[c];
    return key;
}

bool solver__sig_may_spell_key(const solver_lexicon *lex, solver__sig_key key, int blanks)
{
    if (!lex->sig || blanks >= 2)
        return true; /* no table (odd graph), or two blanks: assume yes */
    if (blanks == 0)
        return lookup(lex, key);
    for (int c = 1; c <= 26; c++)
        if (lookup(lex, key * solver__sig_primes[c]))
            return true;
    return false;
}

uint32_t solver__sig_blank_letters_key(const solver_lexicon *lex, solver__sig_key key, int blanks)
{
    if (!lex->sig || blanks != 1)
        return SOLVER__ALL_LETTERS;
    uint32_t set = 0;
    for (int c = 1; c <= 26; c++)
        if (lookup(lex, key * solver__sig_primes[c]))
            set |= 1u << c;
    return set;
}

uint32_t solver__sig_blank_pairs(const solver_lexicon *lex, solver__sig_key key, uint32_t pairs[27])
{
    uint32_t any = 0;
    for (int c = 0; c < 27; c++)
        pairs[c] = lex->sig ? 0 : SOLVER__ALL_LETTERS;
    if (!lex->sig)
        return SOLVER__ALL_LETTERS;
    for (int c = 1; c <= 26; c++) {
        u128 kc = key * solver__sig_primes[c];
        for (int d = c; d <= 26; d++)
            if (lookup(lex, kc * solver__sig_primes[d])) {
                pairs[c] |= 1u << d;
                pairs[d] |= 1u << c;
            }
        if (pairs[c])
            any |= 1u << c;
    }
    return any;
}

bool solver__sig_may_spell(const solver_lexicon *lex, const uint8_t counts[27])
{
    return solver__sig_may_spell_key(lex, solver__sig_key_of(counts), counts[0]);
}

uint32_t solver__sig_blank_letters(const solver_lexicon *lex, const uint8_t counts[27])
{
    return solver__sig_blank_letters_key(lex, solver__sig_key_of(counts), counts[0]);
}
