/* evalkit.native._native, a TREC run read against its gold in one pass (for evalkit/io/prejudged.py): judge_run, and judge_file
 * (the same from an open file, 1 MiB a read: judge_stream.c; for evalkit/io/streamed.py). judge.c ranks each query,
 * judge.h holds the types.
 *
 * judge_run(data, query_ids, qidx, didx, doc_ids, seed, threads)
 *     -> None or (n_extra, first_extra, run_query_ids, rows_per_query, gold_of, hit_query, hit_rank, hit_row, plain)
 *     ``data``: a TREC run (``qid Q0 docid rank score tag [more]``, LF-separated UTF-8 as evalkit/io/textio.py hands it
 *     over), read with the rules of reader.c's read_table (the same lexer, lexer.h): blank lines and lines whose
 *     first field starts with '#' skipped, six fields a line or more (counted in ``n_extra``, the first such line
 *     ``first_extra``), the fifth a finite number as evalkit reads it. The gold is a qrels table: ``query_ids`` and
 *     ``doc_ids`` (lists of distinct str) and, per judgment row, its codes ``qidx`` and ``didx`` (int64 buffers).
 *     Instead of coding every document id of the run (hundreds of thousands of ids in a table larger than the
 *     cache), each query's rows are kept until its last row, then ranked against that query's judgments only:
 *     a row's rank is 1 + the rows of its query ranked before it (score descending, ties by document id
 *     descending, byte-wise: evalkit/data/ranking.py's rule), counted for the few judged rows or read from a sort when
 *     a query has many. Returned: the run's queries in first-seen order (run codes), rows per query, each one's gold
 *     code (its place in ``query_ids``, -1 when the gold has none: the lookup its rows were judged by), and for each
 *     row whose document is judged for its query (any grade) its run query code, rank and judgment row; grouped
 *     by query code, rank ascending (the order of evalkit/metrics/evaluation.py's judged rows); ``plain``: no CR and no byte
 *     from 0x80 anywhere in ``data`` (the lexer saw every byte: evalkit/native/kernels.py's text_marks need not look again).
 *     None where the general reader must read the run (its results, its messages): a line it refuses, a query
 *     whose rows are not contiguous, a document listed twice for one query, no row, ids that are not UTF-8, a NUL byte, and
 *     memory it could not get (a query of millions of rows keeps ~90 bytes a row: the general reader may still fit).
 *     Numbers the lexer leaves to the exact conversion (more than 19 digits, or not an exact operation on exact
 *     operands) are converted by the C library's strtod, correctly rounded as Python's float() is; a number it does
 *     not read whole (a locale's other decimal point) declines. The GIL is released while reading. With ``threads``
 *     2, the lines from the first query's first row after the middle are read at the same time on a second thread
 *     and joined after (its query codes and line numbers following the first part's): the same results, and a
 *     query found on both sides declines as it would in one pass. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#if defined(__unix__) || defined(__APPLE__)
#include <pthread.h>
#define EVALKIT_THREADS 1
#endif

#include "native.h"
#include "judge.h"

static PyObject *as_bytearray(const Int64s *list) {
    return PyByteArray_FromStringAndSize((const char *)list->data, (Py_ssize_t)(list->used * (int64_t)sizeof(int64_t)));
}

/* The UTF-8 bytes of each str of a list (borrowed from the str objects); 0 when one has none (a lone surrogate). */
static int utf8_of(PyObject *list, const unsigned char ***bytes, int64_t **lengths) {
    Py_ssize_t n = PyList_GET_SIZE(list);
    *bytes = malloc(sizeof(char *) * (size_t)(n ? n : 1));
    *lengths = malloc(sizeof(int64_t) * (size_t)(n ? n : 1));
    if (*bytes == NULL || *lengths == NULL) return 0;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PyList_GET_ITEM(list, i);
        Py_ssize_t size;
        const char *text = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &size) : NULL;
        if (text == NULL) {
            PyErr_Clear();
            return 0;
        }
        (*bytes)[i] = (const unsigned char *)text, (*lengths)[i] = size;
    }
    return 1;
}

/* Where a second thread may start: the first query's first row after the middle (next_query_start); 0 for none. */
static int64_t query_boundary(const unsigned char *data, int64_t n) {
    int64_t found = n > 1 ? next_query_start(data + n / 2, data + n) : -1;
    return found < 0 ? 0 : n / 2 + found;
}

