/* evalkit._native: the compiled kernels of evalkit's readers (built by setup.py; optional, each has a
 * pure-Python twin that gives the same results).
 *
 * Id coding, for evalkit/ids.py:
 * factorize(chunks, codes, seed) -> uniques
 *     Codes of the UTF-8 strings of an Arrow string column, given as a list of its chunks' (int32
 *     offsets, data) buffers, in first-seen order, written to ``codes`` (int64, one per row); returns
 *     the list of the unique strings as str, in code order.
 * positions(values, universe, out, seed)
 *     For each str of the list ``values``, its index in the list ``universe`` of distinct str (-1 when
 *     absent), written to ``out`` (int64).
 *
 * One open-addressing table (linear probing, load <= 1/2) whose 24-byte slots keep the id's length
 * and first 16 bytes inline, so that the ids of most collections (<= 16 bytes) are compared without
 * a second memory access; a row equal to the row before takes its code unhashed (a run's query ids);
 * the hashes of 16 rows are computed before their slots are probed, with the slots
 * prefetched, so that the cache misses of a table larger than the cache overlap (a hash join's batch
 * probing). The hash is seeded per process (``seed``), so crafted ids cannot force collisions. The
 * results do not depend on the seed. Byte-wise equality decides; the GIL is released while working.
 *
 * First occurrences, for evalkit/ranking.py:
 * first_occurrences(qidx, didx, n_docs, first) -> repeats
 *     For rows grouped by query (each query's rows contiguous; int64 query and document codes), marks in
 *     ``first`` (uint8) the rows whose document is not repeated earlier in its query, and returns how
 *     many are. One pass; a per-document stamp (the query code that saw it last) replaces a sort.
 *
 * Blank profile, for evalkit/formats/tables.py:
 * blank_profile(data) -> (spaces, tabs, other_blanks, space_gap, tab_gap)
 *     Whether ``data`` holds a space, a tab, another ASCII blank (CR, VT, FF); and, for space and for
 *     tab, whether a line has an empty field with it as the delimiter: two in a row, or one at the
 *     start or end of a line. One pass over the bytes.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define BATCH 16

typedef struct {
    uint64_t head[2]; /* the id's first 16 bytes, zero-padded */
    uint32_t length;  /* the id's length in bytes (ids of 2^32 bytes and more are refused) */
    uint32_t code;    /* code + 1; 0 marks an empty slot */
} Slot;

typedef struct {
    Slot *slots;
    uint64_t mask;
    int64_t used;
} Table;

static inline uint64_t mum(uint64_t a, uint64_t b) {
    __uint128_t r = (__uint128_t)a * b;
    return (uint64_t)r ^ (uint64_t)(r >> 64);
}

static inline uint64_t load_prefix(const unsigned char *p, int64_t n) {
    uint64_t w = 0;
    memcpy(&w, p, n >= 8 ? 8 : (size_t)n);
    return w;
}

/* A slot for the id at p/n (its head, length and code + 1). */
static inline Slot make_slot(const unsigned char *p, int64_t n, int64_t code) {
    Slot s = {{load_prefix(p, n), n > 8 ? load_prefix(p + 8, n - 8) : 0}, (uint32_t)n, (uint32_t)(code + 1)};
    return s;
}

static inline uint64_t hash_bytes(const unsigned char *p, int64_t n, uint64_t seed) {
    uint64_t h = seed ^ ((uint64_t)n * 0x9E3779B97F4A7C15ULL);
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, p + i, 8);
        h = mum(h ^ w, 0xa0761d6478bd642fULL);
    }
    if (i < n) h = mum(h ^ load_prefix(p + i, n - i), 0xe7037ed1a0b428dbULL);
    return mum(h, 0x8ebc6af09c88c6e3ULL);
}

static int table_init(Table *t, int64_t expected) {
    uint64_t cap = 1 << 10;
    while (cap < (uint64_t)expected * 2) cap <<= 1;
    t->slots = calloc(cap, sizeof(Slot));
    t->mask = cap - 1;
    t->used = 0;
    return t->slots != NULL;
}

/* Double the table; the slots are re-placed by their stored hash bits (the table's index bits are
 * always below 32 for a table under 2^32 slots, which 2^31 ids never exceed). */
