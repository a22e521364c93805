/* evalkit._native, a TREC run read against its gold in one pass (for evalkit/prejudged.py): judge_run.
 *
 * judge_run(data, query_ids, qidx, didx, doc_ids, seed)
 *     -> None or (n_extra, first_extra, run_query_ids, rows_per_query, hit_query, hit_rank, hit_row)
 *     ``data``: a TREC run (``qid Q0 docid rank score tag [more]``, LF-separated UTF-8 as evalkit/textio.py hands it
 *     over), read with the rules of reader.c's read_table (the same lexer, lexer.h): blank lines and lines whose
 *     first field starts with '#' skipped, six fields a line or more (counted in ``n_extra``, the first such line
 *     ``first_extra``), the fifth a finite number as evalkit reads it. The gold is a qrels table: ``query_ids`` and
 *     ``doc_ids`` (lists of distinct str) and, per judgment row, its codes ``qidx`` and ``didx`` (int64 buffers).
 *     Instead of coding every document id of the run (hundreds of thousands of ids in a table larger than the
 *     cache), each query's rows are kept until its last row, then ranked against that query's judgments only:
 *     a row's rank is 1 + the rows of its query ranked before it (score descending, ties by document id
 *     descending, byte-wise: evalkit/ranking.py's rule), counted for the few judged rows or read from a sort when
 *     a query has many. Returned: the run's queries in first-seen order (run codes), rows per query, and for each
 *     row whose document is judged for its query (any grade) its run query code, rank and judgment row; grouped
 *     by query code, rank ascending (the order of evalkit/evaluation.py's judged rows).
 *     None where the general reader must read the run (its results, its messages): a line it refuses, a query
 *     whose rows are not contiguous, a document listed twice for one query, no row, ids that are not UTF-8.
 *     Numbers the lexer leaves to the exact conversion (more than 19 digits, or not an exact operation on exact
 *     operands) are converted by the C library's strtod, correctly rounded as Python's float() is; a number it does
 *     not read whole (a locale's other decimal point) declines. The GIL is released while reading. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
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

/* An id's first 8 bytes as a big-endian integer, zero-padded: integer order is byte order on them (the ids hold no
 * NUL byte, evalkit/prejudged.py sees to it, so a padded shorter id sorts first as it should). */
static inline uint64_t id_key(const unsigned char *p, int64_t n, const unsigned char *end) {
    uint64_t w = 0;
    if (p + 8 <= end) {
        memcpy(&w, p, 8);
        if (n < 8) w &= (UINT64_C(1) << (8 * n)) - 1;
    } else
        memcpy(&w, p, n >= 8 ? 8 : (size_t)n);
    return __builtin_bswap64(w);
}

typedef struct {
    const unsigned char *doc;
    int64_t length, row; /* row: the judgment's row in the qrels */
    uint64_t key;        /* id_key of doc */
} Judgment;

typedef struct {
    const unsigned char *doc;
    int64_t length;
    uint64_t key; /* id_key of doc */
    double score;
} Row;

typedef struct {
    int64_t *data;
    int64_t used, room;
} Int64s;

typedef struct {
    const Table *queries;       /* the gold's query ids (code = position) */
    Table run_queries;          /* the run's (code = first-seen order) */
    const Judgment *judgments;  /* grouped by gold query, each group sorted by document bytes */
    const int64_t *group;       /* per gold query: its judgments' start (n_queries + 1 entries) */
    Row *rows;                  /* the rows of the query being read */
    int64_t n_rows, rows_room, line, n_extra, first_extra, gold_query;
    Token query;                /* the query id of the rows being read, and its id_key */
    uint64_t query_key;
    const unsigned char *end;   /* the end of the data */
    Int64s per_query, hit_query, hit_rank, hit_row;
    uint32_t *seen;             /* a query's documents, hashed (repeats) */
    int64_t seen_room;
    int64_t *hits, *ranks, hits_room, ranks_room;
    int refused, no_memory;
} Judge;

static int push(Int64s *list, int64_t value) {
    if (list->used == list->room) {
        int64_t grown = list->room ? 2 * list->room : 1024;
        int64_t *more = realloc(list->data, sizeof(int64_t) * (size_t)grown);
        if (more == NULL) return 0;
        list->data = more, list->room = grown;
    }
    list->data[list->used++] = value;
    return 1;
}

