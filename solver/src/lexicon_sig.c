/* Bingo signatures: the set of letter multisets of every word of 7 or more
 * letters, so move generation can ask "could these tiles plus these board
 * letters spell any long word?" in O(1).  A multiset is keyed by the product
 * of one prime per letter (unique factorisation makes it exact; 15 letters
 * fit in 128 bits), and the table stores 64-bit fingerprints of those keys:
 * a collision can only answer "maybe", which is the safe direction for a
 * pruning test.
 *
 * A second table, "less one", answers the blank's question in one look-up
 * instead of 26: keyed by a word's multiset less one letter, it holds the
 * set of letters that complete it to the multiset of some word of 7+
 * letters.  One blank: the letters it may stand for are less_one(tiles).
 * Two blanks: once the first stands for c, the second may stand for
 * less_one(tiles + c), 26 look-ups for every pair instead of 351.  Each
 * slot is one 64-bit word: a 38-bit tag of the key's fingerprint and the
 * 26-bit letter set, so the table for the default lexicon is 8 MB. */
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
    /* less-one entries: fingerprint of (word multiset less letter c), c */
    uint64_t *sub;
    uint8_t *sub_c;
    size_t nsub, subcap;
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

static int add_sub(walk_t *w, uint64_t fp, unsigned c)
{
    if (w->nsub == w->subcap) {
        size_t n = w->subcap ? w->subcap * 2 : 4096;
        uint64_t *k = realloc(w->sub, n * sizeof *k);
        if (!k)
            return -1;
        w->sub = k;
        uint8_t *cc = realloc(w->sub_c, n);
        if (!cc)
            return -1;
        w->sub_c = cc;
        w->subcap = n;
    }
    w->sub[w->nsub] = fp;
    w->sub_c[w->nsub++] = (uint8_t)c;
    return 0;
}

/* A word of 7+ letters with multiset key and the set of its letters: its
 * fingerprint, and one less-one entry per distinct letter. */
static int add_word(walk_t *w, u128 key, uint32_t letters)
{
    if (add(w, fingerprint(key)))
        return -1;
    for (; letters; letters &= letters - 1) {
        unsigned c = (unsigned)__builtin_ctz(letters);
        if (add_sub(w, fingerprint(key / solver__sig_primes[c]), c))
            return -1;
    }
    return 0;
}

/* DFS over the DAWG.  The budget bounds the work on graphs that were not
 * made by our compiler (a small graph can spell exponentially many words). */
static int walk(walk_t *w, uint32_t list, int depth, u128 key, uint32_t letters)
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
            uint32_t lt = letters | 1u << t;
            if ((v & SOLVER__ACCEPTS) && depth + 1 >= SOLVER_RACK_MAX && add_word(w, k, lt))
                return -1;
            if (walk(w, SOLVER__ARC(v), depth + 1, k, lt))
                return -1;
        }
        if (v & SOLVER__IS_END)
            break;
    }
    return 0;
}

/* A less-one slot: the tag (fingerprint bits 26..63, bit 26 forced so a
 * used slot is never 0) above the letters (bit c-1 for letter c).  The home
 * slot comes from fingerprint bits 1..25, independent of the tag. */
#define SUB_TAG(fp) (((fp) >> 26 | 1) << 26)
#define SUB_HOME(fp, mask) ((size_t)((fp) >> 1) & (mask))

static void sub_build(solver_lexicon *lex, const walk_t *w)
{
    size_t slots = 1024;
    /* At most nsub distinct keys (anagrams share theirs), so at least a
     * fifth of the slots stay empty and every probe chain ends. */
    while (slots < w->nsub + w->nsub / 4)
        slots *= 2;
    lex->sub = calloc(slots, sizeof *lex->sub);
    if (!lex->sub)
        return;
    lex->sub_mask = slots - 1;
    for (size_t i = 0; i < w->nsub; i++) {
        uint64_t tag = SUB_TAG(w->sub[i]), bit = 1ull << (w->sub_c[i] - 1);
        size_t h = SUB_HOME(w->sub[i], lex->sub_mask);
        while (lex->sub[h] && (lex->sub[h] >> 26 << 26) != tag)
            h = (h + 1) & lex->sub_mask;
        if (!lex->sub[h])
            lex->sub[h] = tag;
        lex->sub[h] |= bit;
    }
}

void solver__sig_build(solver_lexicon *lex)
{
    walk_t w = {.lex = lex, .budget = 16l << 20};
    lex->sig = NULL;
    lex->sig_mask = 0;
    lex->sub = NULL;
    lex->sub_mask = 0;
    if (walk(&w, SOLVER__ARC(lex->nodes[0]), 0, 1, 0) == 0) {
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
            sub_build(lex, &w);
        }
    }
    free(w.keys);
    free(w.sub);
    free(w.sub_c);
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