static int table_grow(Table *t, const uint64_t *full_hash) {
    uint64_t cap = (t->mask + 1) * 2, mask = cap - 1;
    Slot *slots = calloc(cap, sizeof(Slot));
    if (slots == NULL) return 0;
    for (uint64_t k = 0; k <= t->mask; k++) {
        Slot s = t->slots[k];
        if (!s.code) continue;
        uint64_t i = full_hash[s.code - 1] & mask;
        while (slots[i].code) i = (i + 1) & mask;
        slots[i] = s;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 1;
}

/* Where the bytes of each code's id are: its first occurrence (factorize) or the universe's str (positions). */
typedef struct {
    const unsigned char **texts;
    const int64_t *lengths;
} Ids;

static inline int64_t probe(const Table *t, const Ids *ids, const unsigned char *p, int64_t n, uint64_t h, uint64_t *slot) {
    uint64_t head0 = load_prefix(p, n), head1 = n > 8 ? load_prefix(p + 8, n - 8) : 0, i = h & t->mask;
    for (;;) {
        const Slot *s = &t->slots[i];
        if (!s->code) {
            *slot = i;
            return -1;
        }
        if (s->head[0] == head0 && s->head[1] == head1 && s->length == (uint32_t)n) {
            int64_t code = s->code - 1; /* ids of <= 16 bytes are equal here; longer ones compare their tails */
            if (n <= 16 || memcmp(p + 16, ids->texts[code] + 16, (size_t)(n - 16)) == 0) return code;
        }
        i = (i + 1) & t->mask;
    }
}

/* The Arrow string chunks of one column: (offsets, data) buffers, kept until released. */
typedef struct {
    Py_ssize_t n_chunks;
    Py_buffer *buffers; /* 2 per chunk */
    int64_t rows;
} Chunks;

static void chunks_release(Chunks *c) {
    for (Py_ssize_t k = 0; k < 2 * c->n_chunks; k++)
        if (c->buffers[k].obj) PyBuffer_Release(&c->buffers[k]);
    free(c->buffers);
}

static int chunks_get(PyObject *list, Chunks *c) {
    c->n_chunks = PyList_GET_SIZE(list);
    c->rows = 0;
    c->buffers = calloc((size_t)(2 * c->n_chunks + 1), sizeof(Py_buffer));
    if (!c->buffers) {
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t k = 0; k < c->n_chunks; k++) {
        PyObject *pair = PyList_GET_ITEM(list, k);
        if (!PyTuple_Check(pair) || PyTuple_GET_SIZE(pair) != 2) {
            PyErr_SetString(PyExc_TypeError, "factorize: chunks must be (offsets, data) pairs");
            return 0;
        }
        Py_buffer *off = &c->buffers[2 * k], *data = &c->buffers[2 * k + 1];
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(pair, 0), off, PyBUF_SIMPLE) < 0) return 0;
        if (PyObject_GetBuffer(PyTuple_GET_ITEM(pair, 1), data, PyBUF_SIMPLE) < 0) return 0;
        Py_ssize_t n = off->len / (Py_ssize_t)sizeof(int32_t) - 1;
        const int32_t *o = off->buf;
        if (n < 0 || (n > 0 && (o[0] < 0 || o[n] > data->len))) {
            PyErr_SetString(PyExc_ValueError, "factorize: offsets beyond the data buffer");
            return 0;
        }
        for (Py_ssize_t r = 0; r < n; r++)
            if (o[r + 1] < o[r]) {
                PyErr_SetString(PyExc_ValueError, "factorize: decreasing offsets");
                return 0;
            }
        c->rows += n;
    }
    return 1;
}

