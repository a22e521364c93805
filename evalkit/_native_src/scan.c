/* evalkit._native, byte and row scans: blank_profile (for evalkit/formats/tables.py) and
 * first_occurrences (for evalkit/ranking.py). See module.c for the module's contents. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

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

PyObject *blank_profile(PyObject *self, PyObject *args) {
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