/* The less-one look-up: every slot on the key's probe chain whose tag
 * matches contributes its letters (two keys may share a tag; their union is
 * still a superset for each, and an insertion never lands past the first
 * empty slot of the chain, so the chain holds the key's own slot). */
static uint32_t sub_lookup(const solver_lexicon *lex, u128 key)
{
    uint64_t fp = fingerprint(key), tag = SUB_TAG(fp);
    uint32_t set = 0;
    for (size_t h = SUB_HOME(fp, lex->sub_mask);; h = (h + 1) & lex->sub_mask) {
        uint64_t s = lex->sub[h];
        if (!s)
            return set << 1;
        if ((s >> 26 << 26) == tag)
            set |= (uint32_t)(s & 0x3ffffff);
    }
}

uint32_t solver__sig_less_one(const solver_lexicon *lex, solver__sig_key key)
{
    if (lex->sub)
        return sub_lookup(lex, key);
    if (!lex->sig)
        return SOLVER__ALL_LETTERS;
    /* No less-one table (its build ran out of memory): 26 look-ups. */
    uint32_t set = 0;
    for (int c = 1; c <= 26; c++)
        if (lookup(lex, key * solver__sig_primes[c]))
            set |= 1u << c;
    return set;
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
    return solver__sig_less_one(lex, key) != 0;
}

uint32_t solver__sig_blank_letters_key(const solver_lexicon *lex, solver__sig_key key, int blanks)
{
    if (!lex->sig || blanks != 1)
        return SOLVER__ALL_LETTERS;
    return solver__sig_less_one(lex, key);
}