static PyObject *factorize(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *list;
    Py_buffer codes_buf;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "O!w*K", &PyList_Type, &list, &codes_buf, &seed)) return NULL;
    Chunks c = {0};
    PyObject *ret = NULL;
    if (!chunks_get(list, &c)) goto done;
    int64_t n = c.rows;
    if (n >= INT32_MAX || codes_buf.len < n * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "factorize: output buffers too small (or over 2^31 rows)");
        goto done;
    }
    int64_t *codes = codes_buf.buf, used = -1;
    size_t room = (size_t)(n > 0 ? n : 1);
    const unsigned char **texts = malloc(sizeof(*texts) * room);
    int64_t *lengths = malloc(sizeof(*lengths) * room);
    uint64_t *full = malloc(sizeof(*full) * room);
    Table t = {0};
    Ids ids = {texts, lengths};
    Py_BEGIN_ALLOW_THREADS
    if (texts && lengths && full && table_init(&t, 1 << 12)) {
        int64_t row0 = 0, prev_len = -1;
        const unsigned char *prev = NULL;
        uint64_t hashes[BATCH];
        unsigned char same[BATCH];
        for (Py_ssize_t k = 0; k < c.n_chunks && used != -2; k++) {
            const int32_t *o = c.buffers[2 * k].buf;
            const unsigned char *d = c.buffers[2 * k + 1].buf;
            int64_t rows = c.buffers[2 * k].len / (Py_ssize_t)sizeof(int32_t) - 1;
            for (int64_t base = 0; base < rows && used != -2; base += BATCH) {
                int64_t m = rows - base < BATCH ? rows - base : BATCH;
                for (int64_t j = 0; j < m; j++) {
                    int64_t r = base + j, len = o[r + 1] - o[r];
                    const unsigned char *p = d + o[r];
                    /* a run repeats its query id row after row: equal to the row before, no hashing */
                    same[j] = len == prev_len && (p == prev || memcmp(p, prev, (size_t)len) == 0);
                    prev = p;
                    prev_len = len;
                    if (same[j]) continue;
                    hashes[j] = hash_bytes(p, len, seed);
                    __builtin_prefetch(&t.slots[hashes[j] & t.mask]);
                }
                for (int64_t j = 0; j < m; j++) {
                    int64_t r = base + j, len = o[r + 1] - o[r];
                    const unsigned char *p = d + o[r];
                    if (same[j]) {
                        codes[row0 + r] = codes[row0 + r - 1];
                        continue;
                    }
                    uint64_t slot;
                    int64_t code = probe(&t, &ids, p, len, hashes[j], &slot);
                    if (code < 0) {
                        code = t.used++;
                        t.slots[slot] = make_slot(p, len, code);
                        texts[code] = p;
                        lengths[code] = len;
                        full[code] = hashes[j];
                        if ((uint64_t)t.used * 2 > t.mask + 1 && !table_grow(&t, full)) {
                            used = -2;
                            break;
                        }
                    }
                    codes[row0 + r] = code;
                }
            }
            row0 += rows;
        }
        if (used != -2) used = t.used;
    } else {
        used = -2;
    }
    Py_END_ALLOW_THREADS
    if (used == -2) {
        PyErr_NoMemory();
    } else if ((ret = PyList_New(used)) != NULL) { /* the unique ids as str, in code order */
        for (int64_t code = 0; code < used; code++) {
            PyObject *text = PyUnicode_DecodeUTF8((const char *)texts[code], lengths[code], "strict");
            if (text == NULL) {
                Py_CLEAR(ret);
                break;
            }
            PyList_SET_ITEM(ret, code, text);
        }
    }
    free(t.slots);
    free(texts);
    free(lengths);
    free(full);
done:
    chunks_release(&c);
    PyBuffer_Release(&codes_buf);
    return ret;
}

