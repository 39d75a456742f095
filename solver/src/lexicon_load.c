/* Lexicon loader: maps a compiled KWG file and refuses anything that is not
 * exactly what the compiler wrote (header, size, checksum, arc bounds), so
 * move generation can then walk the graph without bounds checks. */
#include "internal.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static int check_image(const void *buf, size_t len, solver__file_header *h, char *err,
                       size_t errlen)
{
    if (len < sizeof *h) {
        solver__errf(err, errlen, "lexicon truncated: %zu bytes, header needs %zu", len, sizeof *h);
        return -1;
    }
    memcpy(h, buf, sizeof *h);
    if (memcmp(h->magic, SOLVER__MAGIC, 4) != 0) {
        solver__errf(err, errlen, "not a lexicon file (bad magic)");
        return -1;
    }
    if (h->version != SOLVER__VERSION) {
        solver__errf(err, errlen, "lexicon version %u, this build reads version %u", h->version,
                     SOLVER__VERSION);
        return -1;
    }
    if (h->header_size != sizeof *h || h->reserved != 0 || h->node_count < 2 ||
        h->node_count > SOLVER__ARC_MASK + 1u) {
        solver__errf(err, errlen, "lexicon header corrupt");
        return -1;
    }
    if (len != sizeof *h + (size_t)h->node_count * 4) {
        solver__errf(err, errlen, "lexicon truncated or padded: %zu bytes, header says %zu", len,
                     sizeof *h + (size_t)h->node_count * 4);
        return -1;
    }
    const unsigned char *body = (const unsigned char *)buf + sizeof *h;
    if (solver__image_checksum(h, body) != h->checksum) {
        solver__errf(err, errlen, "lexicon checksum mismatch (file corrupt)");
        return -1;
    }
    /* Structural check: a valid checksum does not prove the file came from
     * our compiler.  Every arc must point inside the array and every list
     * must end before the array does. */
    uint32_t n = h->node_count;
    uint32_t last;
    memcpy(&last, body + (size_t)(n - 1) * 4, 4);
    if (!(last & SOLVER__IS_END)) {
        solver__errf(err, errlen, "lexicon graph corrupt: last list unterminated");
        return -1;
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t v;
        memcpy(&v, body + (size_t)i * 4, 4);
        if (SOLVER__ARC(v) >= n || SOLVER__TILE(v) > 26) {
            solver__errf(err, errlen, "lexicon graph corrupt at node %u", i);
            return -1;
        }
    }
    return 0;
}

solver_lexicon *solver_lexicon_from_buffer(const void *buf, size_t len, char *err, size_t errlen)
{
    solver__file_header h;
    if (((uintptr_t)buf & 3) != 0) {
        solver__errf(err, errlen, "lexicon buffer must be 4-byte aligned");
        return NULL;
    }
    if (check_image(buf, len, &h, err, errlen))
        return NULL;
    solver_lexicon *lex = calloc(1, sizeof *lex);
    if (!lex) {
        solver__errf(err, errlen, "out of memory");
        return NULL;
    }
    lex->nodes = (const uint32_t *)((const unsigned char *)buf + sizeof h);
    lex->node_count = h.node_count;
    lex->nm = malloc((size_t)h.node_count * sizeof *lex->nm);
    if (!lex->nm) {
        free(lex);
        solver__errf(err, errlen, "out of memory");
        return NULL;
    }
    solver__sig_build(lex);
    solver__pw_build(lex);
    uint32_t mask = 0;
    for (uint32_t i = h.node_count; i-- > 0;) {
        uint32_t v = lex->nodes[i];
        mask = (1u << SOLVER__TILE(v)) | ((v & SOLVER__IS_END) ? 0 : mask);
        lex->nm[i] = (uint64_t)mask << 32 | v;
    }
    lex->word_count = h.word_count;
    return lex;
}

