/* evalkit.native._native, the reader of whitespace tables (TREC runs and qrels, for evalkit/io/formats/tables.py):
 * read_table. See module.c for the module's contents, table.h for the id tables and lexer.h for numbers and blanks.
 *
 * read_table(data, n_fields, extra, keep, numeric, seed, threads) -> None or (rows, n_extra, first_extra, uniques, codes, values)
 *     One pass over ``data`` (LF-separated UTF-8, as evalkit/io/textio.py hands it over), with the Python reader's
 *     rules: fields split on ASCII whitespace (space, tab, CR, VT, FF, as bytes.split), blank lines and lines whose
 *     first field starts with '#' skipped, ``n_fields`` fields a line (more allowed with ``extra``: counted, the
 *     first such line kept). Each column of the tuple ``keep`` is coded in first-seen order into its bytearray of
 *     ``codes`` (native int64, one per row; ``uniques`` gives each column's distinct ids as str, in code order); the
 *     column ``numeric`` must be a finite decimal number as the Python reader's pattern has it
 *     ([+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?) and goes to the bytearray ``values`` (native float64).
 *     The outputs are allocated here, before the pass and without touching them (no numpy needed: the read-ahead
 *     thread of a command calls this while the command still imports numpy), and cut to ``rows`` after. Returns None where
 *     the Python reader must decide (a line with too few or too many fields, a field that is not such a number, an id
 *     that is not UTF-8): it names the line. Numbers of at most 19 significant digits whose value is an exact
 *     integer of <= 2^53 times or divided by 10^k (k <= 22) are converted here, correctly rounded (one IEEE
 *     operation on exact operands); the others by Python's own float conversion after the pass. With ``threads``
 *     2, the bytes after the first newline past the middle are read at the same time on a second thread, with
 *     tables of their own joined to the first part's after (read_all, finish_split): the same results. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define EVALKIT_THREADS 1
#endif

#include "native.h"
#include "lexer.h"
#include "table.h"

#define MAX_KEEP 4

typedef struct {
    int64_t row, start, length;
} SlowNumber;

#define ROWS 32 /* rows coded together */

/* The reader's state: the columns' id tables and outputs, the batch of rows whose ids wait for their probes. */
typedef struct {
    const unsigned char *data, *origin; /* this reader's part of the bytes; the whole (slow numbers' offsets count from it) */
    int n_fields, extra, numeric, n_keep, keep[MAX_KEEP];
    Table tables[MAX_KEEP];
    int64_t *codes[MAX_KEEP];
    double *values;
    int64_t room, rows, line, n_extra, first_extra;
    SlowNumber *slow;
    int64_t n_slow, slow_room;
    int refused, no_memory, no_room;
    /* rows rows..rows+in_batch-1: their ids, hashes (slots prefetched when the row was read) and whether each
     * equals the id of the row before (a run's query id, row after row: no hashing) */
    int64_t in_batch;
    Token ids[ROWS][MAX_KEEP], prev[MAX_KEEP];
    uint64_t hashes[ROWS][MAX_KEEP];
    unsigned char same[ROWS][MAX_KEEP];
} Reader;

/* Code the ids of the batch's rows (their slots were prefetched a batch ago, so the cache misses overlap). */
static void flush_batch(Reader *r) {
    for (int k = 0; k < r->n_keep && !r->no_memory; k++) {
        Table *t = &r->tables[k];
        int64_t *column = r->codes[k];
        for (int64_t j = 0; j < r->in_batch; j++) {
            int64_t row = r->rows + j;
            if (r->same[j][k]) {
                column[row] = column[row - 1];
                continue;
            }
            const Token *id = &r->ids[j][k];
            uint64_t slot, h = r->hashes[j][k];
            int64_t code = id->length >= UINT32_MAX ? -1 : table_probe(t, id->start, id->length, h, &slot);
            if (code < 0 && (id->length >= UINT32_MAX || (code = table_add(t, id->start, id->length, h, slot)) < 0)) {
                r->no_memory = 1;
                break;
            }
            column[row] = code;
        }
    }
    r->rows += r->in_batch;
    r->in_batch = 0;
}

