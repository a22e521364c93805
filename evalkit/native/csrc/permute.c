/* evalkit.native._native, permutations: permuted_sums (for evalkit/stats/randomised_tukey.py). See module.c. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"

/* numpy's bit generator interface (numpy/random/bitgen.h), as the "BitGenerator" capsule of a BitGenerator holds it */
typedef struct {
    void *state;
    uint64_t (*next_uint64)(void *st);
    uint32_t (*next_uint32)(void *st);
    double (*next_double)(void *st);
    uint64_t (*next_raw)(void *st);
} bitgen_t;

/* high word of u * m; *lo gets the low word */
static inline uint64_t mul_hi_lo(uint64_t u, uint64_t m, uint64_t *lo) {
#if defined(__SIZEOF_INT128__)
    unsigned __int128 p = (unsigned __int128)u * m;
    *lo = (uint64_t)p;
    return (uint64_t)(p >> 64);
#else
    uint64_t low_half = (u & 0xFFFFFFFFu) * m;
    uint64_t carry = (u >> 32) * m + (low_half >> 32);
    *lo = u * m;
    return carry >> 32;
#endif
}

/* permuted_sums(values, k, capsule, products, thresholds, sizes, permutations, out)
 * values: topics x k float64 (C order); products / thresholds: uint64 per radix group (P, 2^64 mod P);
 * sizes: int64 radixes per group (k, k-1, ..., 2 in order); out: permutations x k float64, written.
 * For each replicate, each topic in order: one draw per group from the bit generator, redrawn for all
 * groups while one fails Lemire's test ((u * P) mod 2^64 < 2^64 mod P); the row is shuffled by
 * Fisher-Yates (for i = k-1 .. 1: swap i and j, j the next mixed-radix digit: (j, u) = u * (i + 1)),
 * and added to the replicate's sums. The caller holds the bit generator's lock; the GIL is released. */
PyObject *permuted_sums(PyObject *self, PyObject *args) {
    (void)self;
    Py_buffer values = {0}, products = {0}, thresholds = {0}, sizes = {0}, out = {0};
    Py_ssize_t k, permutations;
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "y*nOy*y*y*nw*", &values, &k, &capsule, &products, &thresholds, &sizes, &permutations, &out))
        return NULL;
    PyObject *ret = NULL;
    bitgen_t *bitgen = PyCapsule_GetPointer(capsule, "BitGenerator");
    Py_ssize_t groups = products.len / 8;
    Py_ssize_t topics = k > 0 ? values.len / 8 / k : 0;
    const double *x = values.buf;
    const uint64_t *prod = products.buf, *thr = thresholds.buf;
    const int64_t *size = sizes.buf;
    double *sums = out.buf;
    int64_t radixes = 0;
    for (Py_ssize_t g = 0; g < groups && sizes.len / 8 == groups; g++) radixes += size[g];
    if (bitgen == NULL) {
        goto done;
    }
    if (k < 2 || groups < 1 || groups > 64 || thresholds.len != products.len || sizes.len / 8 != groups || radixes != k - 1
        || values.len != topics * k * 8 || out.len != permutations * k * 8) {
        PyErr_SetString(PyExc_ValueError, "permuted_sums: inconsistent arrays");
        goto done;
    }
    double *row = malloc(sizeof(double) * 2 * (size_t)k);
    if (row == NULL) {
        PyErr_NoMemory();
        goto done;
    }
    double *restrict acc = row + k;
    double *restrict work = row;
    Py_BEGIN_ALLOW_THREADS
    uint64_t draw[64];
    for (Py_ssize_t b = 0; b < permutations; b++) {
        memset(acc, 0, sizeof(double) * (size_t)k);
        for (Py_ssize_t t = 0; t < topics; t++) {
            int ok;
            do {
                ok = 1;
                for (Py_ssize_t g = 0; g < groups; g++) {
                    draw[g] = bitgen->next_uint64(bitgen->state);
                    ok &= draw[g] * prod[g] >= thr[g];
                }
            } while (!ok);
            memcpy(work, x + t * k, sizeof(double) * (size_t)k);
            uint64_t radix = (uint64_t)k;
            for (Py_ssize_t g = 0; g < groups; g++) {
                uint64_t u = draw[g];
                for (int64_t r = 0; r < size[g]; r++, radix--) {
                    uint64_t j = mul_hi_lo(u, radix, &u);
                    double held = work[j];
                    work[j] = work[radix - 1];
                    work[radix - 1] = held;
                }
            }
            for (Py_ssize_t s = 0; s < k; s++) acc[s] += work[s];
        }
        memcpy(sums + b * k, acc, sizeof(double) * (size_t)k);
    }
    Py_END_ALLOW_THREADS
    free(row);
    ret = Py_None;
    Py_INCREF(ret);
done:
    PyBuffer_Release(&values);
    PyBuffer_Release(&products);
    PyBuffer_Release(&thresholds);
    PyBuffer_Release(&sizes);
    PyBuffer_Release(&out);
    return ret;
}
