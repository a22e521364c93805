/* evalkit._native, id coding (for evalkit/ids.py): Factorizer and positions. See module.c for the
 * module's contents and design. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

#define BATCH 16

typedef struct {
    uint64_t head[2]; /* the id's first 16 bytes, zero-padded */
    uint32_t length;  /* the id's length in bytes (ids of 2^32 bytes and more are refused) */
    uint32_t code;    /* code + 1; 0 marks an empty slot */
} Slot;

/* A table of distinct ids: the hash slots, and per code the id's bytes (in an arena the table owns),
 * length and full hash (to re-place the slots when the table doubles). */
typedef struct {
    Slot *slots;
    uint64_t mask;
    int64_t used, room;
    int64_t *starts, *lengths; /* per code: offset into arena, length */
    uint64_t *hashes;          /* per code */
    unsigned char *arena;
    int64_t arena_used, arena_room;
    uint64_t seed;
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

static void table_free(Table *t) {
    free(t->slots);
    free(t->starts);
    free(t->lengths);
    free(t->hashes);
    free(t->arena);
    memset(t, 0, sizeof(*t));
}

static int table_init(Table *t, int64_t expected, uint64_t seed) {
    memset(t, 0, sizeof(*t));
    uint64_t cap = 1 << 10;
    while (cap < (uint64_t)expected * 2) cap <<= 1;
    t->slots = calloc(cap, sizeof(Slot));
    t->mask = cap - 1;
    t->seed = seed;
    return t->slots != NULL;
}

/* Double the slots, re-placing each code by its full hash. */
static int table_grow(Table *t) {
    uint64_t cap = (t->mask + 1) * 2, mask = cap - 1;
    Slot *slots = calloc(cap, sizeof(Slot));
    if (slots == NULL) return 0;
    for (uint64_t k = 0; k <= t->mask; k++) {
        Slot s = t->slots[k];
        if (!s.code) continue;
        uint64_t i = t->hashes[s.code - 1] & mask;
        while (slots[i].code) i = (i + 1) & mask;
        slots[i] = s;
    }
    free(t->slots);
    t->slots = slots;
    t->mask = mask;
    return 1;
}

/* The code of the id at p/n with hash h, or -1 with *slot the empty slot where it would go. */
static inline int64_t table_probe(const Table *t, const unsigned char *p, int64_t n, uint64_t h, uint64_t *slot) {
    uint64_t head0 = load_prefix(p, n), head1 = n > 8 ? load_prefix(p + 8, n - 8) : 0, i = h & t->mask;
    for (;;) {
        const Slot *s = &t->slots[i];
        if (!s->code) {
            *slot = i;
            return -1;
        }
        if (s->head[0] == head0 && s->head[1] == head1 && s->length == (uint32_t)n) {
            int64_t code = s->code - 1; /* ids of <= 16 bytes are equal here; longer ones compare their tails */
            if (n <= 16 || memcmp(p + 16, t->arena + t->starts[code] + 16, (size_t)(n - 16)) == 0) return code;
        }
        i = (i + 1) & t->mask;
    }
}

/* Give the id at p/n (hash h, not in the table, its empty slot ``slot``) the next code; -1 when out of memory. */
static int64_t table_add(Table *t, const unsigned char *p, int64_t n, uint64_t h, uint64_t slot) {
    if (t->used == t->room) {
        int64_t room = t->room ? 2 * t->room : 1024;
        int64_t *starts = realloc(t->starts, sizeof(int64_t) * (size_t)room);
        if (starts) t->starts = starts;
        int64_t *lengths = realloc(t->lengths, sizeof(int64_t) * (size_t)room);
        if (lengths) t->lengths = lengths;
        uint64_t *hashes = realloc(t->hashes, sizeof(uint64_t) * (size_t)room);
        if (hashes) t->hashes = hashes;
        if (!starts || !lengths || !hashes) return -1;
        t->room = room;
    }
    if (t->arena_used + n > t->arena_room) {
        int64_t room = t->arena_room ? 2 * t->arena_room : 1 << 16;
        while (room < t->arena_used + n) room *= 2;
        unsigned char *arena = realloc(t->arena, (size_t)room);
        if (!arena) return -1;
        t->arena = arena;
        t->arena_room = room;
    }
    int64_t code = t->used++;
    memcpy(t->arena + t->arena_used, p, (size_t)n);
    t->starts[code] = t->arena_used;
    t->lengths[code] = n;
    t->hashes[code] = h;
    t->arena_used += n;
    Slot s = {{load_prefix(p, n), n > 8 ? load_prefix(p + 8, n - 8) : 0}, (uint32_t)n, (uint32_t)(code + 1)};
    t->slots[slot] = s;
    if ((uint64_t)t->used * 2 > t->mask + 1 && !table_grow(t)) return -1;
    return code;
}

/* ------------------------------------------------------------------ Factorizer */

typedef struct {
    PyObject_HEAD
    Table table;
} Factorizer;

static void Factorizer_dealloc(Factorizer *self) {
    table_free(&self->table);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Factorizer_init(Factorizer *self, PyObject *args, PyObject *kwargs) {
    (void)kwargs;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "K", &seed)) return -1;
    table_free(&self->table);
    if (!table_init(&self->table, 1 << 12, seed)) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* add(offsets, data, codes): code the rows of one Arrow string chunk (int32 offsets into data) into
 * ``codes`` (int64, one per row), continuing the codes of earlier calls. */
static PyObject *Factorizer_add(Factorizer *self, PyObject *args) {
    Py_buffer off, data, out;
    if (!PyArg_ParseTuple(args, "y*y*w*", &off, &data, &out)) return NULL;
    Table *t = &self->table;
    int64_t rows = off.len / (Py_ssize_t)sizeof(int32_t) - 1;
    const int32_t *o = off.buf;
    const unsigned char *d = data.buf;
    int64_t *codes = out.buf;
    const char *error = NULL;
    if (t->slots == NULL) error = "Factorizer: not initialised";
    else if (rows < 0 || out.len < rows * (Py_ssize_t)sizeof(int64_t)) error = "Factorizer.add: codes shorter than the chunk";
    else if (rows > 0 && (o[0] < 0 || o[rows] > data.len)) error = "Factorizer.add: offsets beyond the data";
    for (int64_t r = 0; !error && r < rows; r++)
        if (o[r + 1] < o[r]) error = "Factorizer.add: decreasing offsets";
    int failed = 0;
    if (!error) {
        Py_BEGIN_ALLOW_THREADS
        int64_t prev_len = -1;
        const unsigned char *prev = NULL;
        uint64_t hashes[BATCH];
        unsigned char same[BATCH];
        for (int64_t base = 0; base < rows && !failed; base += BATCH) {
            int64_t m = rows - base < BATCH ? rows - base : BATCH;
            for (int64_t j = 0; j < m; j++) {
                int64_t r = base + j, len = o[r + 1] - o[r];
                const unsigned char *p = d + o[r];
                /* a run repeats its query id row after row: equal to the row before, no hashing */
                same[j] = len == prev_len && (p == prev || memcmp(p, prev, (size_t)len) == 0);
                prev = p;
                prev_len = len;
                if (same[j]) continue;
                hashes[j] = hash_bytes(p, len, t->seed);
                __builtin_prefetch(&t->slots[hashes[j] & t->mask]);
            }
            for (int64_t j = 0; j < m; j++) {
                int64_t r = base + j, len = o[r + 1] - o[r];
                if (same[j]) {
                    codes[r] = codes[r - 1];
                    continue;
                }
                uint64_t slot;
                int64_t code = table_probe(t, d + o[r], len, hashes[j], &slot);
                if (code < 0 && (code = table_add(t, d + o[r], len, hashes[j], slot)) < 0) {
                    failed = 1;
                    break;
                }
                codes[r] = code;
            }
        }
        Py_END_ALLOW_THREADS
    }
    PyBuffer_Release(&off);
    PyBuffer_Release(&data);
    PyBuffer_Release(&out);
    if (error) return PyErr_Format(PyExc_ValueError, "%s", error);
    if (failed) return PyErr_NoMemory();
    Py_RETURN_NONE;
}

/* uniques() -> the distinct ids seen so far as str, in code order (first-seen order). */
static PyObject *Factorizer_uniques(Factorizer *self, PyObject *unused) {
    (void)unused;
    Table *t = &self->table;
    PyObject *list = PyList_New(t->used);
    for (int64_t code = 0; list && code < t->used; code++) {
        PyObject *text = PyUnicode_DecodeUTF8((const char *)t->arena + t->starts[code], t->lengths[code], "strict");
        if (text == NULL) {
            Py_CLEAR(list);
            break;
        }
        PyList_SET_ITEM(list, code, text);
    }
    return list;
}

static PyMethodDef Factorizer_methods[] = {
    {"add", (PyCFunction)Factorizer_add, METH_VARARGS, "add(offsets, data, codes): code one Arrow string chunk's rows"},
    {"uniques", (PyCFunction)Factorizer_uniques, METH_NOARGS, "uniques() -> the distinct ids so far, as str, in code order"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject FactorizerType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "evalkit._native.Factorizer",
    .tp_basicsize = sizeof(Factorizer),
    .tp_dealloc = (destructor)Factorizer_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Factorizer(seed): codes string ids in first-seen order, chunk after chunk; owns a copy of each distinct id",
    .tp_methods = Factorizer_methods,
    .tp_init = (initproc)Factorizer_init,
    .tp_new = PyType_GenericNew,
};

/* ------------------------------------------------------------------ positions */

PyObject *positions(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *values, *universe;
    Py_buffer out;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "O!O!w*K", &PyList_Type, &values, &PyList_Type, &universe, &out, &seed)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(values), u = PyList_GET_SIZE(universe);
    int64_t *result = out.buf;
    PyObject *ret = NULL;
    Table t;
    int ok = table_init(&t, u, seed);
    if (!ok) PyErr_NoMemory();
    else if (out.len < n * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "positions: output buffer too small");
        ok = 0;
    }
    /* the universe into the table (a repeated id keeps its first index; codes = universe indices while
     * all are distinct, which the caller guarantees: a unique array) */
    for (Py_ssize_t k = 0; ok && k < u; k++) {
        PyObject *item = PyList_GET_ITEM(universe, k);
        Py_ssize_t size;
        const char *text = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &size) : NULL;
        if (text == NULL || (uint64_t)size >= UINT32_MAX) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "positions: ids must be str");
            ok = 0;
            break;
        }
        uint64_t h = hash_bytes((const unsigned char *)text, size, seed), slot;
        if (table_probe(&t, (const unsigned char *)text, size, h, &slot) >= 0 || table_add(&t, (const unsigned char *)text, size, h, slot) != k) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "positions: the universe repeats an id");
            ok = 0;
        }
    }
    /* the values, 16 at a time: their slots prefetched before they are probed (as in Factorizer.add) */
    for (Py_ssize_t base = 0; ok && base < n; base += BATCH) {
        Py_ssize_t m = n - base < BATCH ? n - base : BATCH;
        const unsigned char *texts[BATCH];
        Py_ssize_t sizes[BATCH];
        uint64_t hashes[BATCH];
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *item = PyList_GET_ITEM(values, base + j);
            const char *text = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &sizes[j]) : NULL;
            if (text == NULL) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "positions: ids must be str");
                ok = 0;
                break;
            }
            texts[j] = (const unsigned char *)text;
            hashes[j] = hash_bytes(texts[j], sizes[j], seed);
            __builtin_prefetch(&t.slots[hashes[j] & t.mask]);
        }
        for (Py_ssize_t j = 0; ok && j < m; j++) {
            uint64_t slot;
            result[base + j] = (uint64_t)sizes[j] >= UINT32_MAX ? -1 /* longer than any id the table holds */
                                                                 : table_probe(&t, texts[j], sizes[j], hashes[j], &slot);
        }
    }
    if (ok) {
        ret = Py_None;
        Py_INCREF(ret);
    }
    table_free(&t);
    PyBuffer_Release(&out);
    return ret;
}