/* One line's fields (``nf`` of them, the first MAX_FIELDS in ``fields``); 0 to stop (refused, out of memory or room). */
static int take_line(Reader *r, const Token *fields, int nf) {
    r->line++;
    if (nf == 0 || fields[0].start[0] == '#') return 1; /* blank or comment */
    if (nf != r->n_fields) {
        if (nf < r->n_fields || !r->extra) return !(r->refused = 1);
        r->n_extra++;
        if (!r->first_extra) r->first_extra = r->line;
    }
    int64_t row = r->rows + r->in_batch;
    if (row >= r->room) return !(r->no_room = 1);
    const Token *number = &fields[r->numeric];
    int kind = parse_number(number->start, number->start + number->length, &r->values[row]);
    if (kind == NUMBER_BAD) return !(r->refused = 1);
    if (kind == NUMBER_SLOW) {
        if (r->n_slow == r->slow_room) {
            int64_t grown = r->slow_room ? 2 * r->slow_room : 1024;
            SlowNumber *more = realloc(r->slow, sizeof(SlowNumber) * (size_t)grown);
            if (!more) return !(r->no_memory = 1);
            r->slow = more;
            r->slow_room = grown;
        }
        r->slow[r->n_slow++] = (SlowNumber){row, number->start - r->origin, number->length};
    }
    int64_t j = r->in_batch++;
    for (int k = 0; k < r->n_keep; k++) {
        const Token *id = &fields[r->keep[k]];
        Token *prev = &r->prev[k];
        r->ids[j][k] = *id;
        r->same[j][k] = id->length == prev->length && memcmp(id->start, prev->start, (size_t)id->length) == 0;
        *prev = *id;
        if (!r->same[j][k]) {
            Table *t = &r->tables[k];
            r->hashes[j][k] = hash_bytes(id->start, id->length, t->seed);
            __builtin_prefetch(&t->slots[r->hashes[j][k] & t->mask]);
        }
    }
    if (r->in_batch == ROWS) flush_batch(r);
    return !r->no_memory;
}

static int take_reader_line(void *state, const Token *fields, int nf) { return take_line(state, fields, nf); }

/* Every line of data[0:n] (lexer.h's lex_lines) into the reader. */
static void read_lines(Reader *r, int64_t n) {
    unsigned marks = 0; /* not asked for here */
    lex_lines(r->data, n, r, take_reader_line, &marks);
}

/* Newlines in p[0:n] (a popcount of the 64-byte masks). */
static int64_t count_newlines(const unsigned char *p, int64_t n) {
    int64_t count = 0, i = 0;
    unsigned marks = 0; /* not asked for here */
    for (; i + 64 <= n; i += 64) {
        uint64_t newlines;
        blank_mask(p + i, &newlines, &marks);
        count += __builtin_popcountll(newlines);
    }
    for (; i < n; i++) count += p[i] == '\n';
    return count;
}

static void read_part(Reader *r, int64_t n) {
    read_lines(r, n);
    if (!r->refused && !r->no_memory && !r->no_room) flush_batch(r);
}

/* The second part of a split read: its rows go after the newlines of the first part (an upper bound of the first
 * part's rows, closed up by finish_split), so that both parts write the outputs in place. */
typedef struct {
    Reader *r;
    int64_t n, offset; /* the part's bytes; the first part's newlines */
} Second;

static void *read_second(void *arg) {
    Second *second = arg;
    Reader *r = second->r;
    second->offset = count_newlines(r->origin, r->data - r->origin);
    if (second->offset > r->room) r->no_room = 1;
    else {
        for (int k = 0; k < r->n_keep; k++) r->codes[k] += second->offset;
        r->values += second->offset;
        r->room -= second->offset;
        read_part(r, second->n);
    }
    return NULL;
}

/* Join the second part to the first: its ids coded in the first part's tables (ids new to them take the next codes,
 * in the second part's first-seen order), its rows moved up behind the first part's, its lines and slow numbers
 * counted on; 0 when out of memory. */