/* What a run is read from: its bytes (data[0:n]), or its file (fd >= 0, n bytes). */
typedef struct {
    const unsigned char *data;
    int fd;
    int64_t n;
} Source;

typedef struct {
    Judge *j;
    Source source;
    int64_t from, to; /* the part's bytes */
    int read_ok;      /* 0: its file could not be read whole */
} Part;

static void *read_part(void *arg) {
    Part *part = arg;
    if (part->source.fd >= 0) part->read_ok = judge_stream(part->j, part->source.fd, part->from, part->to);
    else judge_read(part->j, part->source.data + part->from, part->to - part->from);
    return NULL;
}

static int append(Int64s *list, const Int64s *more, int64_t offset) {
    for (int64_t i = 0; i < more->used; i++)
        if (!push(list, more->data[i] + offset)) return 0;
    return 1;
}

/* The second part's results after the first's: its queries must be new to the first part (else the run's rows
 * are not contiguous: refused), its query codes and line numbers follow the first part's. */
static void join_parts(Judge *a, const Judge *b) {
    int64_t n_first = a->run_queries.used;
    for (int64_t c = 0; c < b->run_queries.used && !a->refused && !a->no_memory; c++) {
        const unsigned char *id = b->run_queries.arena + b->run_queries.starts[c];
        uint64_t slot, h = b->run_queries.hashes[c];
        if (table_probe(&a->run_queries, id, b->run_queries.lengths[c], h, &slot) >= 0) a->refused = 1;
        else if (table_add(&a->run_queries, id, b->run_queries.lengths[c], h, slot) < 0) a->no_memory = 1;
    }
    if (a->refused || a->no_memory) return;
    if (!append(&a->per_query, &b->per_query, 0) || !append(&a->gold_of, &b->gold_of, 0) || !append(&a->hit_query, &b->hit_query, n_first) ||
        !append(&a->hit_rank, &b->hit_rank, 0) || !append(&a->hit_row, &b->hit_row, 0))
        a->no_memory = 1;
    if (!a->first_extra && b->first_extra) a->first_extra = a->line + b->first_extra;
    a->n_extra += b->n_extra;
    a->marks |= b->marks;
}

/* Read the source with a, in two parts on two threads where ``threads`` asks for it and a query boundary is found
 * after the middle (b reads the second part); a then holds the whole. 0 when its file could not be read whole. */
static int read_all(Judge *a, Judge *b, Source source, int threads) {
    int64_t n = source.n, split = 0;
    if (threads > 1 && b != NULL) split = source.fd >= 0 ? file_boundary(source.fd, n) : query_boundary(source.data, n);
    Part first = {a, source, 0, split ? split : n, 1}, second = {b, source, split, n, 1};
    int started = 0;
#ifdef EVALKIT_THREADS
    pthread_t thread;
    started = split > 0 && pthread_create(&thread, NULL, read_part, &second) == 0;
#endif
    read_part(&first);
    if (split > 0) {
#ifdef EVALKIT_THREADS
        if (started) pthread_join(thread, NULL);
#endif
        if (!started) read_part(&second);
        a->refused |= b->refused;
        a->no_memory |= b->no_memory;
        if (!a->refused && !a->no_memory) join_parts(a, b);
    }
    return first.read_ok && second.read_ok;
}

static void judge_free(Judge *j) {
    if (j == NULL) return;
    table_free(&j->run_queries);
    free(j->rows), free(j->seen), free(j->hits), free(j->ranks);
    free(j->per_query.data), free(j->gold_of.data), free(j->hit_query.data), free(j->hit_rank.data), free(j->hit_row.data);
    free(j);
}

