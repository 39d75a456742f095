/* Lexicon compiler: word list -> minimized DAWG + GADDAG in one flat array of
 * 32-bit KWG nodes.
 *
 * Method: insert every word (DAWG side) and every GADDAG string (for word w
 * and split i: reverse(w[0..i]) then, if i < n, the separator and w[i..n])
 * into a plain trie whose children form sorted linked lists.  Then hash-cons
 * every sibling-chain suffix bottom-up, so equal sub-graphs collapse to one
 * id, and lay the distinct chains out contiguously, breadth first.  A chain
 * that is a suffix of one already laid out is pointed into rather than copied
 * (a sibling list is read until IS_END, so any suffix of it is a valid list). */
#include "internal.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    uint8_t *tile, *acc;
    int32_t *child, *sib;
    size_t n, cap;
} trie;

typedef struct {   /* hash-consed chain: (tile, accepts, child chain, next sibling chain) */
    uint32_t *key; /* tile | acc << 8 */
    uint32_t *child, *sib;
    size_t n, cap;
    uint32_t *slots; /* open addressing, 0 = free, else id */
    size_t nslots;
} intern_tab;

static int grow(void **p, size_t elem, size_t cap)
{
    void *q = realloc(*p, elem * cap);
    if (!q)
        return -1;
    *p = q;
    return 0;
}

static int32_t trie_new(trie *t, uint8_t tile)
{
    if (t->n == t->cap) {
        size_t c = t->cap ? t->cap * 2 : 1 << 16;
        if (grow((void **)&t->tile, 1, c) || grow((void **)&t->acc, 1, c) ||
            grow((void **)&t->child, 4, c) || grow((void **)&t->sib, 4, c))
            return -1;
        t->cap = c;
    }
    size_t i = t->n++;
    t->tile[i] = tile;
    t->acc[i] = 0;
    t->child[i] = -1;
    t->sib[i] = -1;
    return (int32_t)i;
}

static int trie_insert(trie *t, int32_t node, const uint8_t *s, int len)
{
    for (int k = 0; k < len; k++) {
        int32_t *link = &t->child[node];
        while (*link >= 0 && t->tile[*link] < s[k])
            link = &t->sib[*link];
        if (*link < 0 || t->tile[*link] != s[k]) {
            int32_t nn = trie_new(t, s[k]);
            if (nn < 0)
                return -1;
            /* t->child / t->sib may have moved: recompute the link. */
            link = &t->child[node];
            while (*link >= 0 && t->tile[*link] < s[k])
                link = &t->sib[*link];
            t->sib[nn] = *link;
            *link = nn;
        }
        node = *link;
    }
    t->acc[node] = 1;
    return 0;
}

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
    uint64_t h = a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full ^ c * 0x165667b19e3779f9ull;
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    return h ^ (h >> 32);
}

static int intern_rehash(intern_tab *it)
{
    size_t ns = it->nslots ? it->nslots * 2 : 1 << 16;
    uint32_t *s = calloc(ns, sizeof *s);
    if (!s)
        return -1;
    for (size_t id = 1; id < it->n; id++) {
        size_t h = mix(it->key[id], it->child[id], it->sib[id]) & (ns - 1);
        while (s[h])
            h = (h + 1) & (ns - 1);
        s[h] = (uint32_t)id;
    }
    free(it->slots);
    it->slots = s;
    it->nslots = ns;
    return 0;
}

/* Returns the id of the tuple, adding it if new; 0 on allocation failure. */
static uint32_t intern(intern_tab *it, uint32_t key, uint32_t child, uint32_t sib)
{
    if ((it->n + 1) * 2 > it->nslots && intern_rehash(it))
        return 0;
    size_t h = mix(key, child, sib) & (it->nslots - 1);
    for (; it->slots[h]; h = (h + 1) & (it->nslots - 1)) {
        uint32_t id = it->slots[h];
        if (it->key[id] == key && it->child[id] == child && it->sib[id] == sib)
            return id;
    }
    if (it->n == it->cap) {
        size_t c = it->cap * 2;
        if (grow((void **)&it->key, 4, c) || grow((void **)&it->child, 4, c) ||
            grow((void **)&it->sib, 4, c))
            return 0;
        it->cap = c;
    }
    uint32_t id = (uint32_t)it->n++;
    it->key[id] = key;
    it->child[id] = child;
    it->sib[id] = sib;
    it->slots[h] = id;
    return id;
}

/* Post-order canonicalisation, memoised per trie node.  The recursion depth
 * is bounded by (max string length + 1) * 27. */