uint32_t solver__sig_blank_pairs(const solver_lexicon *lex, solver__sig_key key, uint32_t pairs[27])
{
    uint32_t any = 0;
    for (int c = 0; c < 27; c++)
        pairs[c] = lex->sig ? 0 : SOLVER__ALL_LETTERS;
    if (!lex->sig)
        return SOLVER__ALL_LETTERS;
    if (lex->sub) {
        /* The second blank's letters once the first stands for c. */
        for (int c = 1; c <= 26; c++) {
            pairs[c] = sub_lookup(lex, key * solver__sig_primes[c]);
            if (pairs[c])
                any |= 1u << c;
        }
        return any;
    }
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

/* ---- the pair index ------------------------------------------------------
 * Two blanks: the seven-tile plays of a window are the words whose letters
 * are the rack's five natural letters, the board letters joined and two
 * letters more.  Keyed by a word's multiset less two of its letters (one
 * entry per distinct pair, about 28 a word), the index lists those words
 * directly, as MAGPIE's word map does, instead of walking every prefix the
 * natural tiles and the blanks' letters spell.  Entries are counting-sorted
 * into buckets by the key's fingerprint; an entry is 24 bits (17-bit word
 * id, word length, 3 bits of the fingerprint, which with the length keep
 * most other keys' entries of a bucket from reaching the letter check), so
 * the default lexicon's 2.5 M entries take 7.6 MB, the words 1.5 MB and the
 * buckets 1 MB: 29 MB resident in all, within the 32 MB allowed. */

typedef struct {
    const solver_lexicon *lex;
    uint8_t (*words)[16];
    size_t n, cap;
    long budget;
} words_t;

static int words_walk(words_t *w, uint32_t list, int depth, uint8_t *word)
{
    if (!list)
        return 0;
    for (uint32_t i = list; i < w->lex->node_count; i++) {
        if (--w->budget < 0)
            return -1;
        uint32_t v = w->lex->nodes[i];
        unsigned t = SOLVER__TILE(v);
        if (t >= 1 && t <= 26 && depth < SOLVER_DIM) {
            word[depth] = (uint8_t)t;
            if ((v & SOLVER__ACCEPTS) && depth + 1 >= SOLVER_RACK_MAX) {
                if (w->n == w->cap) {
                    size_t c = w->cap ? w->cap * 2 : 4096;
                    uint8_t(*k)[16] = realloc(w->words, c * sizeof *k);
                    if (!k)
                        return -1;
                    w->words = k;
                    w->cap = c;
                }
                memset(w->words[w->n], 0, 16);
                memcpy(w->words[w->n++], word, (size_t)depth + 1);
            }
            if (words_walk(w, SOLVER__ARC(v), depth + 1, word))
                return -1;
        }
        if (v & SOLVER__IS_END)
            break;
    }
    return 0;
}

#define PW_BUCKET(fp, mask) ((uint32_t)((fp) >> 20) & (mask))
#define PW_TAG(fp) ((uint32_t)((fp) >> 50) & 7u)

/* key / solver__sig_primes[c] when c's prime divides key: the product
 * times the prime's inverse modulo 2^128 (inv[c]; 2 is a shift), a few
 * multiplies instead of a 128-bit division, which made the build 3x
 * slower. */
static u128 exact_div(const u128 *inv, u128 key, unsigned c)
{
    return solver__sig_primes[c] == 2 ? key >> 1 : key * inv[c];
}

/* The fingerprints of the word's multiset less each distinct pair of its
 * letters (at most 351), into fps; returns how many. */
static size_t pw_pairs(const u128 *inv, const uint8_t *word, uint64_t *fps)
{
    uint8_t cnt[27] = {0}, d[SOLVER_DIM];
    int nd = 0;
    u128 key = 1;
    for (int j = 0; j < 16 && word[j]; j++) {
        if (!cnt[word[j]]++)
            d[nd++] = word[j];
        key *= solver__sig_primes[word[j]];
    }
    /* Only the word's distinct letters (a 26 x 26 scan made the build
     * 0.7 G instructions). */
    size_t n = 0;
    for (int i = 0; i < nd; i++) {
        u128 ka = exact_div(inv, key, d[i]);
        for (int j = i; j < nd; j++)
            if (j != i || cnt[d[i]] > 1)
                fps[n++] = fingerprint(exact_div(inv, ka, d[j]));
    }
    return n;
}

void solver__pw_build(solver_lexicon *lex)
{
    lex->pw_start = NULL;
    lex->pw_ent = NULL;
    lex->pw_word = NULL;
    lex->pw_mask = 0;
    u128 inv[27] = {0};
    for (int c = 1; c <= 26; c++) {
        u128 p = solver__sig_primes[c], x = p; /* Newton: correct bits double from 3 */
        for (int i = 0; i < 6; i++)
            x *= 2 - p * x;
        inv[c] = x;
    }
    words_t w = {.lex = lex, .budget = 16l << 20};
    uint8_t word[SOLVER_DIM + 1];
    uint64_t fps[26 * 27 / 2];
    if (words_walk(&w, SOLVER__ARC(lex->nodes[0]), 0, word) || w.n == 0 ||
        w.n > SOLVER__PW_WORDS_MAX) {
        free(w.words);
        return;
    }
    /* Trimmed first, so the load's peak holds no spare capacity. */
    uint8_t(*trim)[16] = realloc(w.words, w.n * sizeof *trim);
    if (trim)
        w.words = trim;
    /* About 28 entries a word: some 16 a bucket. */
    uint32_t buckets = 1024;
    while (buckets < w.n * 2 && buckets < (1u << 30))
        buckets *= 2;
    uint32_t mask = buckets - 1;
    uint32_t *start = calloc((size_t)buckets + 1, sizeof *start);
    size_t total = 0;
    for (size_t i = 0; start && i < w.n; i++) {
        size_t k = pw_pairs(inv, w.words[i], fps);
        for (size_t j = 0; j < k; j++)
            start[PW_BUCKET(fps[j], mask) + 1]++;
        total += k;
    }
    uint8_t *ent = start && total < UINT32_MAX ? malloc(total * SOLVER__PW_ENT + 1) : NULL;
    if (!ent) {
        free(start);
        free(w.words);
        return;
    }
    for (uint32_t b = 0; b < buckets; b++)
        start[b + 1] += start[b];
    /* Fill in word order, so ids do not decrease within a bucket; start[b]
     * walks to the bucket's end and is moved back after. */
    for (size_t i = 0; i < w.n; i++) {
        size_t k = pw_pairs(inv, w.words[i], fps);
        uint32_t len = (uint32_t)strnlen((const char *)w.words[i], 16);
        for (size_t j = 0; j < k; j++) {
            uint32_t e = (uint32_t)i << 7 | (len - SOLVER_RACK_MAX) << 3 | PW_TAG(fps[j]);
            uint8_t *p = ent + (size_t)start[PW_BUCKET(fps[j], mask)]++ * SOLVER__PW_ENT;
            p[0] = (uint8_t)e, p[1] = (uint8_t)(e >> 8), p[2] = (uint8_t)(e >> 16);
        }
    }
    for (uint32_t b = buckets; b > 0; b--)
        start[b] = start[b - 1];
    start[0] = 0;
    lex->pw_word = w.words;
    lex->pw_start = start;
    lex->pw_ent = ent;
    lex->pw_mask = mask;
}

uint32_t solver__pw_bucket(const solver_lexicon *lex, solver__sig_key key, int len, uint32_t *want,
                           uint32_t *end)
{
    uint64_t fp = fingerprint(key);
    uint32_t b = PW_BUCKET(fp, lex->pw_mask);
    *want = (uint32_t)(len - SOLVER_RACK_MAX) << 3 | PW_TAG(fp);
    *end = lex->pw_start[b + 1];
    return lex->pw_start[b];
}