/* UTF-8 texts and lengths of a list of str (borrowed from the str objects, which the list keeps). */
static int utf8_of(PyObject *list, const unsigned char ***texts, int64_t **lengths) {
    Py_ssize_t n = PyList_GET_SIZE(list);
    *texts = malloc(sizeof(char *) * (size_t)(n > 0 ? n : 1));
    *lengths = malloc(sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
    if (!*texts || !*lengths) {
        PyErr_NoMemory();
        return 0;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        if (!PyUnicode_Check(item)) {
            PyErr_SetString(PyExc_TypeError, "positions: ids must be str");
            return 0;
        }
        Py_ssize_t size;
        const char *text = PyUnicode_AsUTF8AndSize(item, &size);
        if (text == NULL) return 0;
        if ((uint64_t)size >= UINT32_MAX) {
            PyErr_SetString(PyExc_ValueError, "positions: an id of 4 GB or more");
            return 0;
        }
        (*texts)[i] = (const unsigned char *)text;
        (*lengths)[i] = size;
    }
    return 1;
}

static PyObject *positions(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *values, *universe;
    Py_buffer out;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "O!O!w*K", &PyList_Type, &values, &PyList_Type, &universe, &out, &seed)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(values), u = PyList_GET_SIZE(universe);
    const unsigned char **vt = NULL, **ut = NULL;
    int64_t *vl = NULL, *ul = NULL, *result = out.buf;
    PyObject *ret = NULL;
    Table t = {0};
    if (out.len < n * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "positions: output buffer too small");
    } else if (utf8_of(values, &vt, &vl) && utf8_of(universe, &ut, &ul)) {
        int ok = table_init(&t, u);
        Ids ids = {ut, ul};
        Py_BEGIN_ALLOW_THREADS
        if (ok) {
            for (Py_ssize_t k = 0; k < u; k++) { /* the universe holds distinct ids: a repeat keeps its first index */
                const unsigned char *p = ut[k];
                uint64_t h = hash_bytes(p, ul[k], seed), slot;
                if (probe(&t, &ids, p, ul[k], h, &slot) < 0) {
                    t.slots[slot] = make_slot(p, ul[k], k);
                    t.used++;
                }
            }
            uint64_t hashes[BATCH];
            for (Py_ssize_t base = 0; base < n; base += BATCH) {
                Py_ssize_t m = n - base < BATCH ? n - base : BATCH;
                for (Py_ssize_t j = 0; j < m; j++) {
                    hashes[j] = hash_bytes(vt[base + j], vl[base + j], seed);
                    __builtin_prefetch(&t.slots[hashes[j] & t.mask]);
                }
                for (Py_ssize_t j = 0; j < m; j++) {
                    uint64_t slot;
                    result[base + j] = probe(&t, &ids, vt[base + j], vl[base + j], hashes[j], &slot);
                }
            }
        }
        Py_END_ALLOW_THREADS
        if (ok) {
            ret = Py_None;
            Py_INCREF(ret);
        } else {
            PyErr_NoMemory();
        }
    }
    free(t.slots);
    free(vt);
    free(vl);
    free(ut);
    free(ul);
    PyBuffer_Release(&out);
    return ret;
}

typedef struct {
    int spaces, tabs, others, space_gap, tab_gap;
} BlankProfile;

/* Bytes i0..n-1 of p, one at a time, after ``prev`` (the byte before i0, '\n' at the data's start). */
static void blank_tail(const unsigned char *p, Py_ssize_t i0, Py_ssize_t n, unsigned char prev, BlankProfile *b) {
    for (Py_ssize_t i = i0; i < n; i++) {
        unsigned char c = p[i];
        if (c == ' ' || c == '\t') {
            if (c == ' ') b->spaces = 1; else b->tabs = 1;
            if (prev == c || prev == '\n') {
                if (c == ' ') b->space_gap = 1; else b->tab_gap = 1;
            }
        } else if (c == '\n' && (prev == ' ' || prev == '\t')) {
            if (prev == ' ') b->space_gap = 1; else b->tab_gap = 1;
        } else if (c == '\r' || c == '\v' || c == '\f') {
            b->others = 1;
        }
        prev = c;
    }
    if (prev == ' ') b->space_gap = 1;
    if (prev == '\t') b->tab_gap = 1;
}

#ifdef __SSE2__
#include <emmintrin.h>
/* 16 bytes at a time: one bit per byte for space, tab, newline and the other blanks; a gap is a
 * delimiter whose previous byte (the bit below, carried across blocks) is the same delimiter or a
 * newline, or a newline after a delimiter. Returns how many bytes it covered. */