solver_lexicon *solver_lexicon_load(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        solver__errf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        solver__errf(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    size_t len = (size_t)sb.st_size;
    if (len == 0) {
        solver__errf(err, errlen, "%s: empty file", path);
        close(fd);
        return NULL;
    }
    void *map = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
    close(fd);
    if (map == MAP_FAILED) {
        solver__errf(err, errlen, "%s: mmap: %s", path, strerror(errno));
        return NULL;
    }
    char e2[200];
    solver_lexicon *lex = solver_lexicon_from_buffer(map, len, e2, sizeof e2);
    if (!lex) {
        solver__errf(err, errlen, "%s: %s", path, e2);
        munmap(map, len);
        return NULL;
    }
    lex->map = map;
    lex->map_len = len;
    return lex;
}

void solver_lexicon_free(solver_lexicon *lex)
{
    if (!lex)
        return;
    if (lex->map)
        munmap(lex->map, lex->map_len);
    free(lex->nm);
    free(lex->sig);
    free(lex->sub);
    free(lex->pw_start);
    free(lex->pw_ent);
    free(lex->pw_word);
    free(lex);
}

size_t solver_lexicon_word_count(const solver_lexicon *lex)
{
    return lex->word_count;
}
size_t solver_lexicon_node_count(const solver_lexicon *lex)
{
    return lex->node_count;
}

bool solver_lexicon_has(const solver_lexicon *lex, const char *word)
{
    const uint32_t *nodes = lex->nodes;
    uint32_t list = SOLVER__ARC(nodes[0]);
    uint32_t node = 0;
    size_t n = 0;
    for (const char *p = word; *p; p++, n++) {
        unsigned c = (unsigned char)*p;
        if (c >= 'A' && c <= 'Z')
            c += 'a' - 'A';
        if (c < 'a' || c > 'z' || n >= SOLVER_DIM)
            return false;
        uint32_t i = solver__find(nodes, list, c - 'a' + 1);
        if (!i)
            return false;
        node = nodes[i];
        list = SOLVER__ARC(node);
    }
    return n >= 2 && (node & SOLVER__ACCEPTS);
}

/* Child with tile t of the list at idx, through the rank index (0: none). */
static inline uint32_t child(const uint64_t *nm, uint32_t idx, unsigned t)
{
    if (!idx)
        return 0;
    uint32_t have = SOLVER__NM_MASK(nm[idx]);
    if (!((have >> t) & 1))
        return 0;
    return idx + (uint32_t)__builtin_popcount(have & ((1u << t) - 1));
}

/* Letters L with prefix+L+suffix in the DAWG: walk the prefix once, then try
 * each child.  Called only when a tile lands next to the square (board
 * updates in self-play and game replay), so children are found by rank
 * rather than by scanning sibling lists. */
uint32_t solver__cross_set(const solver_lexicon *lex, const uint8_t *prefix, int plen,
                           const uint8_t *suffix, int slen)
{
    const uint64_t *nm = lex->nm;
    if (slen > plen) {
        /* The GADDAG holds every word reversed (rev(suffix), the letter,
         * rev(prefix)): walking the longer side once first leaves only the
         * shorter one to walk per letter. */
        uint32_t list = SOLVER__ARC(SOLVER__NM_NODE(nm[1]));
        for (int i = slen - 1; i >= 0; i--) {
            uint32_t k = child(nm, list, suffix[i]);
            if (!k)
                return 0;
            list = SOLVER__ARC(SOLVER__NM_NODE(nm[k]));
        }
        if (!list)
            return 0;
        uint32_t mask = SOLVER__NM_MASK(nm[list]), set = 0;
        for (uint32_t h = mask & SOLVER__ALL_LETTERS; h; h &= h - 1) {
            unsigned t = (unsigned)__builtin_ctz(h);
            uint32_t cur = SOLVER__NM_CHILD(nm, list, mask, t);
            int j = plen - 1;
            for (; j >= 0; j--) {
                uint32_t k = child(nm, SOLVER__ARC(cur), prefix[j]);
                if (!k)
                    break;
                cur = SOLVER__NM_NODE(nm[k]);
            }
            if (j < 0 && (cur & SOLVER__ACCEPTS))
                set |= 1u << t;
        }
        return set;
    }
    uint32_t list = SOLVER__ARC(SOLVER__NM_NODE(nm[0]));
    for (int i = 0; i < plen; i++) {
        uint32_t k = child(nm, list, prefix[i]);
        if (!k)
            return 0;
        list = SOLVER__ARC(SOLVER__NM_NODE(nm[k]));
    }
    uint32_t set = 0;
    if (!list)
        return 0;
    for (uint32_t i = list;; i++) {
        uint32_t nd = SOLVER__NM_NODE(nm[i]);
        uint32_t cur = nd;
        int j = 0;
        for (; j < slen; j++) {
            uint32_t k = child(nm, SOLVER__ARC(cur), suffix[j]);
            if (!k)
                break;
            cur = SOLVER__NM_NODE(nm[k]);
        }
        if (j == slen && (cur & SOLVER__ACCEPTS))
            set |= 1u << SOLVER__TILE(nd);
        if (nd & SOLVER__IS_END)
            break;
    }
    return set;
}