static int finish_split(Reader *a, Reader *b, int64_t offset) {
    for (int k = 0; k < a->n_keep; k++) {
        Table *ta = &a->tables[k], *tb = &b->tables[k];
        int64_t *map = malloc(sizeof(int64_t) * (size_t)(tb->used > 0 ? tb->used : 1));
        if (map == NULL) return 0;
        for (int64_t c = 0; c < tb->used; c++) { /* the same seed: the second table's hashes are the first's */
            const unsigned char *p = tb->arena + tb->starts[c];
            uint64_t slot, h = tb->hashes[c];
            int64_t code = table_probe(ta, p, tb->lengths[c], h, &slot);
            if (code < 0 && (code = table_add(ta, p, tb->lengths[c], h, slot)) < 0) {
                free(map);
                return 0;
            }
            map[c] = code;
        }
        int64_t *column = a->codes[k];
        for (int64_t i = 0; i < b->rows; i++) column[a->rows + i] = map[column[offset + i]];
        free(map);
    }
    if (offset > a->rows) memmove(a->values + a->rows, a->values + offset, sizeof(double) * (size_t)b->rows);
    for (int64_t s = 0; s < b->n_slow; s++) b->slow[s].row += a->rows;
    if (b->n_slow) {
        SlowNumber *slow = realloc(a->slow, sizeof(SlowNumber) * (size_t)(a->n_slow + b->n_slow));
        if (slow == NULL) return 0;
        memcpy(slow + a->n_slow, b->slow, sizeof(SlowNumber) * (size_t)b->n_slow);
        a->slow = slow;
        a->n_slow += b->n_slow;
    }
    if (!a->first_extra && b->first_extra) a->first_extra = offset + b->first_extra;
    a->n_extra += b->n_extra;
    a->rows += b->rows;
    return 1;
}

/* Read data[0:n] with r, in two parts on two threads where ``threads`` asks for it (the second part from the first
 * newline after the middle); r then holds the whole. */
static void read_all(Reader *r, Reader *b, int64_t n, int threads) {
    const unsigned char *middle = threads > 1 && n > 1 ? memchr(r->data + n / 2, '\n', (size_t)(n - n / 2)) : NULL;
    if (middle == NULL || middle + 1 >= r->data + n || b == NULL) {
        read_part(r, n);
        return;
    }
    int64_t split = middle + 1 - r->data;
    b->data = r->data + split;
    Second second = {b, n - split, 0};
#ifdef EVALKIT_THREADS
    pthread_t thread;
    int started = pthread_create(&thread, NULL, read_second, &second) == 0;
#else
    int started = 0;
#endif
    read_part(r, split);
#ifdef EVALKIT_THREADS
    if (started) pthread_join(thread, NULL);
#endif
    if (!started) read_second(&second);
    r->refused |= b->refused;
    r->no_memory |= b->no_memory;
    r->no_room |= b->no_room;
    if (!r->refused && !r->no_memory && !r->no_room && !finish_split(r, b, second.offset)) r->no_memory = 1;
}

/* A bytearray of ``size`` bytes left as malloc gives them (pages of a large one are not touched until written). */
static PyObject *raw_bytearray(Py_ssize_t size) {
    return PyByteArray_FromStringAndSize(NULL, size);
}