static uint32_t canon(const trie *t, intern_tab *it, uint32_t *memo, int32_t n)
{
    if (n < 0)
        return 0;
    if (memo[n])
        return memo[n];
    uint32_t c = canon(t, it, memo, t->child[n]);
    uint32_t s = canon(t, it, memo, t->sib[n]);
    if ((t->child[n] >= 0 && !c) || (t->sib[n] >= 0 && !s))
        return 0;
    uint32_t id = intern(it, t->tile[n] | (uint32_t)t->acc[n] << 8, c, s);
    memo[n] = id;
    return id;
}

static int cmp_word(const void *a, const void *b)
{
    return memcmp(a, b, 16);
}

int solver_lexicon_compile_buffer(const char *text, size_t len, const solver_compile_opts *opts,
                                  void **out, size_t *outlen, solver_compile_stats *stp, char *err,
                                  size_t errlen)
{
    solver_compile_stats st = {0};
    bool lower_only = opts && opts->lowercase_only;
    trie t = {0};
    intern_tab it = {0};
    uint32_t *memo = NULL, *pos = NULL, *flat = NULL, *fchild = NULL;
    char(*words)[16] = NULL;
    size_t nwords = 0, wcap = 0;
    int rc = -1;

    /* 1. Filter and fold lines. */
    for (size_t i = 0; i < len;) {
        size_t j = i;
        while (j < len && text[j] != '\n')
            j++;
        size_t e = j;
        if (e > i && text[e - 1] == '\r')
            e--;
        st.lines++;
        char w[16];
        bool ok = true;
        size_t wl = e - i;
        for (size_t k = i; k < e && ok; k++) {
            unsigned char c = (unsigned char)text[k];
            if (c >= 'A' && c <= 'Z' && !lower_only)
                c = (unsigned char)(c - 'A' + 'a');
            if (c < 'a' || c > 'z')
                ok = false;
            else if (k - i < 15)
                w[k - i] = (char)c;
        }
        i = j + 1;
        if (!ok) {
            st.skipped_chars++;
            continue;
        }
        if (wl < 2 || wl > 15) {
            st.skipped_length++;
            continue;
        }
        if (nwords == wcap) {
            wcap = wcap ? wcap * 2 : 4096;
            if (grow((void **)&words, 16, wcap)) {
                solver__errf(err, errlen, "out of memory");
                goto fail;
            }
        }
        memset(words[nwords], 0, 16);
        memcpy(words[nwords], w, wl);
        nwords++;
    }
    if (nwords)
        qsort(words, nwords, 16, cmp_word);
    size_t u = 0;
    for (size_t i = 0; i < nwords; i++) {
        if (u && !memcmp(words[u - 1], words[i], 16)) {
            st.duplicates++;
            continue;
        }
        memmove(words[u++], words[i], 16);
    }
    nwords = u;
    st.words = nwords;
    if (nwords == 0) {
        solver__errf(err, errlen,
                     "word list has no usable words (%zu lines: %zu not a-z, %zu "
                     "not 2-15 letters)",
                     st.lines, st.skipped_chars, st.skipped_length);
        goto fail;
    }

    /* 2. Trie of DAWG words (root 0) and GADDAG strings (root 1). */
    if (trie_new(&t, 0) < 0 || trie_new(&t, 0) < 0)
        goto oom;
    for (size_t i = 0; i < nwords; i++) {
        uint8_t w[16], g[17];
        int n = (int)strlen(words[i]);
        for (int k = 0; k < n; k++)
            w[k] = (uint8_t)(words[i][k] - 'a' + 1);
        if (trie_insert(&t, 0, w, n))
            goto oom;
        for (int split = 1; split <= n; split++) {
            int gl = 0;
            for (int k = split - 1; k >= 0; k--)
                g[gl++] = w[k];
            if (split < n) {
                g[gl++] = SOLVER__SEP;
                for (int k = split; k < n; k++)
                    g[gl++] = w[k];
            }
            if (trie_insert(&t, 1, g, gl))
                goto oom;
        }
    }

    /* 3. Hash-cons chains. */
    it.cap = 1 << 16;
    it.n = 1; /* id 0 = empty chain */
    it.key = malloc(4 * it.cap);
    it.child = malloc(4 * it.cap);
    it.sib = malloc(4 * it.cap);
    memo = calloc(t.n, sizeof *memo);
    if (!it.key || !it.child || !it.sib || !memo || intern_rehash(&it))
        goto oom;
    uint32_t roots[2];
    for (int r = 0; r < 2; r++) {
        roots[r] = canon(&t, &it, memo, t.child[r]);
        if (!roots[r])
            goto oom;
    }

    /* 4. Lay out: flat[i] gets tile/accepts/is_end now, arcs patched as the
     * scan reaches each node (the growing array doubles as the BFS queue). */
    pos = calloc(it.n, sizeof *pos); /* 0 = not laid out yet */
    size_t fcap = it.n + 2, fn = 2;
    flat = calloc(fcap, sizeof *flat);
    fchild = calloc(fcap, sizeof *fchild);
    if (!pos || !flat || !fchild)
        goto oom;
    fchild[0] = roots[0];
    fchild[1] = roots[1];
    flat[0] = flat[1] = SOLVER__IS_END;
    for (size_t i = 0; i < fn; i++) {
        uint32_t c = fchild[i];
        if (!c)
            continue;
        if (!pos[c]) {
            for (uint32_t k = c; k; k = it.sib[k]) {
                if (fn == fcap) {
                    fcap *= 2;
                    if (grow((void **)&flat, 4, fcap) || grow((void **)&fchild, 4, fcap))
                        goto oom;
                }
                if (!pos[k])
                    pos[k] = (uint32_t)fn;
                uint32_t key = it.key[k];
                flat[fn] = (key & 0xff) << SOLVER__TILE_SHIFT | ((key >> 8) ? SOLVER__ACCEPTS : 0) |
                           (it.sib[k] ? 0 : SOLVER__IS_END);
                fchild[fn] = it.child[k];
                fn++;
            }
        }
        if (pos[c] > SOLVER__ARC_MASK) {
            solver__errf(err, errlen, "lexicon too large: %zu nodes exceed the 22-bit arc limit",
                         fn);
            goto fail;
        }
        flat[i] |= pos[c];
    }
    st.nodes = fn;

    /* 5. File image. */
    size_t body = fn * 4;
    solver__file_header h;
    memset(&h, 0, sizeof h);
    memcpy(h.magic, SOLVER__MAGIC, 4);
    h.version = SOLVER__VERSION;
    h.node_count = (uint32_t)fn;
    h.word_count = (uint32_t)nwords;
    h.header_size = sizeof h;
    h.checksum = solver__image_checksum(&h, flat);
    unsigned char *img = malloc(sizeof h + body);
    if (!img)
        goto oom;
    memcpy(img, &h, sizeof h);
    memcpy(img + sizeof h, flat, body);
    *out = img;
    *outlen = sizeof h + body;
    st.bytes = *outlen;
    rc = 0;
    goto done;
oom:
    solver__errf(err, errlen, "out of memory while compiling the lexicon");
fail:
done:
    if (stp)
        *stp = st;
    free(words);
    free(t.tile);
    free(t.acc);
    free(t.child);
    free(t.sib);
    free(it.key);
    free(it.child);
    free(it.sib);
    free(it.slots);
    free(memo);
    free(pos);
    free(flat);
    free(fchild);
    return rc;
}