/* The run read from ``source`` against the gold's judgments (judge_run, judge_file). */
static PyObject *judge(Source source, PyObject *query_ids, Py_buffer qidx, Py_buffer didx, PyObject *doc_ids, unsigned long long seed,
                       int threads) {
    PyObject *result = NULL;
    Judge *a = calloc(1, sizeof(Judge)), *b = threads > 1 ? calloc(1, sizeof(Judge)) : NULL; /* b: a second part */
    Table gold = {0};
    const unsigned char **query_bytes = NULL, **doc_bytes = NULL;
    int64_t *query_lengths = NULL, *doc_lengths = NULL, *group = NULL;
    Judgment *judgments = NULL;
    int64_t n_queries = PyList_GET_SIZE(query_ids), n_judgments = qidx.len / (Py_ssize_t)sizeof(int64_t);
    int usable = a != NULL && (threads < 2 || b != NULL) && qidx.len == didx.len && utf8_of(query_ids, &query_bytes, &query_lengths) &&
                 utf8_of(doc_ids, &doc_bytes, &doc_lengths);
    if (usable) { /* else declined: no memory for the state, or ids the pass cannot take */
        int64_t n_docs = PyList_GET_SIZE(doc_ids);
        /* from here no Python object is touched: the ids' UTF-8 stays where the lists' strings hold it, so the
         * judgments' tables are built (0.04 s for 270,000 judgments) without holding up the command's other threads */
        Py_BEGIN_ALLOW_THREADS
        if (!table_init(&gold, n_queries + 1, seed) || !table_init(&a->run_queries, 1 << 12, seed) ||
            (b != NULL && !table_init(&b->run_queries, 1 << 12, seed)))
            a->no_memory = 1;
        for (int64_t q = 0; !a->no_memory && !a->refused && q < n_queries; q++) {
            uint64_t slot, h = hash_bytes(query_bytes[q], query_lengths[q], seed);
            if (query_lengths[q] >= UINT32_MAX || table_probe(&gold, query_bytes[q], query_lengths[q], h, &slot) >= 0) a->refused = 1;
            else if (table_add(&gold, query_bytes[q], query_lengths[q], h, slot) < 0) a->no_memory = 1;
        }
        if (!a->no_memory && !a->refused)
            judge_group(a, &judgments, &group, qidx.buf, didx.buf, n_judgments, doc_bytes, doc_lengths, n_docs, n_queries);
        a->queries = &gold, a->judgments = judgments, a->group = group, a->end = source.fd >= 0 ? NULL : source.data + source.n; /* a file's: its buffer's end */
        if (b != NULL) b->queries = a->queries, b->judgments = judgments, b->group = group, b->end = a->end;
        if (!a->no_memory && !a->refused && !read_all(a, b, source, threads))
            a->refused = 1; /* a file that shrank or failed while read: declined, its reader reads it and meets that */
        Py_END_ALLOW_THREADS
        if (!a->no_memory && !a->refused && a->per_query.used > 0) { /* out of memory: declined, the general reader decides */
            PyObject *queries = table_uniques(&a->run_queries);
            if (queries != NULL)
                result = Py_BuildValue("(LLNNNNNNN)", (long long)a->n_extra, (long long)a->first_extra, queries, as_bytearray(&a->per_query),
                                       as_bytearray(&a->gold_of), as_bytearray(&a->hit_query), as_bytearray(&a->hit_rank),
                                       as_bytearray(&a->hit_row), PyBool_FromLong(!(a->marks & MARK_CR_OR_HIGH)));
            if (result == NULL) PyErr_Clear(); /* ids that are not UTF-8, or no memory for the results: declined */
        }
    }
    if (result == NULL) result = Py_NewRef(Py_None);
    table_free(&gold);
    judge_free(a), judge_free(b);
    free(query_bytes), free(query_lengths), free(doc_bytes), free(doc_lengths), free(group), free(judgments);
    return result;
}

PyObject *judge_run(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data, qidx, didx;
    PyObject *query_ids, *doc_ids;
    unsigned long long seed;
    int threads;
    if (!PyArg_ParseTuple(args, "y*O!y*y*O!Ki", &data, &PyList_Type, &query_ids, &qidx, &didx, &PyList_Type, &doc_ids, &seed, &threads))
        return NULL;
    PyObject *result = judge((Source){data.buf, -1, data.len}, query_ids, qidx, didx, doc_ids, seed, threads);
    PyBuffer_Release(&data), PyBuffer_Release(&qidx), PyBuffer_Release(&didx);
    return result;
}

PyObject *judge_file(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer qidx, didx;
    PyObject *query_ids, *doc_ids;
    unsigned long long seed;
    long long size;
    int fd, threads;
    if (!PyArg_ParseTuple(args, "iLO!y*y*O!Ki", &fd, &size, &PyList_Type, &query_ids, &qidx, &didx, &PyList_Type, &doc_ids, &seed, &threads))
        return NULL;
    PyObject *result = fd >= 0 && size >= 0 ? judge((Source){NULL, fd, size}, query_ids, qidx, didx, doc_ids, seed, threads) : Py_NewRef(Py_None);
    PyBuffer_Release(&qidx), PyBuffer_Release(&didx);
    return result;
}
