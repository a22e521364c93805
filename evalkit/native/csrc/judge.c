/* evalkit.native._native: each query of a TREC run ranked against its own judgments as its rows go by (judge_run.c reads the
 * run; judge.h holds the types). A query's rows are kept until its last; then repeats are refused (a hash of the
 * ids), each row's document looked up among the query's judgments (past a 64-bit filter of their ids, which most
 * rows fail; then its first 8 bytes compared for a few, a binary search for many), and each judged row ranked: 1 +
 * the rows ranked before it by the ranking rule (score descending, ties by document id descending, byte-wise): its
 * place where the rows are written in that order (one pass checks), else counted for up to 32 judged rows, else
 * read from one sort of the query's rows. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "judge.h"

static int compare_judgments(const void *x, const void *y) {
    const Judgment *a = x, *b = y;
    return compare_ids(a->key, a->doc, a->length, b->key, b->doc, b->length);
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

/* One of 64 bits for an id, from its id_key and length (Fibonacci hashing): equal ids have equal bits. */
static inline int key_bit(uint64_t key, int64_t length) {
    return (int)(((key ^ (uint64_t)length) * 0x9E3779B97F4A7C15ULL) >> 58);
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
        uint64_t slot = hash_bytes(row->doc, row->length, j->queries->seed) & mask; /* every byte, seeded: crafted ids cannot collide */
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
    uint64_t judged = 0; /* a bit per judgment's id (key_bit): a row whose bit is not set is judged by none */
    for (int64_t k = lo; k < hi; k++) judged |= UINT64_C(1) << key_bit(j->judgments[k].key, j->judgments[k].length);
    for (int64_t i = 0; i < j->n_rows; i++) {
        if (!(judged >> key_bit(j->rows[i].key, j->rows[i].length) & 1)) continue;
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
    int64_t in_order = 1;     /* rows written in rank order (nearly every run): a row's rank is its place */
    while (in_order < j->n_rows && ranks_before(&j->rows[in_order - 1], &j->rows[in_order])) in_order++;
    if (in_order >= j->n_rows) {
        for (int64_t h = 0; h < n_hits; h++) rank[h] = j->hits[2 * h] + 1;
    } else if (n_hits <= 32) { /* few judged rows: count the rows ranked before each */
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
    j->gold_query = table_probe(j->queries, query->start, query->length, h, &slot); /* the gold's table has the same seed */
    if (!push(&j->gold_of, j->gold_query)) return !(j->no_memory = 1);
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
int judge_group(Judge *j, Judgment **out, int64_t **group_out, const int64_t *qidx, const int64_t *didx, int64_t n,
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

/* The run's lines data[0:n] into j (whole lines: the bytes past n read as a newline), the lexer's marks of their bytes
 * ORed into j->marks; j->end must lie at or past data + n (ids are read 8 bytes at a time up to it). */
void judge_lines(Judge *j, const unsigned char *data, int64_t n) {
    lex_lines(data, n, j, take_line, &j->marks);
}

/* After the last line: a NUL byte anywhere declines (numpy's str arrays drop trailing NULs: the general reader
 * decides), found by the lexer's pass over every byte, as is whether the bytes are plain ASCII text (j->marks);
 * the last query is finished. */
void judge_finish(Judge *j) {
    if (j->marks & MARK_NUL) j->refused = 1;
    if (!j->no_memory && !j->refused && j->query.start != NULL) finish_query(j);
}

/* The run's lines data[0:n] into j, then finished. */
void judge_read(Judge *j, const unsigned char *data, int64_t n) {
    judge_lines(j, data, n);
    judge_finish(j);
}
