/* evalkit._native, row scans: first_occurrences (for evalkit/ranking.py) and judged_rows (for evalkit/evaluation.py).
 * See module.c for the module's contents. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

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

/* judged_rows(qidx, didx, rank, first, query_pos, doc_judged, doc_code, offsets, jdocs, jgrades, depth, out_q, out_rank, out_grade)
 *     -> count
 * The judged rows of a ranked run (rows grouped by query): for row i, q = query_pos[qidx[i]] (-1: not
 * evaluated), kept when q >= 0, rank[i] <= depth (0: no depth), first[i], doc_judged[didx[i]] and the
 * document's qrels code doc_code[didx[i]] is among q's judged documents jdocs[offsets[q]:offsets[q+1]]
 * (sorted) with a grade >= 0; written as (q, rank, grade) to the outputs (room: len(jdocs), as a
 * (query, document) pair is judged once and a row is kept at its first position only). One pass; the
 * judged documents of the query at hand stay in the cache, as rows come grouped by query. */
PyObject *judged_rows(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer b[14];
    long long depth;
    memset(b, 0, sizeof(b));
    if (!PyArg_ParseTuple(args, "y*y*y*y*y*y*y*y*y*y*Lw*w*w*", &b[0], &b[1], &b[2], &b[3], &b[4], &b[5], &b[6], &b[7], &b[8], &b[9],
                          &depth, &b[10], &b[11], &b[12]))
        return NULL;
    const int64_t *qidx = b[0].buf, *didx = b[1].buf, *rank = b[2].buf, *query_pos = b[4].buf, *doc_code = b[6].buf;
    const int64_t *offsets = b[7].buf, *jdocs = b[8].buf;
    const unsigned char *first = b[3].buf, *doc_judged = b[5].buf;
    const double *jgrades = b[9].buf;
    int64_t *out_q = b[10].buf, *out_rank = b[11].buf;
    double *out_grade = b[12].buf;
    Py_ssize_t n = b[0].len / 8, n_queries = b[4].len / 8, n_docs = b[5].len, n_eval = b[7].len / 8 - 1, m = b[8].len / 8;
    int bad = b[1].len != b[0].len || b[2].len != b[0].len || b[3].len != n || b[6].len / 8 != n_docs || n_eval < 0
              || b[9].len / 8 != m || b[10].len / 8 < m || b[11].len / 8 < m || b[12].len / 8 < m;
    Py_ssize_t count = 0;
    if (!bad) {
        Py_BEGIN_ALLOW_THREADS
        for (Py_ssize_t i = 0; i < n && !bad; i++) {
            int64_t qc = qidx[i], dc = didx[i];
            if (qc < 0 || qc >= n_queries || dc < 0 || dc >= n_docs) {
                bad = 1;
                break;
            }
            int64_t q = query_pos[qc];
            if (q < 0 || !doc_judged[dc] || !first[i] || (depth > 0 && rank[i] > depth)) continue;
            if (q >= n_eval) {
                bad = 1;
                break;
            }
            int64_t d = doc_code[dc], lo = offsets[q], hi = offsets[q + 1];
            if (lo < 0 || hi > m || lo > hi) {
                bad = 1;
                break;
            }
            while (lo < hi) { /* the first judged document >= d */
                int64_t mid = lo + (hi - lo) / 2;
                if (jdocs[mid] < d) lo = mid + 1; else hi = mid;
            }
            if (lo < offsets[q + 1] && jdocs[lo] == d && jgrades[lo] >= 0) { /* NaN compares false */
                if (count == m) {
                    bad = 1;
                    break;
                }
                out_q[count] = q;
                out_rank[count] = rank[i];
                out_grade[count] = jgrades[lo];
                count++;
            }
        }
        Py_END_ALLOW_THREADS
    }
    for (int k = 0; k < 13; k++) PyBuffer_Release(&b[k]);
    if (bad) return PyErr_Format(PyExc_ValueError, "judged_rows: inconsistent arrays");
    return PyLong_FromSsize_t(count);
}

