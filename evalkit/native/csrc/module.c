/* evalkit.native._native (module.c registers ids.c, reader.c, judge_run.c, judge_stream.c, scan.c and permute.c): the compiled kernels of evalkit's readers and of its permutation test (built by setup.py; optional, each has a
 * pure-Python twin that gives the same results).
 *
 * Reading, for evalkit/io/formats/tables.py:
 * read_table(data, n_fields, extra, keep, numeric, seed, threads) -> None or (rows, n_extra, first_extra, uniques, codes, values)
 *     A TREC run's or qrels' whitespace columns in one pass (see reader.c; two halves on two threads with threads=2):
 *     the id columns coded in first-seen order as the bytes go by, the numeric column converted; None where the
 *     Python reader must name a bad line.
 *
 * Id lookup, for evalkit/data/ids.py:
 * positions(values, universe, out, seed)
 *     For each str of the list ``values``, its index in the list ``universe`` of distinct str (-1 when
 *     absent), written to ``out`` (int64).
 *
 * Both use one id table (table.h): open addressing whose 24-byte slots keep the id's length and first 16 bytes
 * inline, so that the ids of most collections (<= 16 bytes) are compared without a second memory access; a row
 * equal to the row before takes its code unhashed (a run's query ids); the hashes of 16 rows are computed before
 * their slots are probed, with the slots prefetched, so that the cache misses of a table larger than the cache
 * overlap (a hash join's batch probing). The hash is seeded per process (``seed``), so crafted ids cannot force
 * collisions. The results do not depend on the seed. Byte-wise equality decides; the GIL is released while working.
 *
 * First occurrences, for evalkit/data/ranking.py:
 * first_occurrences(qidx, didx, n_docs, first) -> repeats
 *     For rows grouped by query (each query's rows contiguous; int64 query and document codes), marks in
 *     ``first`` (uint8) the rows whose document is not repeated earlier in its query, and returns how
 *     many are. One pass; a per-document stamp (the query code that saw it last) replaces a sort.
 *
 * A run read against its gold, for evalkit/io/prejudged.py (judge_run.c, judge.c):
 * judge_run(data, query_ids, qidx, didx, doc_ids, seed, threads) -> None or (n_extra, first_extra, run_query_ids, rows_per_query,
 *                                                               gold_of, hit_query, hit_rank, hit_row, plain)
 *     A TREC run's rows read query by query and ranked against that query's judgments only, without coding its
 *     documents (see judge_run.c); None where the general reader must read it.
 * judge_file(fd, size, query_ids, qidx, didx, doc_ids, seed, threads) -> the same
 *     The same, the run's ``size`` bytes read from the open file ``fd`` 1 MiB at a time (judge_stream.c), never held
 *     whole; None also where the file could not be read whole.
 *
 * A text's marks, for evalkit/io/textio.py:
 * text_marks(data) -> (first_cr, ascii)
 *     The offset of the first CR byte (-1: none) and whether every byte is ASCII, in one pass (see scan.c).
 *
 * Judged rows, for evalkit/metrics/evaluation.py:
 * judged_rows(...) -> count
 *     The rows of a ranked run that carry a judgment of their query, in one pass (see scan.c).
 *
 * The allocator, for evalkit/cli (a short command's process only):
 * keep_freed_memory() -> bool
 *     glibc's malloc told to keep memory freed at the top of its heap (M_TRIM_THRESHOLD) and to grow the heap 64 MiB
 *     at a time (M_TOP_PAD), so that a command's next allocations reuse pages already faulted in instead of asking
 *     the kernel for fresh zeroed ones; False (nothing done) elsewhere. Process-wide: never called by the library.
 *
 * Permuted sums, for evalkit/stats/randomised_tukey.py:
 * permuted_sums(values, k, capsule, products, thresholds, sizes, permutations, out)
 *     The run sums of each replicate of the randomised Tukey HSD test: every topic's row of scores shuffled
 *     by Fisher-Yates with digits from numpy's bit generator (the capsule), as the numpy twin shuffles
 *     them (see permute.c and the module docstring of randomised_tukey.py).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"
#ifdef __GLIBC__
#include <limits.h>
#include <malloc.h>
#endif

static PyObject *keep_freed_memory(PyObject *self, PyObject *unused) {
    (void)self, (void)unused;
#ifdef __GLIBC__
    if (mallopt(M_TRIM_THRESHOLD, INT_MAX) && mallopt(M_TOP_PAD, 64 << 20)) Py_RETURN_TRUE;
#endif
    Py_RETURN_FALSE;
}

static PyMethodDef methods[] = {
    {"keep_freed_memory", keep_freed_memory, METH_NOARGS, "keep_freed_memory() -> bool: glibc's malloc keeps freed memory (short processes only)"},
    {"judge_run", judge_run, METH_VARARGS, "judge_run(data, query_ids, qidx, didx, doc_ids, seed, threads): a TREC run read against its gold (see judge_run.c)"},
    {"judge_file", judge_file, METH_VARARGS, "judge_file(fd, size, query_ids, qidx, didx, doc_ids, seed, threads): judge_run reading the run from its file (see judge_run.c)"},
    {"judged_rows", judged_rows, METH_VARARGS, "judged_rows(...) -> count: the judged rows of a ranked run (see scan.c)"},
    {"first_occurrences", first_occurrences, METH_VARARGS, "first_occurrences(qidx, didx, n_docs, first) -> number of repeated rows"},
    {"read_table", read_table, METH_VARARGS, "read_table(data, n_fields, extra, keep, numeric, seed, threads): see reader.c"},
    {"permuted_sums", permuted_sums, METH_VARARGS, "permuted_sums(values, k, capsule, products, thresholds, sizes, permutations, out)"},
    {"positions", positions, METH_VARARGS, "positions(values, universe, out, seed): index of each value in universe, -1 when absent"},
    {"text_marks", text_marks, METH_VARARGS, "text_marks(data) -> (first CR offset or -1, all ASCII): see scan.c"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "evalkit.native._native", "Compiled kernels of evalkit's readers and permutation test (see evalkit/native/csrc/module.c).", -1, methods,
                                   NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__native(void) { return PyModule_Create(&module); }
