/* The functions evalkit.native._native exports (module.c registers them). */
#ifndef EVALKIT_NATIVE_H
#define EVALKIT_NATIVE_H
#include <Python.h>

PyObject *read_table(PyObject *self, PyObject *args);        /* reader.c */
PyObject *judge_run(PyObject *self, PyObject *args);        /* judge_run.c */
PyObject *judge_file(PyObject *self, PyObject *args);       /* judge_run.c, judge_stream.c */
PyObject *positions(PyObject *self, PyObject *args);        /* ids.c */
PyObject *first_occurrences(PyObject *self, PyObject *args); /* scan.c */
PyObject *judged_rows(PyObject *self, PyObject *args);       /* scan.c */
PyObject *text_marks(PyObject *self, PyObject *args);        /* scan.c */
PyObject *permuted_sums(PyObject *self, PyObject *args);     /* permute.c */

#endif