static Py_ssize_t blank_blocks(const unsigned char *p, Py_ssize_t n, BlankProfile *b) {
    const __m128i sp_v = _mm_set1_epi8(' '), tb_v = _mm_set1_epi8('\t'), nl_v = _mm_set1_epi8('\n');
    const __m128i cr_v = _mm_set1_epi8('\r'), vt_v = _mm_set1_epi8('\v'), ff_v = _mm_set1_epi8('\f');
    unsigned seen_sp = 0, seen_tb = 0, seen_ot = 0, gap_sp = 0, gap_tb = 0, c_sp = 0, c_tb = 0, c_nl = 1;
    Py_ssize_t i = 0;
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(p + i));
        unsigned sp = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, sp_v));
        unsigned tb = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, tb_v));
        unsigned nl = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, nl_v));
        seen_ot |= (unsigned)_mm_movemask_epi8(_mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, cr_v), _mm_cmpeq_epi8(v, vt_v)),
                                                            _mm_cmpeq_epi8(v, ff_v)));
        unsigned prev_sp = (sp << 1) | c_sp, prev_tb = (tb << 1) | c_tb, prev_nl = (nl << 1) | c_nl;
        gap_sp |= (sp & (prev_sp | prev_nl)) | (nl & prev_sp);
        gap_tb |= (tb & (prev_tb | prev_nl)) | (nl & prev_tb);
        seen_sp |= sp;
        seen_tb |= tb;
        c_sp = sp >> 15;
        c_tb = tb >> 15;
        c_nl = nl >> 15;
    }
    b->spaces |= seen_sp != 0;
    b->tabs |= seen_tb != 0;
    b->others |= seen_ot != 0;
    b->space_gap |= (gap_sp & 0xffff) != 0;
    b->tab_gap |= (gap_tb & 0xffff) != 0;
    return i;
}
#endif

static PyObject *blank_profile(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "y*", &data)) return NULL;
    const unsigned char *p = data.buf;
    Py_ssize_t n = data.len, done = 0;
    BlankProfile b = {0, 0, 0, 0, 0};
    Py_BEGIN_ALLOW_THREADS
#ifdef __SSE2__
    done = blank_blocks(p, n, &b);
#endif
    blank_tail(p, done, n, done > 0 ? p[done - 1] : '\n', &b);
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    return Py_BuildValue("(OOOOO)", b.spaces ? Py_True : Py_False, b.tabs ? Py_True : Py_False, b.others ? Py_True : Py_False,
                         b.space_gap ? Py_True : Py_False, b.tab_gap ? Py_True : Py_False);
}

static PyObject *first_occurrences(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer q, d, out;
    Py_ssize_t n_docs;
    if (!PyArg_ParseTuple(args, "y*y*nw*", &q, &d, &n_docs, &out)) return NULL;
    Py_ssize_t n = q.len / (Py_ssize_t)sizeof(int64_t);
    PyObject *ret = NULL;
    if (d.len != q.len || out.len < n || n_docs < 0) {
        PyErr_SetString(PyExc_ValueError, "first_occurrences: arrays of different lengths");
    } else {
        const int64_t *qidx = q.buf, *didx = d.buf;
        unsigned char *first = out.buf;
        int64_t *stamp = malloc(sizeof(int64_t) * (size_t)(n_docs > 0 ? n_docs : 1));
        Py_ssize_t repeats = 0, bad = 0;
        if (stamp) {
            Py_BEGIN_ALLOW_THREADS
            memset(stamp, 0xff, sizeof(int64_t) * (size_t)(n_docs > 0 ? n_docs : 1)); /* -1: not seen */
            for (Py_ssize_t i = 0; i < n; i++) {
                int64_t doc = didx[i];
                if (doc < 0 || doc >= n_docs || qidx[i] < 0) {
                    bad = 1;
                    break;
                }
                int seen = stamp[doc] == qidx[i];
                first[i] = !seen;
                repeats += seen;
                stamp[doc] = qidx[i];
            }
            Py_END_ALLOW_THREADS
            free(stamp);
            if (bad)
                PyErr_SetString(PyExc_ValueError, "first_occurrences: a code out of range");
            else
                ret = PyLong_FromSsize_t(repeats);
        } else {
            PyErr_NoMemory();
        }
    }
    PyBuffer_Release(&q);
    PyBuffer_Release(&d);
    PyBuffer_Release(&out);
    return ret;
}

static PyMethodDef methods[] = {
    {"first_occurrences", first_occurrences, METH_VARARGS, "first_occurrences(qidx, didx, n_docs, first) -> number of repeated rows"},
    {"blank_profile", blank_profile, METH_VARARGS, "blank_profile(data) -> (spaces, tabs, other_blanks, space_gap, tab_gap)"},
    {"factorize", factorize, METH_VARARGS, "factorize(chunks, codes, seed) -> list of the unique strings"},
    {"positions", positions, METH_VARARGS, "positions(values, universe, out, seed): index of each value in universe, -1 when absent"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "evalkit._native", "Compiled kernels of evalkit's readers (see evalkit/_native.c).", -1, methods,
                                   NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