int solver_lexicon_compile(const char *wordlist_path, const char *out_path,
                           const solver_compile_opts *opts, solver_compile_stats *st, char *err,
                           size_t errlen)
{
    char *text = NULL;
    void *img = NULL;
    size_t len = 0, cap = 0, imglen = 0;
    FILE *f = NULL, *o = NULL;
    int rc = -1;
    char tmp[4096];

    f = fopen(wordlist_path, "rb");
    if (!f) {
        solver__errf(err, errlen, "%s: %s", wordlist_path, strerror(errno));
        goto fail;
    }
    for (;;) {
        if (len == cap) {
            cap = cap ? cap * 2 : 1 << 20;
            if (grow((void **)&text, 1, cap)) {
                solver__errf(err, errlen, "out of memory reading %s", wordlist_path);
                goto fail;
            }
        }
        size_t r = fread(text + len, 1, cap - len, f);
        if (r == 0)
            break;
        len += r;
    }
    if (ferror(f)) {
        solver__errf(err, errlen, "%s: read error", wordlist_path);
        goto fail;
    }
    if (solver_lexicon_compile_buffer(text, len, opts, &img, &imglen, st, err, errlen))
        goto fail;
    /* Write to a temporary name and rename, so a reader never maps a
     * half-written file. */
    snprintf(tmp, sizeof tmp, "%s.tmp", out_path);
    o = fopen(tmp, "wb");
    if (!o || fwrite(img, 1, imglen, o) != imglen) {
        solver__errf(err, errlen, "%s: %s", tmp, strerror(errno));
        goto fail;
    }
    int closed = fclose(o);
    o = NULL;
    if (closed) {
        solver__errf(err, errlen, "%s: %s", tmp, strerror(errno));
        goto fail;
    }
    if (rename(tmp, out_path)) {
        solver__errf(err, errlen, "rename %s: %s", out_path, strerror(errno));
        goto fail;
    }
    rc = 0;
fail:
    if (o)
        fclose(o);
    if (f)
        fclose(f);
    free(text);
    free(img);
    return rc;
}
