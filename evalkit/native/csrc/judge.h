/* The shared parts of evalkit.native._native's judged reading of a TREC run (judge.c ranks each query's rows, judge_run.c
 * reads the run, on two threads where asked): ids ordered by their first 8 bytes, a query's rows, the gold's
 * judgments and the reader's state. */
#ifndef EVALKIT_JUDGE_H
#define EVALKIT_JUDGE_H
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "lexer.h"
#include "table.h"

/* An id's first 8 bytes as a big-endian integer, zero-padded: integer order is byte order on them (the ids hold no
 * NUL byte, evalkit/io/prejudged.py sees to it, so a padded shorter id sorts first as it should). */
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
    Int64s per_query, gold_of, hit_query, hit_rank, hit_row; /* gold_of: per run query, its gold code (-1: none) */
    uint32_t *seen;             /* a query's documents, hashed (repeats) */
    int64_t seen_room;
    int64_t *hits, *ranks, hits_room, ranks_room;
    int refused, no_memory;
    unsigned marks; /* lexer.h's MARK_ bits of the bytes read */
} Judge;

static inline int push(Int64s *list, int64_t value) {
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

/* The first field of the line [p, end) (empty for a blank line). */
static inline Token first_field(const unsigned char *p, const unsigned char *end) {
    while (p < end && (*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
    const unsigned char *start = p;
    while (p < end && !(*p == ' ' || (*p >= '\t' && *p <= '\r'))) p++;
    return (Token){start, p - start};
}

/* Where a new query's rows start after the first newline in [p, end): the offset from p of the first data line (not
 * blank, first field not starting with '#') whose first field differs from the data line's before it in the scan;
 * -1 for none among the whole lines there. A second thread may start reading a run there. */
static inline int64_t next_query_start(const unsigned char *p, const unsigned char *end) {
    const unsigned char *line = memchr(p, '\n', (size_t)(end - p)), *line_end;
    Token before = {NULL, -1};
    for (line = line ? line + 1 : end; line < end; line = line_end + 1) {
        if ((line_end = memchr(line, '\n', (size_t)(end - line))) == NULL) break; /* a line cut by the end */
        Token field = first_field(line, line_end);
        if (field.length == 0 || field.start[0] == '#') continue; /* blank or comment */
        if (before.length >= 0 && (field.length != before.length || memcmp(field.start, before.start, (size_t)field.length) != 0))
            return line - p;
        before = field;
    }
    return -1;
}

/* Whether row a ranks before row b: score descending, ties by document id descending. */
static inline int ranks_before(const Row *a, const Row *b) {
    return a->score > b->score ||
           (a->score == b->score && compare_ids(a->key, a->doc, a->length, b->key, b->doc, b->length) > 0);
}

void judge_read(Judge *j, const unsigned char *data, int64_t n); /* judge.c: data[0:n], whole lines, into j */
void judge_lines(Judge *j, const unsigned char *data, int64_t n); /* judge.c: the same, the last query left open */
void judge_finish(Judge *j);                                      /* judge.c: after the last line */
int judge_stream(Judge *j, int fd, int64_t from, int64_t to);    /* judge_stream.c: the file's bytes [from, to) */
int64_t file_boundary(int fd, int64_t size);                      /* judge_stream.c: a query's first row past the middle */
int judge_group(Judge *j, Judgment **out, int64_t **group_out, const int64_t *qidx, const int64_t *didx, int64_t n,
                const unsigned char **docs, const int64_t *lengths, int64_t n_docs, int64_t n_queries); /* judge.c */

#endif