/* Byte-wise order of two ids (shorter first on a common prefix) given their id_keys: <0, 0, >0. */
static inline int compare_ids(uint64_t ka, const unsigned char *a, int64_t na, uint64_t kb, const unsigned char *b, int64_t nb) {
    if (ka != kb) return ka < kb ? -1 : 1;
    if (na <= 8 || nb <= 8) return (na > nb) - (na < nb); /* the same first bytes, no NUL: the shorter is a prefix */
    int c = memcmp(a + 8, b + 8, (size_t)((na < nb ? na : nb) - 8));
    return c ? c : (na > nb) - (na < nb);
}

static inline int same_id(uint64_t ka, const unsigned char *a, int64_t na, uint64_t kb, const unsigned char *b, int64_t nb) {
    return ka == kb && na == nb && (na <= 8 || memcmp(a + 8, b + 8, (size_t)(na - 8)) == 0);
}

static int compare_judgments(const void *x, const void *y) {
    const Judgment *a = x, *b = y;
    return compare_ids(a->key, a->doc, a->length, b->key, b->doc, b->length);
}

/* Whether row a ranks before row b: score descending, ties by document id descending. */
static inline int ranks_before(const Row *a, const Row *b) {
    return a->score > b->score ||
           (a->score == b->score && compare_ids(a->key, a->doc, a->length, b->key, b->doc, b->length) > 0);
}

typedef struct {
    Row row;
    int64_t index; /* the row's place among its query's rows */
} Ranked;

static int ranks_order(const void *x, const void *y) {
    const Row *a = &((const Ranked *)x)->row, *b = &((const Ranked *)y)->row;
    return ranks_before(a, b) ? -1 : ranks_before(b, a) ? 1 : 0;
}

/* The judgment row of ``row``'s document among the judgments [lo, hi) of one query, -1 when not judged: a scan of
 * the first 8 bytes for a few judgments (most rows are judged by none: predictable misses), a binary search else. */
