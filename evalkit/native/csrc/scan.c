/* evalkit.native._native, row scans: first_occurrences (for evalkit/data/ranking.py) and judged_rows (for evalkit/metrics/evaluation.py);
 * a text's marks: text_marks (for evalkit/io/textio.py).
 * See module.c for the module's contents. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

#ifdef __SSE2__
#include <emmintrin.h>
#endif

PyObject *first_occurrences(PyObject *self, PyObject *args) {
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

/* judged_rows(qidx, didx, rank, first, query_pos, doc_run_code, offsets, jdocs, jgrades, depth, out_q, out_rank, out_grade)
 *     -> count
 * The judged rows of a ranked run (rows grouped by query, in rank order within each): for row i, q = query_pos[qidx[i]]
 * (-1: not evaluated), kept when q >= 0, rank[i] <= depth (0: no depth), first[i], and didx[i] is the run's code of
 * one of q's judged documents jdocs[offsets[q]:offsets[q+1]] (qrels document codes; doc_run_code maps each to the
 * run's code, -1 where the run never names it) with a grade >= 0; written as (q, rank, grade) to the outputs (room:
 * len(jdocs), as a (query, document) pair is judged once and a row is kept at its first position only), in row order.
 * Each query's judged documents are translated once and its rows compared with them as they go by (a binary search
 * among them where a query has more than 16): the rows are read in sequence, never looked up. */

typedef struct {
    int64_t code, j; /* a judged document's run code, its index in jdocs */
} Judgment;

static int by_code(const void *a, const void *b) {
    int64_t x = ((const Judgment *)a)->code, y = ((const Judgment *)b)->code;
    return (x > y) - (x < y);
}

/* The index in jdocs of the judged document whose run code is ``code`` among the query's sorted judgments, or -1. */
static inline int64_t find_judgment(const Judgment *sorted, int64_t n, int64_t code) {
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (sorted[mid].code < code) lo = mid + 1; else hi = mid;
    }
    return lo < n && sorted[lo].code == code ? sorted[lo].j : -1;
}

PyObject *judged_rows(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b[12];
    long long depth;
    memset(b, 0, sizeof(b));
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*Lw*w*w*", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &depth,
                          &b[9], &b[10], &b[11]))
        return NULL;
    const int64_t *qidx = b[0].buf, *didx = b[1].buf, *rank = b[2].buf, *query_pos = b[4].buf, *doc_run_code = b[5].buf;
    const int64_t *offsets = b[6].buf, *jdocs = b[7].buf;
    const unsigned char *first = b[3].buf;
    const double *jgrades = b[8].buf;
    int64_t *out_q = b[9].buf, *out_rank = b[10].buf;
    double *out_grade = b[11].buf;
    Py_ssize_t n = b[0].len / 8, n_queries = b[4].len / 8, n_qdocs = b[5].len / 8, n_eval = b[6].len / 8 - 1, m = b[7].len / 8;
    int bad = b[1].len != b[0].len || b[2].len != b[0].len || b[3].len != n || n_eval < 0 || b[8].len / 8 != m
              || b[9].len / 8 < m || b[10].len / 8 < m || b[11].len / 8 < m;
    Py_ssize_t count = 0;
    Judgment *judged = bad ? NULL : malloc(sizeof(Judgment) * (size_t)(m > 0 ? m : 1)); /* the query's judged documents */
    if (!bad && judged == NULL) {
        for (int k = 0; k < 12; k++) PyBuffer_Release(&b[k]);
        return PyErr_NoMemory();
    }
    if (!bad) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t start = 0, end; start < n && !bad; start = end) {
            int64_t qc = qidx[start];
            for (end = start + 1; end < n && qidx[end] == qc; end++) {}
            if (qc < 0 || qc >= n_queries) {
                bad = 1;
                break;
            }
            int64_t q = query_pos[qc];
            if (q < 0) continue;
            if (q >= n_eval || offsets[q] < 0 || offsets[q + 1] > m || offsets[q] > offsets[q + 1]) {
                bad = 1;
                break;
            }
            int64_t k = 0;
            for (int64_t j = offsets[q]; j < offsets[q + 1] && !bad; j++) {
                if (jdocs[j] < 0 || jdocs[j] >= n_qdocs) bad = 1;
                else if (jgrades[j] >= 0 && doc_run_code[jdocs[j]] >= 0) /* NaN and negative grades: not judged */
                    judged[k++] = (Judgment){doc_run_code[jdocs[j]], j};
            }
            if (k > 16) qsort(judged, (size_t)k, sizeof(Judgment), by_code);
            for (Py_ssize_t i = start; i < end && k && !bad; i++) {
                if (!first[i] || (depth > 0 && rank[i] > depth)) continue;
                int64_t found = -1;
                if (k > 16) found = find_judgment(judged, k, didx[i]);
                else
                    for (int64_t t = 0; t < k; t++)
                        if (judged[t].code == didx[i]) {
                            found = judged[t].j;
                            break;
                        }
                if (found < 0) continue;
                if (count == m) {
                    bad = 1;
                    break;
                }
                out_q[count] = q;
                out_rank[count] = rank[i];
                out_grade[count] = jgrades[found];
                count++;
            }
        }
        Py_END_ALLOW_THREADS
    }
    free(judged);
    for (int k = 0; k < 12; k++) PyBuffer_Release(&b[k]);
    if (bad) return PyErr_Format(PyExc_ValueError, "judged_rows: inconsistent arrays");
    return PyLong_FromSsize_t(count);
}

/* text_marks(data) -> (first_cr, ascii): the offset of the first CR byte (-1: none) and whether every byte is below
 * 0x80, in one pass (evalkit/io/textio.py's normalising and UTF-8 check read a 177 MB run once instead of twice). */
PyObject *text_marks(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer data;
    if (!PyArg_ParseTuple(args, "y*", &data)) return NULL;
    const unsigned char *p = data.buf;
    Py_ssize_t n = data.len, i = 0, first_cr = -1;
    unsigned high = 0;
    Py_BEGIN_ALLOW_THREADS
#ifdef __SSE2__
    const __m128i cr = _mm_set1_epi8('\r');
    __m128i any = _mm_setzero_si128();
    for (; i + 64 <= n; i += 64) {
        __m128i a = _mm_loadu_si128((const __m128i *)(p + i)), b = _mm_loadu_si128((const __m128i *)(p + i + 16)),
                c = _mm_loadu_si128((const __m128i *)(p + i + 32)), d = _mm_loadu_si128((const __m128i *)(p + i + 48));
        any = _mm_or_si128(any, _mm_or_si128(_mm_or_si128(a, b), _mm_or_si128(c, d)));
        if (first_cr < 0) {
            __m128i hits = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(a, cr), _mm_cmpeq_epi8(b, cr)),
                                        _mm_or_si128(_mm_cmpeq_epi8(c, cr), _mm_cmpeq_epi8(d, cr)));
            if (_mm_movemask_epi8(hits)) first_cr = (const unsigned char *)memchr(p + i, '\r', 64) - p;
        }
    }
    high = (unsigned)_mm_movemask_epi8(any);
#endif
    for (; i < n; i++) {
        high |= p[i] & 0x80;
        if (first_cr < 0 && p[i] == '\r') first_cr = i;
    }
    Py_END_ALLOW_THREADS
    PyBuffer_Release(&data);
    return Py_BuildValue("(nO)", first_cr, high ? Py_False : Py_True);
}
