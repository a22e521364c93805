/* evalkit.native._native, id lookup (for evalkit/data/ids.py): positions. See module.c for the module's contents and
 * table.h for the id table. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "native.h"
#include "table.h"

#define BATCH 16 /* values probed together */

/* ------------------------------------------------------------------ positions */

PyObject *positions(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *values, *universe;
    Py_buffer out;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "O!O!w*K", &PyList_Type, &values, &PyList_Type, &universe, &out, &seed)) return NULL;
    Py_ssize_t n = PyList_GET_SIZE(values), u = PyList_GET_SIZE(universe);
    int64_t *result = out.buf;
    PyObject *ret = NULL;
    Table t;
    int ok = table_init(&t, u, seed);
    if (!ok) PyErr_NoMemory();
    else if (out.len < n * (Py_ssize_t)sizeof(int64_t)) {
        PyErr_SetString(PyExc_ValueError, "positions: output buffer too small");
        ok = 0;
    }
    /* the universe into the table (a repeated id keeps its first index; codes = universe indices while
     * all are distinct, which the caller guarantees: a unique array) */
    for (Py_ssize_t k = 0; ok && k < u; k++) {
        PyObject *item = PyList_GET_ITEM(universe, k);
        Py_ssize_t size;
        const char *text = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &size) : NULL;
        if (text == NULL || (uint64_t)size >= UINT32_MAX) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "positions: ids must be str");
            ok = 0;
            break;
        }
        uint64_t h = hash_bytes((const unsigned char *)text, size, seed), slot;
        if (table_probe(&t, (const unsigned char *)text, size, h, &slot) >= 0 || table_add(&t, (const unsigned char *)text, size, h, slot) != k) {
            if (!PyErr_Occurred()) PyErr_SetString(PyExc_ValueError, "positions: the universe repeats an id");
            ok = 0;
        }
    }
    /* the values, 16 at a time: their slots prefetched before they are probed (as reader.c codes its batches) */
    for (Py_ssize_t base = 0; ok && base < n; base += BATCH) {
        Py_ssize_t m = n - base < BATCH ? n - base : BATCH;
        const unsigned char *texts[BATCH];
        Py_ssize_t sizes[BATCH];
        uint64_t hashes[BATCH];
        for (Py_ssize_t j = 0; j < m; j++) {
            PyObject *item = PyList_GET_ITEM(values, base + j);
            const char *text = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &sizes[j]) : NULL;
            if (text == NULL) {
                if (!PyErr_Occurred()) PyErr_SetString(PyExc_TypeError, "positions: ids must be str");
                ok = 0;
                break;
            }
            texts[j] = (const unsigned char *)text;
            hashes[j] = hash_bytes(texts[j], sizes[j], seed);
            __builtin_prefetch(&t.slots[hashes[j] & t.mask]);
        }
        for (Py_ssize_t j = 0; ok && j < m; j++) {
            uint64_t slot;
            result[base + j] = (uint64_t)sizes[j] >= UINT32_MAX ? -1 /* longer than any id the table holds */
                                                                 : table_probe(&t, texts[j], sizes[j], hashes[j], &slot);
        }
    }
    if (ok) {
        ret = Py_None;
        Py_INCREF(ret);
    }
    table_free(&t);
    PyBuffer_Release(&out);
    return ret;
}