static int64_t judgment_of(const Judge *j, int64_t lo, int64_t hi, const Row *row) {
    if (hi - lo <= 8) {
        for (; lo < hi; lo++) {
            const Judgment *at = &j->judgments[lo];
            if (at->key == row->key && same_id(at->key, at->doc, at->length, row->key, row->doc, row->length)) return at->row;
        }
        return -1;
    }
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        const Judgment *at = &j->judgments[mid];
        int c = compare_ids(at->key, at->doc, at->length, row->key, row->doc, row->length);
        if (c == 0) return j->judgments[mid].row;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* 1 when some document appears twice among the query's rows (a hash of their ids; 0 when all are distinct). */
static int has_repeat(Judge *j) {
    int64_t cap = 16;
    while (cap < 2 * j->n_rows) cap <<= 1;
    if (cap > j->seen_room) {
        uint32_t *more = realloc(j->seen, sizeof(uint32_t) * (size_t)cap);
        if (more == NULL) {
            j->no_memory = 1;
            return 1;
        }
        j->seen = more, j->seen_room = cap;
    }
    memset(j->seen, 0, sizeof(uint32_t) * (size_t)cap);
    uint64_t mask = (uint64_t)cap - 1;
    for (int64_t i = 0; i < j->n_rows; i++) {
        const Row *row = &j->rows[i];
        uint64_t slot = mum(row->key ^ j->queries->seed, 0xa0761d6478bd642fULL ^ (uint64_t)row->length) & mask;
        for (; j->seen[slot]; slot = (slot + 1) & mask) {
            const Row *other = &j->rows[j->seen[slot] - 1];
            if (same_id(other->key, other->doc, other->length, row->key, row->doc, row->length)) return 1;
        }
        j->seen[slot] = (uint32_t)(i + 1);
    }
    return 0;
}

/* The query's rows are all in: count them, refuse repeats, rank its judged rows. 0 to stop. */
static int finish_query(Judge *j) {
    int64_t code = j->per_query.used;
    if (!push(&j->per_query, j->n_rows)) return !(j->no_memory = 1);
    if (j->n_rows >= UINT32_MAX) return !(j->no_memory = 1);
    if (has_repeat(j)) return j->no_memory ? 0 : !(j->refused = 1);
    if (j->gold_query < 0) return 1;
    int64_t lo = j->group[j->gold_query], hi = j->group[j->gold_query + 1], n_hits = 0;
    if (lo == hi) return 1;
    for (int64_t i = 0; i < j->n_rows; i++) {
        int64_t row = judgment_of(j, lo, hi, &j->rows[i]);
        if (row < 0) continue;
        if (n_hits == j->hits_room) {
            int64_t grown = j->hits_room ? 2 * j->hits_room : 64;
            int64_t *hits = realloc(j->hits, sizeof(int64_t) * 2 * (size_t)grown);
            if (hits == NULL) return !(j->no_memory = 1);
            j->hits = hits, j->hits_room = grown;
        }
        j->hits[2 * n_hits] = i, j->hits[2 * n_hits + 1] = row;
        n_hits++;
    }
    if (n_hits == 0) return 1;
    if (j->n_rows > j->ranks_room) {
        int64_t *more = realloc(j->ranks, sizeof(int64_t) * (size_t)j->n_rows);
        if (more == NULL) return !(j->no_memory = 1);
        j->ranks = more, j->ranks_room = j->n_rows;
    }
    int64_t *rank = j->ranks; /* n_hits <= n_rows */
    if (n_hits <= 32) { /* few judged rows: count the rows ranked before each */
        for (int64_t h = 0; h < n_hits; h++) {
            const Row *row = &j->rows[j->hits[2 * h]];
            const double score = row->score;
            int64_t before = 0, ties = 0;
            for (int64_t i = 0; i < j->n_rows; i++) { /* branch-free counts; equal scores are ordered after */
                before += j->rows[i].score > score;
                ties += j->rows[i].score == score;
            }
            if (ties > 1) /* the row itself ties with itself: others with its score rank before it by doc id */
                for (int64_t i = 0; i < j->n_rows; i++)
                    before += j->rows[i].score == score && ranks_before(&j->rows[i], row);
            rank[h] = before + 1;
        }
    } else { /* many: sort the query's rows once */
        Ranked *order = malloc(sizeof(Ranked) * (size_t)j->n_rows);
        if (order == NULL) return !(j->no_memory = 1);
        for (int64_t i = 0; i < j->n_rows; i++) order[i] = (Ranked){j->rows[i], i};
        qsort(order, (size_t)j->n_rows, sizeof(Ranked), ranks_order);
        for (int64_t i = 0; i < j->n_rows; i++) rank[order[i].index] = i + 1; /* per row: its rank */
        for (int64_t h = 0; h < n_hits; h++) order[h].index = rank[j->hits[2 * h]];
        for (int64_t h = 0; h < n_hits; h++) rank[h] = order[h].index;
        free(order);
    }
    /* out in rank order: insertion sort of the hits by rank (ranks are distinct) */
    for (int64_t h = 1; h < n_hits; h++) {
        int64_t r = rank[h], i = j->hits[2 * h], row = j->hits[2 * h + 1], k = h;
        for (; k > 0 && rank[k - 1] > r; k--) rank[k] = rank[k - 1], j->hits[2 * k] = j->hits[2 * k - 2], j->hits[2 * k + 1] = j->hits[2 * k - 1];
        rank[k] = r, j->hits[2 * k] = i, j->hits[2 * k + 1] = row;
    }
    for (int64_t h = 0; h < n_hits; h++)
        if (!push(&j->hit_query, code) || !push(&j->hit_rank, rank[h]) || !push(&j->hit_row, j->hits[2 * h + 1]))
            return !(j->no_memory = 1);
    return 1;
}

/* A new query's first row: refuse a query seen before (its rows not contiguous), find it in the gold. */
static int start_query(Judge *j, const Token *query) {
    uint64_t slot, h = hash_bytes(query->start, query->length, j->run_queries.seed);
    if (query->length >= UINT32_MAX) return !(j->refused = 1);
    if (table_probe(&j->run_queries, query->start, query->length, h, &slot) >= 0) return !(j->refused = 1);
    if (table_add(&j->run_queries, query->start, query->length, h, slot) < 0) return !(j->no_memory = 1);
    j->gold_query = table_probe(j->queries, query->start, query->length, hash_bytes(query->start, query->length, j->queries->seed), &slot);
    j->query = *query;
    j->n_rows = 0;
    return 1;
}

static int take_line(void *state, const Token *fields, int nf) {
    Judge *j = state;
    j->line++;
    if (nf == 0 || fields[0].start[0] == '#') return 1; /* blank or comment */
    if (nf < 6) return !(j->refused = 1);
    if (nf > 6) {
        j->n_extra++;
        if (!j->first_extra) j->first_extra = j->line;
    }
    const Token *query = &fields[0];
    uint64_t query_key = id_key(query->start, query->length, j->end);
    int same = j->query.start != NULL && same_id(query_key, query->start, query->length, j->query_key, j->query.start, j->query.length);
    if (!same && ((j->query.start != NULL && !finish_query(j)) || !start_query(j, query))) return 0;
    j->query_key = query_key;
    if (j->n_rows == j->rows_room) {
        int64_t grown = j->rows_room ? 2 * j->rows_room : 256;
        Row *more = realloc(j->rows, sizeof(Row) * (size_t)grown);
        if (more == NULL) return !(j->no_memory = 1);
        j->rows = more, j->rows_room = grown;
    }
    Row *row = &j->rows[j->n_rows++];
    row->doc = fields[2].start, row->length = fields[2].length, row->key = id_key(row->doc, row->length, j->end);
    const Token *number = &fields[4];
    int kind = parse_number(number->start, number->start + number->length, &row->score);
    if (kind == NUMBER_BAD) return !(j->refused = 1);
    if (kind == NUMBER_SLOW) { /* a decimal the lexer validated: the C library's correctly rounded conversion */
        char buffer[64], *text = number->length < 64 ? buffer : malloc((size_t)number->length + 1), *stop = NULL;
        if (text == NULL) return !(j->no_memory = 1);
        memcpy(text, number->start, (size_t)number->length);
        text[number->length] = '\0';
        row->score = strtod(text, &stop);
        int whole = stop == text + number->length; /* not so under a locale whose decimal point is not '.' */
        if (text != buffer) free(text);
        if (!whole || !isfinite(row->score)) return !(j->refused = 1);
    }
    return 1;
}

/* The gold's judgments grouped by query (a counting sort), each group sorted by document bytes; 0 on a repeat or
 * no memory. */
static int group_judgments(Judge *j, Judgment **out, int64_t **group_out, const int64_t *qidx, const int64_t *didx, int64_t n,
                           const unsigned char **docs, const int64_t *lengths, int64_t n_docs, int64_t n_queries) {
    int64_t *group = calloc((size_t)n_queries + 2, sizeof(int64_t));
    Judgment *judgments = malloc(sizeof(Judgment) * (size_t)(n ? n : 1));
    *out = judgments, *group_out = group;
    if (group == NULL || judgments == NULL) return !(j->no_memory = 1);
    for (int64_t i = 0; i < n; i++) {
        if (qidx[i] < 0 || qidx[i] >= n_queries || didx[i] < 0 || didx[i] >= n_docs) return !(j->refused = 1);
        group[qidx[i] + 2]++;
    }
    for (int64_t q = 0; q < n_queries; q++) group[q + 2] += group[q + 1];
    for (int64_t i = 0; i < n; i++) {
        const unsigned char *doc = docs[didx[i]];
        judgments[group[qidx[i] + 1]++] = (Judgment){doc, lengths[didx[i]], i, id_key(doc, lengths[didx[i]], doc + lengths[didx[i]])};
    }
    for (int64_t q = 0; q < n_queries; q++) {
        Judgment *first = judgments + group[q];
        int64_t count = group[q + 1] - group[q];
        qsort(first, (size_t)count, sizeof(Judgment), compare_judgments);
        for (int64_t k = 1; k < count; k++)
            if (compare_judgments(&first[k - 1], &first[k]) == 0) return !(j->refused = 1);
    }
    return 1;
}

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

/* The first field of the line [p, end) (empty for a blank line). */
static Token first_field(const unsigned char *p, const unsigned char *end) {
    while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
    const unsigned char *start = p;
    while (p < end && !(*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
    return (Token){start, p - start};
}

/* Where a second thread may start: the first line after the middle whose first field differs from the line's before
 * (a new query's first row, if the run's queries are contiguous); 0 for none. */
static int64_t query_boundary(const unsigned char *data, int64_t n) {
    const unsigned char *end = data + n, *line_end = memchr(data + n / 2, '\n', (size_t)(n - n / 2));
    if (line_end == NULL) return 0;
    const unsigned char *line = line_end;
    while (line > data && line[-1] != '\n') line--;
    Token before = first_field(line, line_end);
    for (line = line_end + 1; line < end; line = line_end + 1) {
        line_end = memchr(line, '\n', (size_t)(end - line));
        if (line_end == NULL) line_end = end;
        Token field = first_field(line, line_end);
        if (field.length != before.length || memcmp(field.start, before.start, (size_t)field.length) != 0) return line - data;
    }
    return 0;
}

typedef struct {
    Judge *j;
    const unsigned char *data;
    int64_t n;
} Part;

static void *read_part(void *arg) {
    Part *part = arg;
    Judge *j = part->j;
    lex_lines(part->data, part->n, j, take_line);
    if (!j->no_memory && !j->refused && j->query.start != NULL) finish_query(j);
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
    if (!append(&a->per_query, &b->per_query, 0) || !append(&a->hit_query, &b->hit_query, n_first) ||
        !append(&a->hit_rank, &b->hit_rank, 0) || !append(&a->hit_row, &b->hit_row, 0))
        a->no_memory = 1;
    if (!a->first_extra && b->first_extra) a->first_extra = a->line + b->first_extra;
    a->n_extra += b->n_extra;
}

/* Read data[0:n] with a, in two parts on two threads where ``threads`` asks for it and a query boundary is found
 * after the middle (b reads the second part); a then holds the whole. */
static void read_all(Judge *a, Judge *b, const unsigned char *data, int64_t n, int threads) {
    int64_t split = threads > 1 && b != NULL ? query_boundary(data, n) : 0;
    Part first = {a, data, split ? split : n}, second = {b, data + split, n - split};
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
}

static void judge_free(Judge *j) {
    if (j == NULL) return;
    table_free(&j->run_queries);
    free(j->rows), free(j->seen), free(j->hits), free(j->ranks);
    free(j->per_query.data), free(j->hit_query.data), free(j->hit_rank.data), free(j->hit_row.data);
    free(j);
}

PyObject *judge_run(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data, qidx, didx;
    PyObject *query_ids, *doc_ids, *result = NULL;
    unsigned long long seed;
    int threads;
    if (!PyArg_ParseTuple(args, "y*O!y*y*O!Ki", &data, &PyList_Type, &query_ids, &qidx, &didx, &PyList_Type, &doc_ids, &seed, &threads))
        return NULL;
    Judge *a = calloc(1, sizeof(Judge)), *b = threads > 1 ? calloc(1, sizeof(Judge)) : NULL; /* b: a second part */
    Table gold = {0};
    const unsigned char **query_bytes = NULL, **doc_bytes = NULL;
    int64_t *query_lengths = NULL, *doc_lengths = NULL, *group = NULL;
    Judgment *judgments = NULL;
    int64_t n_queries = PyList_GET_SIZE(query_ids), n_judgments = qidx.len / (Py_ssize_t)sizeof(int64_t);
    int usable = a != NULL && (threads < 2 || b != NULL) && qidx.len == didx.len && utf8_of(query_ids, &query_bytes, &query_lengths) &&
                 utf8_of(doc_ids, &doc_bytes, &doc_lengths);
    if (a == NULL || (threads > 1 && b == NULL)) PyErr_NoMemory();
    else if (usable) {
        if (!table_init(&gold, n_queries + 1, seed) || !table_init(&a->run_queries, 1 << 12, seed) ||
            (b != NULL && !table_init(&b->run_queries, 1 << 12, seed)))
            a->no_memory = 1;
        for (int64_t q = 0; !a->no_memory && !a->refused && q < n_queries; q++) {
            uint64_t slot, h = hash_bytes(query_bytes[q], query_lengths[q], seed);
            if (query_lengths[q] >= UINT32_MAX || table_probe(&gold, query_bytes[q], query_lengths[q], h, &slot) >= 0) a->refused = 1;
            else if (table_add(&gold, query_bytes[q], query_lengths[q], h, slot) < 0) a->no_memory = 1;
        }
        if (!a->no_memory && !a->refused)
            group_judgments(a, &judgments, &group, qidx.buf, didx.buf, n_judgments, doc_bytes, doc_lengths, PyList_GET_SIZE(doc_ids),
                            n_queries);
        a->queries = &gold, a->judgments = judgments, a->group = group, a->end = (const unsigned char *)data.buf + data.len;
        if (b != NULL) b->queries = a->queries, b->judgments = judgments, b->group = group, b->end = a->end;
        if (!a->no_memory && !a->refused) {
            Py_BEGIN_ALLOW_THREADS
            read_all(a, b, data.buf, data.len, threads);
            Py_END_ALLOW_THREADS
        }
        if (a->no_memory) PyErr_NoMemory();
        else if (!a->refused && a->per_query.used > 0) {
            PyObject *queries = table_uniques(&a->run_queries);
            if (queries == NULL && PyErr_ExceptionMatches(PyExc_UnicodeDecodeError)) PyErr_Clear();
            else if (queries != NULL)
                result = Py_BuildValue("(LLNNNNN)", (long long)a->n_extra, (long long)a->first_extra, queries, as_bytearray(&a->per_query),
                                       as_bytearray(&a->hit_query), as_bytearray(&a->hit_rank), as_bytearray(&a->hit_row));
        }
    }
    if (result == NULL && !PyErr_Occurred()) result = Py_NewRef(Py_None);
    table_free(&gold);
    judge_free(a), judge_free(b);
    free(query_bytes), free(query_lengths), free(doc_bytes), free(doc_lengths), free(group), free(judgments);
    PyBuffer_Release(&data), PyBuffer_Release(&qidx), PyBuffer_Release(&didx);
    return result;
}