PyObject *read_table(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data;
    int n_fields, extra, numeric, threads;
    PyObject *keep_arg, *codes[MAX_KEEP] = {NULL}, *values = NULL;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "y*ipO!iKi", &data, &n_fields, &extra, &PyTuple_Type, &keep_arg, &numeric, &seed, &threads))
        return NULL;
    Reader *r = calloc(1, sizeof(Reader)), *b = threads > 1 ? calloc(1, sizeof(Reader)) : NULL; /* b: a second part */
    Py_ssize_t n_keep = PyTuple_GET_SIZE(keep_arg);
    const char *error = NULL;
    if (r == NULL) error = "read_table: out of memory";
    else if (n_fields < 1 || n_fields > MAX_FIELDS || numeric < 0 || numeric >= n_fields) error = "read_table: bad field numbers";
    else if (n_keep < 1 || n_keep > MAX_KEEP) error = "read_table: bad keep";
    for (Py_ssize_t k = 0; !error && k < n_keep; k++) {
        long column = PyLong_AsLong(PyTuple_GET_ITEM(keep_arg, k));
        if (column < 0 || column >= n_fields) error = "read_table: bad field numbers";
        r->keep[k] = (int)column;
    }
    /* a data line holds n_fields fields, n_fields - 1 blanks and a newline: at most this many rows */
    int64_t room = (int64_t)(data.len + 1) / (2 * n_fields) + 1;
    if (!error && !PyErr_Occurred()) {
        values = raw_bytearray((Py_ssize_t)(room * (int64_t)sizeof(double)));
        for (Py_ssize_t k = 0; values && k < n_keep; k++)
            if ((codes[k] = raw_bytearray((Py_ssize_t)(room * (int64_t)sizeof(int64_t)))) == NULL) break;
    }
    if (PyErr_Occurred() || error) {
        for (Py_ssize_t k = 0; k < n_keep && k < MAX_KEEP; k++) Py_XDECREF(codes[k]);
        Py_XDECREF(values);
        PyBuffer_Release(&data);
        free(r);
        free(b);
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, error);
        return NULL;
    }
    r->data = r->origin = data.buf;
    r->n_fields = n_fields;
    r->extra = extra;
    r->numeric = numeric;
    r->n_keep = (int)n_keep;
    r->values = (double *)PyByteArray_AS_STRING(values);
    r->room = room;
    for (int k = 0; k < r->n_keep; k++) {
        r->codes[k] = (int64_t *)PyByteArray_AS_STRING(codes[k]);
        if (!table_init(&r->tables[k], 1 << 12, seed)) r->no_memory = 1;
    }
    if (b != NULL) { /* the same settings and outputs; read_second places its rows */
        memcpy(b, r, offsetof(Reader, tables));
        for (int k = 0; k < r->n_keep; k++) {
            b->codes[k] = r->codes[k];
            if (!table_init(&b->tables[k], 1 << 12, seed)) r->no_memory = 1;
        }
        b->values = r->values;
        b->room = r->room;
    }

    Py_BEGIN_ALLOW_THREADS
    if (!r->no_memory) read_all(r, b, data.len, threads);
    Py_END_ALLOW_THREADS

    PyObject *result = NULL;
    char *text = NULL;
    for (int64_t s = 0; !r->refused && !r->no_memory && !r->no_room && s < r->n_slow; s++) { /* Python's own conversion */
        const SlowNumber *number = &r->slow[s];
        char *grown = PyMem_Realloc(text, (size_t)number->length + 1);
        if (grown == NULL) {
            r->no_memory = 1;
            break;
        }
        text = grown;
        memcpy(text, (const char *)data.buf + number->start, (size_t)number->length);
        text[number->length] = '\0';
        double value = PyOS_string_to_double(text, NULL, NULL); /* NULL: an overflow gives +-inf, refused below */
        if (PyErr_Occurred() || !isfinite(value)) {
            PyErr_Clear();
            r->refused = 1;
            break;
        }
        r->values[number->row] = value;
    }
    PyMem_Free(text);
    if (r->no_memory) PyErr_NoMemory();
    else if (r->no_room) PyErr_SetString(PyExc_ValueError, "read_table: more rows than the buffers hold");
    else if (r->refused) result = Py_NewRef(Py_None);
    else {
        PyObject *uniques = PyList_New(n_keep);
        for (int k = 0; uniques && k < r->n_keep; k++) {
            PyObject *column = table_uniques(&r->tables[k]);
            if (column == NULL) {
                Py_CLEAR(uniques);
                if (PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) { /* not UTF-8: the Python reader names the line */
                    PyErr_Clear();
                    result = Py_NewRef(Py_None);
                }
                break;
            }
            PyList_SET_ITEM(uniques, k, column);
        }
        PyObject *code_tuple = uniques ? PyTuple_New(n_keep) : NULL;
        /* cut to the rows read (a large bytearray's realloc gives the untouched pages back) */
        int cut = code_tuple != NULL && PyByteArray_Resize(values, (Py_ssize_t)(r->rows * (int64_t)sizeof(double))) == 0;
        for (int k = 0; cut && k < r->n_keep; k++) {
            cut = PyByteArray_Resize(codes[k], (Py_ssize_t)(r->rows * (int64_t)sizeof(int64_t))) == 0;
            if (cut) PyTuple_SET_ITEM(code_tuple, k, Py_NewRef(codes[k]));
        }
        if (cut)
            result = Py_BuildValue("(LLLNNO)", (long long)r->rows, (long long)r->n_extra, (long long)r->first_extra, uniques,
                                   code_tuple, values);
        else {
            Py_XDECREF(uniques);
            Py_XDECREF(code_tuple);
        }
    }
    free(r->slow);
    for (int k = 0; k < r->n_keep; k++) {
        table_free(&r->tables[k]);
        Py_DECREF(codes[k]);
    }
    if (b != NULL) {
        free(b->slow);
        for (int k = 0; k < r->n_keep; k++) table_free(&b->tables[k]);
    }
    free(r);
    free(b);
    PyBuffer_Release(&data);
    Py_DECREF(values);
    return result;
}
