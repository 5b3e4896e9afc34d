/* The tracing hot path, compiled: a kernel launch recorded again from the
 * tracer's memo (ops/kernel.py's ``again`` with Tracer.again's common case).
 *
 * Optional. graphtrace/ops/kernel.py uses it when it was built and
 * GRAPHTRACE_PURE_PYTHON is unset; its Python functions are the reference
 * and serve every case this file hands back to them: a scope that is closed,
 * has open regions, is a conditional body or follows its nodes online; a
 * launch whose arrays and stream are on two devices; no user frame found.
 * It records exactly what the Python path records (tests/test_speedups.py
 * compares the two).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <frameobject.h>
#include <stddef.h>
#include <string.h>

#if PY_VERSION_HEX < 0x030B0000
#error "the compiled tracing path needs Python 3.11 or newer (the pure-Python one serves 3.10)"
#endif

#ifndef Py_T_OBJECT_EX
#include <structmember.h>
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

/* The key of an object in Tracer._bufs: its address over 16 (as Tracer._bufs is keyed in trace.py).
 * Every object takes 16 bytes at least, so no two living ones share it; arrays
 * made one after another get keys close together, and their lookups in a large
 * table touch neighbouring memory instead of one cache line each. */
static inline PyObject *
cache_key(PyObject *obj)
{
    return PyLong_FromSize_t((size_t)obj >> 4);
}

/* set by configure(): the thread's active tracer, placement's device table,
 * the file -> "is graphtrace's own" cache and the function that fills it,
 * sys._getframe; by configure_launch(): kernel.py's function that records a
 * launch neither the memo nor record_new took */
static PyObject *STATE, *ONE_DEVICE, *INTERNAL, *IS_INTERNAL, *GETFRAME, *RECORD;

/* configure_numba(): proxy streams' base class */
static PyTypeObject *PROXY_STREAM;
static PyObject *ZERO;

/* enable(): whether the Launchers take their fast path (use_speedups) */
static int ENABLED = 1;

/* the tracer last made active (Tracer.__enter__ -> active()) and its thread:
 * STATE.tracer, without reading the thread-local, while nothing else is */
static PyObject *ACTIVE;
static PyThreadState *ACTIVE_THREAD;

static PyObject *s_tracer, *s__tracer, *s_memo_off, *s_memo, *s__device, *s__scope,
    *s__top, *s_closed, *s_open_regions, *s_conditional, *s_online,
    *s__count, *s_rec, *s_entries, *s__index, *s_codes, *s_ends, *s_opaque, *s_again,
    *s__bufs, *s__views, *s__entry, *s_cai, *s_cupy, *s_numba, *s_sim, *s_iface, *s_descr,
    *s_data, *s_shape, *s_strides, *s_typestr, *s_ptr, *s_dtype, *s_device_ctypes_pointer,
    *s_gpu_data,
    *s_value, *s_valid_types, *s_raw_pointers, *s_step, *s__ary, *s_array_iface, *s_add,
    *s___class__, *s__roots, *s__slots, *s__root_index, *s__fast_view, *s__index_m,
    *s__memo_size, *s__remember, *s_itemsize, *s_str, *s_version;
/* object's __class__ descriptor (is_open) */
static PyObject *CLASS;

/* configure_launch(): trace.py's _PLAIN (type -> 0 constant, 1 int, 2 dynamic),
 * LOWEST_ADDRESS, _OPEN (types looked into), arrays.py's _kinds cache and _kind */
static PyObject *PLAIN, *LOWEST, *OPEN, *KINDS, *KIND;

/* configure_launch(): kernel.py's _launches (what launches of a kernel, argument
 * count and configuration share) and its KERNEL op */
static PyObject *LAUNCHES, *KERNEL_OP, *ONE;

/* The __slots__ of Stream, Scope and Recording, read at their offsets when an
 * object is of that very class (else, or when a slot is empty, by getattr). */
typedef struct {
    PyTypeObject *type;   /* NULL: by getattr always */
    Py_ssize_t offset[12];
    PyObject **name[12];
    int n;
} Layout;

enum { ST_TRACER, ST_INDEX, ST_SCOPE, ST_DEVICE };
enum { SC_REC, SC_CLOSED, SC_OPEN, SC_CONDITIONAL, SC_ONLINE };
enum { RE_ENTRIES, RE_CODES, RE_ENDS, RE_OPAQUE };
static Layout STREAM = {NULL, {0}, {&s__tracer, &s__index, &s__scope, &s__device}, 4};
static Layout SCOPE = {NULL, {0},
                       {&s_rec, &s_closed, &s_open_regions, &s_conditional, &s_online}, 5};
static Layout RECORDING = {NULL, {0}, {&s_entries, &s_codes, &s_ends, &s_opaque}, 4};
enum { TR_TOP, TR_COUNT, TR_MEMO, TR_MEMO_OFF, TR_BUFS, TR_VIEWS, TR_ROOTS, TR_SLOTS,
       TR_ROOT_INDEX, TR_FAST_VIEW, TR_MEMO_SIZE };
static Layout TRACER = {NULL, {0}, {&s__top, &s__count, &s_memo, &s_memo_off, &s__bufs,
                                    &s__views, &s__roots, &s__slots, &s__root_index,
                                    &s__fast_view, &s__memo_size}, 11};

/* obj's slot ``i`` of ``layout`` set to ``v``; 0, or -1 with an error */
static inline int
set(PyObject *obj, const Layout *layout, int i, PyObject *v)
{
    if (Py_TYPE(obj) == layout->type) {
        PyObject **at = (PyObject **)((char *)obj + layout->offset[i]);
        Py_XSETREF(*at, Py_NewRef(v));
        return 0;
    }
    return PyObject_SetAttr(obj, *layout->name[i], v);
}

/* obj's attribute ``i`` of ``layout``: a new reference, NULL with an error */
static inline PyObject *
get(PyObject *obj, const Layout *layout, int i)
{
    if (Py_TYPE(obj) == layout->type) {
        PyObject *v = *(PyObject **)((char *)obj + layout->offset[i]);
        if (v != NULL)
            return Py_NewRef(v);
    }
    return PyObject_GetAttr(obj, *layout->name[i]);
}

/* Fill ``layout`` from ``type``'s slots; 0, or -1 with an error. A class
 * whose attributes are not all plain slots is read by getattr. */
static int
learn(Layout *layout, PyObject *type)
{
    if (!PyType_Check(type)) {
        PyErr_SetString(PyExc_TypeError, "configure(): expected a class");
        return -1;
    }
    Py_CLEAR(layout->type);
    for (int i = 0; i < layout->n; i++) {
        PyObject *d = PyObject_GetAttr(type, *layout->name[i]);
        if (d == NULL)
            return -1;
        int plain = Py_IS_TYPE(d, &PyMemberDescr_Type) &&
                    ((PyMemberDescrObject *)d)->d_member->type == Py_T_OBJECT_EX;
        if (plain)
            layout->offset[i] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
        if (!plain)
            return 0;
    }
    layout->type = (PyTypeObject *)Py_NewRef(type);
    return 0;
}

static PyObject *user_frame_from(PyObject *f);

/* The user's frame: ``depth`` frames up from the caller of the compiled
 * function, then past graphtrace's own. NULL with no error: none was found
 * (the Python path then records its stand-in). */
static PyObject *
user_frame(int depth)
{
    PyObject *f;
    if (depth == 0) {   /* the caller's: no call */
        f = (PyObject *)PyEval_GetFrame();
        Py_XINCREF(f);
        return f == NULL ? NULL : user_frame_from(f);
    }
    PyObject *d = PyLong_FromLong(depth);
    if (d == NULL)
        return NULL;
    f = PyObject_CallOneArg(GETFRAME, d);
    Py_DECREF(d);
    if (f == NULL) {
        if (PyErr_ExceptionMatches(PyExc_ValueError)) {   /* the stack is shallower */
            PyErr_Clear();
        }
        return NULL;
    }
    return user_frame_from(f);
}

/* The first of ``f`` (a reference this takes) and the frames it was called
 * from that is not graphtrace's own; NULL, with an error or none */
static PyObject *
user_frame_from(PyObject *f)
{
    while (f != NULL) {
        PyCodeObject *code = PyFrame_GetCode((PyFrameObject *)f);
        PyObject *file = code->co_filename;
        Py_INCREF(file);
        Py_DECREF(code);
        PyObject *inside = PyDict_GetItemWithError(INTERNAL, file);   /* borrowed */
        int yes;
        if (inside != NULL) {
            yes = PyObject_IsTrue(inside);
        }
        else if (PyErr_Occurred()) {
            yes = -1;
        }
        else {
            PyObject *r = PyObject_CallOneArg(IS_INTERNAL, file);
            yes = r == NULL ? -1 : PyObject_IsTrue(r);
            Py_XDECREF(r);
        }
        Py_DECREF(file);
        if (yes < 0) {
            Py_DECREF(f);
            return NULL;
        }
        if (!yes)
            return f;
        PyObject *back = (PyObject *)PyFrame_GetBack((PyFrameObject *)f);
        Py_DECREF(f);
        f = back;
    }
    return NULL;
}

/* Record ``launch`` on ``stream`` as Tracer.again does. 1: recorded; 0: a
 * case for the Python path (nothing was changed); -1: an error. */
static int
record(PyObject *tracer, PyObject *stream, PyObject *launch, int depth)
{
    if (!PyTuple_CheckExact(launch) || PyTuple_GET_SIZE(launch) != 9)
        return 0;
    PyObject *op = PyTuple_GET_ITEM(launch, 0), *target = PyTuple_GET_ITEM(launch, 1),
             *recargs = PyTuple_GET_ITEM(launch, 2), *attrs = PyTuple_GET_ITEM(launch, 3),
             *codes = PyTuple_GET_ITEM(launch, 4), *places = PyTuple_GET_ITEM(launch, 5),
             *opaque = PyTuple_GET_ITEM(launch, 6);
    if (!PyList_CheckExact(codes) || !PyLong_CheckExact(places))
        return 0;
    int result = -1, o;
    PyObject *dev = NULL, *dkey = NULL, *device = NULL, *scope = NULL, *f = NULL, *code = NULL,
             *count = NULL, *next = NULL, *rec = NULL, *entries = NULL, *index = NULL,
             *lasti = NULL, *entry = NULL, *all = NULL, *ends = NULL, *n = NULL,
             *olist = NULL;

    /* the device: placement's rule for a kernel (two devices: the Python path) */
    dev = get(stream, &STREAM, ST_DEVICE);
    if (dev == NULL)
        goto done;
    if (dev == Py_None) {
        dkey = Py_NewRef(places);
    }
    else {
        long d = PyLong_AsLong(dev);
        if (d == -1 && PyErr_Occurred())
            goto done;
        if (d < 0 || d > 60) {
            result = 0;
            goto done;
        }
        PyObject *bit = PyLong_FromUnsignedLongLong(2ULL << d);
        if (bit == NULL)
            goto done;
        dkey = PyNumber_Or(places, bit);
        Py_DECREF(bit);
        if (dkey == NULL)
            goto done;
    }
    device = PyDict_GetItemWithError(ONE_DEVICE, dkey);   /* borrowed until below */
    if (device == NULL) {
        result = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    Py_INCREF(device);

    /* the scope, in the common case only: open, no open regions, not a
     * conditional body, not followed online */
    scope = get(stream, &STREAM, ST_SCOPE);
    if (scope == NULL)
        goto done;
    if (scope == Py_None) {
        Py_SETREF(scope, get(tracer, &TRACER, TR_TOP));
        if (scope == NULL)
            goto done;
    }
    for (int i = SC_CLOSED; i <= SC_ONLINE; i++) {
        PyObject *v = get(scope, &SCOPE, i);
        int t = v == NULL ? -1 : PyObject_IsTrue(v);
        Py_XDECREF(v);
        if (t != 0) {
            result = t < 0 ? -1 : 0;
            goto done;
        }
    }

    f = user_frame(depth);
    if (f == NULL) {
        result = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    code = (PyObject *)PyFrame_GetCode((PyFrameObject *)f);
    lasti = PyLong_FromLong(PyFrame_GetLasti((PyFrameObject *)f));
    index = lasti == NULL ? NULL : get(stream, &STREAM, ST_INDEX);
    rec = index == NULL ? NULL : get(scope, &SCOPE, SC_REC);
    entries = rec == NULL ? NULL : get(rec, &RECORDING, RE_ENTRIES);
    all = entries == NULL ? NULL : get(rec, &RECORDING, RE_CODES);
    ends = all == NULL ? NULL : get(rec, &RECORDING, RE_ENDS);
    count = ends == NULL ? NULL : get(tracer, &TRACER, TR_COUNT);
    if (count == NULL)
        goto done;
    o = PyObject_IsTrue(opaque);
    if (o < 0)
        goto done;
    if (o && (olist = get(rec, &RECORDING, RE_OPAQUE)) == NULL)
        goto done;
    if (!PyList_CheckExact(entries) || !PyList_CheckExact(all) || !PyList_CheckExact(ends) ||
            (olist != NULL && !PyList_CheckExact(olist))) {
        result = 0;
        goto done;
    }
    long long c = PyLong_AsLongLong(count);
    if (c == -1 && PyErr_Occurred())
        goto done;
    next = PyLong_FromLongLong(c + 1);
    entry = next == NULL ? NULL : PyTuple_Pack(9, op, target, recargs, attrs, index, code,
                                               lasti, count, device);
    if (entry == NULL)
        goto done;

    /* from here on the recording changes */
    if (set(tracer, &TRACER, TR_COUNT, next) < 0 || PyList_Append(entries, entry) < 0)
        goto done;
    Py_ssize_t end = PyList_GET_SIZE(all);
    if (PyList_SetSlice(all, end, end, codes) < 0)
        goto done;
    n = PyLong_FromSsize_t(PyList_GET_SIZE(all));
    if (n == NULL || PyList_Append(ends, n) < 0)
        goto done;
    if (olist != NULL) {
        Py_SETREF(n, PyLong_FromSsize_t(PyList_GET_SIZE(entries) - 1));
        if (n == NULL || PyList_Append(olist, n) < 0)
            goto done;
    }
    result = 1;
done:
    Py_XDECREF(dev); Py_XDECREF(dkey); Py_XDECREF(scope); Py_XDECREF(f);
    Py_XDECREF(code); Py_XDECREF(count); Py_XDECREF(next); Py_XDECREF(rec);
    Py_XDECREF(entries); Py_XDECREF(index); Py_XDECREF(lasti); Py_XDECREF(entry);
    Py_XDECREF(all); Py_XDECREF(ends); Py_XDECREF(n); Py_XDECREF(olist);
    Py_XDECREF(device);
    return result;
}

/* The memo's answer for a launch: True when it was recorded from the memo,
 * else the key to remember it by (None for a kernel no longer remembered);
 * NULL with an error. ``depth`` counts frames as the Python path does from
 * Tracer.again, where ``again``'s own frame is one. */
static PyObject *
again_impl(PyObject *stream, PyObject *k, PyObject *grid, PyObject *block, PyObject *shared_mem,
           PyObject *args, int depth)
{
    PyObject *result = NULL, *tracer = NULL, *off = NULL, *kid = NULL, *key = NULL,
             *memo = NULL, *launch = NULL, *active = NULL;
    tracer = get(stream, &STREAM, ST_TRACER);
    off = tracer == NULL ? NULL : get(tracer, &TRACER, TR_MEMO_OFF);
    kid = off == NULL ? NULL : PyLong_FromVoidPtr(k);
    if (kid == NULL)
        goto done;
    int no = PySequence_Contains(off, kid);
    if (no != 0) {
        if (no > 0)
            result = Py_NewRef(Py_None);
        goto done;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(args);
    key = PyTuple_New(4 + n);
    if (key == NULL)
        goto done;
    PyTuple_SET_ITEM(key, 0, Py_NewRef(kid));
    PyTuple_SET_ITEM(key, 1, Py_NewRef(grid));
    PyTuple_SET_ITEM(key, 2, Py_NewRef(block));
    PyTuple_SET_ITEM(key, 3, Py_NewRef(shared_mem));
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *id = PyLong_FromVoidPtr(PyTuple_GET_ITEM(args, i));
        if (id == NULL)
            goto done;
        PyTuple_SET_ITEM(key, 4 + i, id);
    }
    memo = get(tracer, &TRACER, TR_MEMO);
    if (memo == NULL)
        goto done;
    if (PyDict_CheckExact(memo)) {
        launch = Py_XNewRef(PyDict_GetItemWithError(memo, key));
    }
    else {
        launch = PyObject_GetItem(memo, key);
        if (launch == NULL && PyErr_ExceptionMatches(PyExc_KeyError))
            PyErr_Clear();
    }
    if (launch == NULL) {
        if (!PyErr_Occurred())
            result = Py_NewRef(key);
        goto done;
    }
    if (tracer == ACTIVE && PyThreadState_Get() == ACTIVE_THREAD)
        active = Py_NewRef(tracer);
    else
        active = PyObject_GetAttr(STATE, s_tracer);   /* STATE.tracer; unset: None */
    if (active == NULL) {
        if (!PyErr_ExceptionMatches(PyExc_AttributeError))
            goto done;
        PyErr_Clear();
    }
    if (active != tracer) {
        result = Py_NewRef(key);
        goto done;
    }
    int r = record(tracer, stream, launch, depth - 2);
    if (r < 0)
        goto done;
    if (r == 0) {   /* the Python path: its frames count from Tracer.again */
        PyObject *d = PyLong_FromLong(depth - 1);
        if (d == NULL)
            goto done;
        PyObject *out = PyObject_CallMethodObjArgs(tracer, s_again, stream, launch, d, NULL);
        Py_DECREF(d);
        if (out == NULL)
            goto done;
        Py_DECREF(out);
    }
    result = Py_NewRef(Py_True);
done:
    Py_XDECREF(tracer); Py_XDECREF(off); Py_XDECREF(kid); Py_XDECREF(key);
    Py_XDECREF(memo); Py_XDECREF(launch); Py_XDECREF(active);
    return result;
}

static int
configured(void)
{
    if (STATE == NULL)
        PyErr_SetString(PyExc_RuntimeError, "graphtrace._speedups is not configured");
    return STATE != NULL;
}

/* again(stream, kernel, grid, block, shared_mem, args, depth=3): ops/kernel.py's
 * ``_again``, which it replaces. */
static PyObject *
again(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != 6 && nargs != 7) {
        PyErr_SetString(PyExc_TypeError, "again() takes 6 or 7 arguments");
        return NULL;
    }
    if (!configured())
        return NULL;
    int depth = 3;
    if (nargs == 7) {
        depth = (int)PyLong_AsLong(a[6]);
        if (depth == -1 && PyErr_Occurred())
            return NULL;
    }
    if (!PyTuple_Check(a[5])) {
        PyErr_SetString(PyExc_TypeError, "again(): args must be a tuple");
        return NULL;
    }
    return again_impl(a[0], a[1], a[2], a[3], a[4], a[5], depth);
}

/* An int, or a tuple of ints: a grid or block that compares equal only to
 * one meaning the same (kernel.py's _plain) */
static int
plain(PyObject *dims)
{
    if (PyLong_CheckExact(dims))
        return 1;
    if (!PyTuple_CheckExact(dims))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(dims); i++)
        if (!PyLong_CheckExact(PyTuple_GET_ITEM(dims, i)))
            return 0;
    return 1;
}

static PyObject *arguments(PyObject *module, PyObject *const *a, Py_ssize_t nargs);

/* Whether ``item`` (a recorded argument) has a stride of zero or less along an
 * axis of two or more elements (x[::-1], a broadcast), as _adapter.py's
 * _not_forward tells: 1 or 0 (what has no shape and strides is not such a view) */
static int
not_forward(PyObject *item)
{
    PyObject *shape = PyObject_GetAttr(item, s_shape);
    PyObject *strides = shape == NULL ? NULL : PyObject_GetAttr(item, s_strides);
    int found = 0;
    if (strides != NULL && PyTuple_CheckExact(shape) && PyTuple_CheckExact(strides) &&
            PyTuple_GET_SIZE(shape) == PyTuple_GET_SIZE(strides)) {
        for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(shape) && !found; i++) {
            long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
            long long st = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i));
            if (PyErr_Occurred())
                found = 1;   /* not plain numbers: for Python to look at */
            else if (n > 1 && st <= 0)
                found = 1;
        }
    }
    Py_XDECREF(shape);
    Py_XDECREF(strides);
    PyErr_Clear();
    return found;
}

/* Whether a launch not ``opaque`` passes a view of several runs of bytes (a
 * Buffer's step), or one laid out backward or repeating its elements (a stride of
 * zero or less), to a kernel that takes arrays as bare addresses
 * (adapter.raw_pointers): 1, for the Python path to look at (Adapter.refuse_gaps
 * refuses it if its elements overlap or there are bytes between the runs, and the
 * other always); 0; -1 with an error. A forward view of one run (a step of 0) is
 * its elements one after another in some order: every forward view whose elements
 * overlap has several runs, so comes to Python. */
static int
pointer_gaps(PyObject *adapter, PyObject *rec, PyObject *opaque)
{
    int o = PyObject_IsTrue(opaque);
    if (o != 0 || !PyTuple_CheckExact(rec))
        return o < 0 ? -1 : 0;
    PyObject *raw = PyObject_GetAttr(adapter, s_raw_pointers);
    int takes = raw == NULL ? -1 : PyObject_IsTrue(raw);
    Py_XDECREF(raw);
    if (takes <= 0) {
        PyErr_Clear();
        return 0;
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(rec); i++) {
        PyObject *item = PyTuple_GET_ITEM(rec, i);
        if (PLAIN != NULL && PyDict_GetItemWithError(PLAIN, (PyObject *)Py_TYPE(item)) != NULL)
            continue;   /* a number */
        PyObject *step = PyObject_GetAttr(item, s_step);
        int gaps = step == NULL ? 0 : PyObject_IsTrue(step);
        Py_XDECREF(step);
        PyErr_Clear();
        if (gaps > 0 || not_forward(item))
            return 1;
    }
    return 0;
}

/* Whether the types of the recorded arguments ``rec`` are a tuple in
 * adapter.valid_types (Adapter.validate passed them on their types alone): 1,
 * 0 (validate is to run), -1 with an error */
static int
checked_types(PyObject *adapter, PyObject *rec)
{
    PyObject *valid = PyObject_GetAttr(adapter, s_valid_types);
    if (valid == NULL || !PyAnySet_CheckExact(valid) || PySet_GET_SIZE(valid) == 0 ||
            !PyTuple_CheckExact(rec)) {
        Py_XDECREF(valid);
        PyErr_Clear();
        return 0;
    }
    Py_ssize_t n = PyTuple_GET_SIZE(rec);
    PyObject *types = PyTuple_New(n);
    if (types == NULL) {
        Py_DECREF(valid);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        PyTuple_SET_ITEM(types, i, Py_NewRef((PyObject *)Py_TYPE(PyTuple_GET_ITEM(rec, i))));
    int found = PySet_Contains(valid, types);
    Py_DECREF(types);
    Py_DECREF(valid);
    return found;
}

/* Remember ``launch`` (recorded) by ``memo``, ``(key, kernel)``, as Tracer._remember
 * does: in the memo here when every array was seen before, nothing may be an
 * address and the memo is not full; Tracer._remember does the rest. 0, -1. */
static int
remember(PyObject *tracer, PyObject *memo, PyObject *launch, PyObject *got)
{
    PyObject *numbers = PyTuple_GET_ITEM(got, 3), *seen = PyTuple_GET_ITEM(got, 4);
    PyObject *table = get(tracer, &TRACER, TR_MEMO);
    PyObject *size = table == NULL ? NULL : get(tracer, &TRACER, TR_MEMO_SIZE);
    if (size == NULL) {
        Py_XDECREF(table);
        return -1;
    }
    Py_ssize_t most = PyLong_Check(size) ? PyLong_AsSsize_t(size) : -1;
    int r;
    if (most < 0 && PyErr_Occurred()) {
        r = -1;
    }
    else if (seen == Py_True && numbers == Py_False && PyDict_CheckExact(table) &&
             PyDict_GET_SIZE(table) < most) {
        r = PyDict_SetItem(table, PyTuple_GET_ITEM(memo, 0), launch);
    }
    else {
        PyObject *call[5] = {tracer, memo, launch, seen, numbers};
        PyObject *out = PyObject_VectorcallMethod(s__remember, call, 5, NULL);
        r = out == NULL ? -1 : 0;
        Py_XDECREF(out);
    }
    Py_DECREF(table);
    Py_DECREF(size);
    return r;
}

/* Tracer.add for a launch from record_new, remembered by ``memo`` (``(key, kernel)``,
 * or None for a kernel no longer remembered): ``hit`` is kernel.py's launch
 * kind, the user's frame the caller's. 1: recorded; 0: for the Python path
 * (which redoes the arguments: their Buffers are kept by then, so the same
 * ones); -1: an error. */
static int
add_launch(PyObject *tracer, PyObject *stream, PyObject *hit, PyObject *args,
           PyObject *opaque, PyObject *memo)
{
    PyObject *adapter = PyTuple_GET_ITEM(hit, 1), *modes = PyTuple_GET_ITEM(hit, 2),
             *validate = PyTuple_GET_ITEM(hit, 3), *attrs = PyTuple_GET_ITEM(hit, 5),
             *addresses = PyTuple_GET_ITEM(hit, 6);
    PyObject *av[3] = {tracer, args, modes};
    PyObject *got = arguments(NULL, av, 3);   /* (rec, codes, places, numbers, seen) */
    if (got == NULL || got == Py_None || !PyTuple_CheckExact(got) || PyTuple_GET_SIZE(got) != 5) {
        Py_XDECREF(got);
        return got == NULL ? -1 : 0;
    }
    PyObject *rec = PyTuple_GET_ITEM(got, 0), *places = PyTuple_GET_ITEM(got, 2);
    PyObject *host = PyNumber_And(places, ONE);   /* host memory: Python refuses it */
    int refused = host == NULL ? -1 : PyObject_IsTrue(host), r = -1;
    Py_XDECREF(host);
    PyObject *launch = NULL, *out = NULL;
    if (refused != 0) {
        r = refused < 0 ? -1 : 0;
        goto done;
    }
    int gaps = pointer_gaps(adapter, rec, opaque);   /* Python refuses them (Adapter.refuse_gaps) */
    if (gaps != 0) {
        r = gaps < 0 ? -1 : 0;
        goto done;
    }
    if (validate != Py_None) {
        int valid = checked_types(adapter, rec);
        if (valid < 0)
            goto done;
        out = valid ? NULL : PyObject_CallOneArg(validate, rec);
        if (!valid && out == NULL)
            goto done;
        Py_CLEAR(out);
    }
    int numbers = PyObject_IsTrue(PyTuple_GET_ITEM(got, 3)), o = PyObject_IsTrue(opaque);
    if (numbers < 0 || o < 0)
        goto done;
    if (numbers && !o && addresses != Py_None) {
        out = PyObject_CallFunctionObjArgs(addresses, tracer, rec, NULL);
        if (out == NULL)
            goto done;
        Py_CLEAR(out);
    }
    launch = PyTuple_Pack(9, KERNEL_OP, adapter, rec, attrs, PyTuple_GET_ITEM(got, 1), places,
                          opaque, args, memo);
    if (launch == NULL)
        goto done;
    r = record(tracer, stream, launch, 0);
    if (r == 0) {   /* Tracer.again from here: its caller's frame is the user's */
        PyObject *call[4] = {tracer, stream, launch, ONE};
        out = PyObject_VectorcallMethod(s_again, call, 4, NULL);
        r = out == NULL ? -1 : 1;
    }
    if (r == 1 && memo != Py_None && remember(tracer, memo, launch, got) < 0)
        r = -1;
done:
    Py_DECREF(got);
    Py_XDECREF(launch);
    Py_XDECREF(out);
    return r;
}

/* A launch the memo did not answer (``key``: what again_impl gave), recorded
 * as kernel.py's record_launch does when its kind is known: Tracer.add with
 * the user's frame one up from add's. 1: recorded; 0: for the Python path
 * (nothing done); -1: an error. */
static int
record_new(PyObject *stream, PyObject *k, PyObject *grid, PyObject *block, PyObject *shared_mem,
           PyObject *args, PyObject *key)
{
    if (LAUNCHES == NULL || !PyDict_CheckExact(LAUNCHES))
        return 0;
    PyObject *tracer = get(stream, &STREAM, ST_TRACER);
    if (tracer == NULL)
        return -1;
    int result = 0;
    PyObject *kid = NULL, *n = NULL, *lkey = NULL, *hit = NULL, *opaque = NULL, *memo = NULL;
    if (tracer != ACTIVE || PyThreadState_Get() != ACTIVE_THREAD)
        goto done;   /* the Python path says why it is refused */
    kid = PyLong_FromVoidPtr(k);
    n = kid == NULL ? NULL : PyLong_FromSsize_t(PyTuple_GET_SIZE(args));
    lkey = n == NULL ? NULL : PyTuple_Pack(5, kid, n, grid, block, shared_mem);
    if (lkey == NULL) {
        result = -1;
        goto done;
    }
    hit = Py_XNewRef(PyDict_GetItemWithError(LAUNCHES, lkey));
    if (hit == NULL) {
        result = PyErr_Occurred() ? -1 : 0;
        goto done;
    }
    if (PyWeakref_CheckRefExact(hit)) {   /* owned by the kernel (owned.py's keep): its box */
        PyObject *box = PyWeakref_GetObject(hit);   /* borrowed; None once it is gone */
        Py_SETREF(hit, box != NULL && PyList_Check(box) && PyList_GET_SIZE(box) == 1 ?
                       Py_NewRef(PyList_GET_ITEM(box, 0)) : NULL);
        if (hit == NULL) {
            result = PyErr_Occurred() ? -1 : 0;
            goto done;
        }
    }
    if (!PyTuple_CheckExact(hit) || PyTuple_GET_SIZE(hit) != 7 || PyTuple_GET_ITEM(hit, 0) != k)
        goto done;
    opaque = PyObject_GetAttr(PyTuple_GET_ITEM(hit, 1), s_opaque);   /* the adapter's */
    memo = opaque == NULL ? NULL : key == Py_None ? Py_NewRef(Py_None) : PyTuple_Pack(2, key, k);
    if (memo == NULL) {
        result = -1;
        goto done;
    }
    result = add_launch(tracer, stream, hit, args, opaque, memo);   /* Tracer.add */
    if (result != 0)
        goto done;
    /* add(stream, KERNEL, adapter, args, modes, attrs, opaque, refuse_host, validate,
     *     addresses, memo, depth) */
    PyObject *call[13] = {tracer, stream, KERNEL_OP, PyTuple_GET_ITEM(hit, 1), args,
                          PyTuple_GET_ITEM(hit, 2), PyTuple_GET_ITEM(hit, 5), opaque,
                          PyTuple_GET_ITEM(hit, 4), PyTuple_GET_ITEM(hit, 3),
                          PyTuple_GET_ITEM(hit, 6), memo, ONE};
    PyObject *out = PyObject_VectorcallMethod(s_add, call, 13, NULL);
    result = out == NULL ? -1 : 1;
    Py_XDECREF(out);
done:
    Py_DECREF(tracer);
    Py_XDECREF(kid); Py_XDECREF(n); Py_XDECREF(lkey); Py_XDECREF(hit); Py_XDECREF(opaque);
    Py_XDECREF(memo);
    return result;
}

/* A launch the user's frame (the caller's) issued on a proxy stream: from the
 * memo, else by record_new, else by RECORD(stream, kernel, grid, block, args,
 * shared_mem, key) in Python. ``fast``: grid and block are plain and
 * shared_mem None or an int (else the memo is not asked: key None). */
static PyObject *
launch_plain(PyObject *stream, PyObject *k, PyObject *grid, PyObject *block,
             PyObject *shared_mem, PyObject *kargs, int fast)
{
    if (RECORD == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "graphtrace._speedups is not configured");
        return NULL;
    }
    /* the user's frame is the caller's: 2 from Tracer.again, were it called here */
    PyObject *key = fast ? again_impl(stream, k, grid, block, shared_mem, kargs, 2)
                         : Py_NewRef(Py_None);
    if (key == NULL)
        return NULL;
    int r = key == Py_True ? 1 :
            fast ? record_new(stream, k, grid, block, shared_mem, kargs, key) : 0;
    PyObject *out = NULL;
    if (r > 0) {
        out = Py_NewRef(Py_None);
    }
    else if (r == 0) {
        PyObject *call[7] = {stream, k, grid, block, kargs, shared_mem, key};
        out = PyObject_Vectorcall(RECORD, call, 7, NULL);
    }
    Py_DECREF(key);
    return out;
}

/* ``kernel[grid, block, s]`` for a proxy stream ``s``, compiled: called with
 * the launch's arguments, it records the launch (_numba_launch.py's _ProxyLaunch). */
typedef struct {
    PyObject_HEAD
    PyObject *kernel, *grid, *block, *stream, *shared_mem;
    vectorcallfunc vectorcall;
} ProxyLaunch;

static PyTypeObject ProxyLaunchType;

static PyObject *
proxy_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    ProxyLaunch *p = (ProxyLaunch *)self;
    if (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0) {
        /* refused by _numba_launch._refuse_keywords, which names the user's line */
        Py_ssize_t n = PyVectorcall_NARGS(nargsf);
        PyObject *kwargs = PyDict_New(), *refuse = NULL;
        for (Py_ssize_t i = 0; kwargs != NULL && i < PyTuple_GET_SIZE(kwnames); i++)
            if (PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[n + i]) < 0)
                Py_CLEAR(kwargs);
        PyObject *mod = kwargs == NULL ? NULL : PyImport_ImportModule("graphtrace.ops._numba_launch");
        refuse = mod == NULL ? NULL : PyObject_GetAttrString(mod, "_refuse_keywords");
        PyObject *r = refuse == NULL ? NULL :
                      PyObject_CallFunctionObjArgs(refuse, p->kernel, kwargs, NULL);
        Py_XDECREF(r);
        Py_XDECREF(refuse);
        Py_XDECREF(mod);
        Py_XDECREF(kwargs);
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_TypeError, "a numba launch takes positional arguments only");
        return NULL;
    }
    PyObject *kargs = PyTuple_New(PyVectorcall_NARGS(nargsf));
    if (kargs == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(kargs); i++)
        PyTuple_SET_ITEM(kargs, i, Py_NewRef(args[i]));
    int fast = plain(p->grid) && plain(p->block) && PyLong_CheckExact(p->shared_mem);
    PyObject *out = launch_plain(p->stream, p->kernel, p->grid, p->block, p->shared_mem, kargs,
                                 fast);
    Py_DECREF(kargs);
    return out;
}

static PyObject *
proxy_make(PyObject *kernel, PyObject *grid, PyObject *block, PyObject *stream,
           PyObject *shared_mem)
{
    ProxyLaunch *p = PyObject_GC_New(ProxyLaunch, &ProxyLaunchType);
    if (p == NULL)
        return NULL;
    p->kernel = Py_NewRef(kernel);
    p->grid = Py_NewRef(grid);
    p->block = Py_NewRef(block);
    p->stream = Py_NewRef(stream);
    p->shared_mem = Py_NewRef(shared_mem);
    p->vectorcall = proxy_call;
    PyObject_GC_Track(p);
    return (PyObject *)p;
}

static int
proxy_traverse(PyObject *self, visitproc visit, void *arg)
{
    ProxyLaunch *p = (ProxyLaunch *)self;
    Py_VISIT(p->kernel); Py_VISIT(p->grid); Py_VISIT(p->block); Py_VISIT(p->stream);
    Py_VISIT(p->shared_mem);
    return 0;
}

static int
proxy_clear(PyObject *self)
{
    ProxyLaunch *p = (ProxyLaunch *)self;
    Py_CLEAR(p->kernel); Py_CLEAR(p->grid); Py_CLEAR(p->block); Py_CLEAR(p->stream);
    Py_CLEAR(p->shared_mem);
    return 0;
}

static void
proxy_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    proxy_clear(self);
    PyObject_GC_Del(self);
}

static PyObject *
proxy_repr(PyObject *self)
{
    ProxyLaunch *p = (ProxyLaunch *)self;
    return PyUnicode_FromFormat("<launch of %R [%R, %R] on %R>", p->kernel, p->grid,
                                p->block, p->stream);
}

static PyTypeObject ProxyLaunchType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "graphtrace._speedups.ProxyLaunch",
    .tp_doc = "kernel[grid, block, s] for a proxy stream s: call it with the kernel's "
              "arguments to record the launch.",
    .tp_basicsize = sizeof(ProxyLaunch),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL,
    .tp_vectorcall_offset = offsetof(ProxyLaunch, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_repr = proxy_repr,
    .tp_traverse = proxy_traverse,
    .tp_clear = proxy_clear,
    .tp_dealloc = proxy_dealloc,
};

/* A Python method with a compiled fast path, bound like a function; its name,
 * docstring and signature are the method's (``__wrapped__``), which takes
 * every call the fast path does not:
 * - kind "launch", Stream.launch: ``s.launch(kernel, grid, block, *args)``
 *   with grid and block ints or tuples of ints and no keyword is looked up
 *   in the memo and, if it is not there, recorded (launch_plain);
 * - kind "getitem", a numba dispatcher's ``__getitem__``: ``kernel[grid,
 *   block, s]`` for a proxy stream ``s`` is a ProxyLaunch. */
enum { LAUNCH, GETITEM };

typedef struct {
    PyObject_HEAD
    PyObject *func;
    int kind;
    vectorcallfunc vectorcall;
} Launcher;

static PyObject *
launcher_call(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    Launcher *l = (Launcher *)self;
    Py_ssize_t n = PyVectorcall_NARGS(nargsf);
    if (!ENABLED || (kwnames != NULL && PyTuple_GET_SIZE(kwnames) > 0))
        return PyObject_Vectorcall(l->func, args, nargsf, kwnames);
    if (l->kind == GETITEM) {
        PyObject *config = n == 2 ? args[1] : NULL;
        if (config == NULL || PROXY_STREAM == NULL || !PyTuple_CheckExact(config) ||
                PyTuple_GET_SIZE(config) != 3 ||
                !PyObject_TypeCheck(PyTuple_GET_ITEM(config, 2), PROXY_STREAM))
            return PyObject_Vectorcall(l->func, args, nargsf, NULL);
        return proxy_make(args[0], PyTuple_GET_ITEM(config, 0), PyTuple_GET_ITEM(config, 1),
                          PyTuple_GET_ITEM(config, 2), ZERO);
    }
    if (n < 4 || !plain(args[2]) || !plain(args[3]) || RECORD == NULL || STATE == NULL)
        return PyObject_Vectorcall(l->func, args, nargsf, NULL);
    PyObject *kargs = PyTuple_New(n - 4);
    if (kargs == NULL)
        return NULL;
    for (Py_ssize_t i = 4; i < n; i++)
        PyTuple_SET_ITEM(kargs, i - 4, Py_NewRef(args[i]));
    PyObject *out = launch_plain(args[0], args[1], args[2], args[3], Py_None, kargs, 1);
    Py_DECREF(kargs);
    return out;
}

static PyObject *
launcher_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyObject *
launcher_getattro(PyObject *self, PyObject *name)
{
    Launcher *l = (Launcher *)self;
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0)
        return Py_NewRef(l->func);
    PyObject *v = PyObject_GenericGetAttr(self, name);
    if (v != NULL || !PyErr_ExceptionMatches(PyExc_AttributeError))
        return v;
    PyErr_Clear();
    return PyObject_GetAttr(l->func, name);
}

static PyObject *
launcher_doc(PyObject *self, void *closure)
{
    return PyObject_GetAttrString(((Launcher *)self)->func, "__doc__");
}

static PyObject *
launcher_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyObject *func;
    const char *kind = "launch";
    if (!PyArg_ParseTuple(args, "O|s:Launcher", &func, &kind))
        return NULL;
    if (!PyCallable_Check(func)) {
        PyErr_SetString(PyExc_TypeError, "Launcher(func, kind): func must be callable");
        return NULL;
    }
    int k = strcmp(kind, "launch") == 0 ? LAUNCH : strcmp(kind, "getitem") == 0 ? GETITEM : -1;
    if (k < 0) {
        PyErr_Format(PyExc_ValueError, "Launcher(func, kind): kind is 'launch' or 'getitem', "
                     "not %R", PyTuple_GET_ITEM(args, 1));
        return NULL;
    }
    Launcher *l = (Launcher *)type->tp_alloc(type, 0);
    if (l == NULL)
        return NULL;
    l->func = Py_NewRef(func);
    l->kind = k;
    l->vectorcall = launcher_call;
    return (PyObject *)l;
}

static int
launcher_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((Launcher *)self)->func);
    return 0;
}

static void
launcher_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    Py_CLEAR(((Launcher *)self)->func);
    Py_TYPE(self)->tp_free(self);
}

static PyGetSetDef launcher_getset[] = {
    {"__doc__", launcher_doc, NULL, NULL, NULL},
    {NULL},
};

static PyTypeObject LauncherType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "graphtrace._speedups.Launcher",
    .tp_doc = "Launcher(method, kind='launch'|'getitem'): the method with a compiled fast "
              "path (Stream.launch, or a numba dispatcher's __getitem__).",
    .tp_basicsize = sizeof(Launcher),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
                Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(Launcher, vectorcall),
    .tp_call = PyVectorcall_Call,
    .tp_descr_get = launcher_get,
    .tp_getattro = launcher_getattro,
    .tp_getset = launcher_getset,
    .tp_new = launcher_new,
    .tp_traverse = launcher_traverse,
    .tp_dealloc = launcher_dealloc,
};

/* record(tracer, stream, launch, depth): Tracer.again's common case for
 * Tracer.add, with the user's frame ``depth`` frames up from add's; False
 * when the Python path is to record it (or the fast paths are off) */
static PyObject *
record_py(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "record() takes 4 arguments");
        return NULL;
    }
    if (!configured())
        return NULL;
    int depth = (int)PyLong_AsLong(a[3]);
    if (depth == -1 && PyErr_Occurred())
        return NULL;
    if (!ENABLED)
        Py_RETURN_FALSE;
    int r = record(a[0], a[1], a[2], depth);
    return r < 0 ? NULL : PyBool_FromLong(r);
}

/* Whether an interface's descr is that of a plain dtype: absent, or at most one
 * entry, which names no field ([('', '<f8')]), as arrays._is_record tells it;
 * a record ([('a', '<f8')], two entries or more) or anything odd is not */
static int
plain_descr(PyObject *descr)
{
    if (descr == NULL || descr == Py_None)
        return 1;
    if (!PyList_CheckExact(descr) || PyList_GET_SIZE(descr) > 1)
        return 0;
    if (PyList_GET_SIZE(descr) == 0)
        return 1;
    PyObject *entry = PyList_GET_ITEM(descr, 0), *name;
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) < 1)
        return 0;
    name = PyTuple_GET_ITEM(entry, 0);
    return PyUnicode_CheckExact(name) && PyUnicode_GET_LENGTH(name) == 0;
}

/* arrays.py's interface_of key of a device array with interface ``cai`` (a
 * dict): NULL with no error where the Python path is to decide */
static PyObject *
cai_key(PyObject *t, PyObject *cai)
{
    if (!PyDict_CheckExact(cai))
        return NULL;
    PyObject *descr = PyDict_GetItemWithError(cai, s_descr);
    if (descr == NULL && PyErr_Occurred())
        return NULL;
    if (!plain_descr(descr))
        return NULL;
    PyObject *data = PyDict_GetItemWithError(cai, s_data);
    PyObject *shape = data == NULL ? NULL : PyDict_GetItemWithError(cai, s_shape);
    PyObject *typestr = shape == NULL ? NULL : PyDict_GetItemWithError(cai, s_typestr);
    if (typestr == NULL)
        return NULL;   /* a KeyError in Python: its path raises it */
    PyObject *strides = PyDict_GetItemWithError(cai, s_strides);
    if (strides == NULL) {
        if (PyErr_Occurred())
            return NULL;
        strides = Py_None;
    }
    return PyTuple_Pack(5, t, data, shape, strides, typestr);
}

/* A numba device array's ``device_ctypes_pointer`` (its type's is numba's own:
 * arrays.py's _is_numba_array_type), read past numba's property, which is
 * ``self.gpu_data.device_ctypes_pointer`` or, where that raises AttributeError,
 * ``c_void_p(0)``: numba's memory objects hold it as an attribute. The property
 * itself where that fails (the NULL pointer of an empty array). */
static PyObject *
numba_pointer(PyObject *obj)
{
    PyObject *gpu = PyObject_GetAttr(obj, s_gpu_data);
    if (gpu != NULL) {
        PyObject *p = PyObject_GetAttr(gpu, s_device_ctypes_pointer);
        Py_DECREF(gpu);
        if (p != NULL)
            return p;
    }
    if (!PyErr_ExceptionMatches(PyExc_AttributeError))
        return NULL;
    PyErr_Clear();
    return PyObject_GetAttr(obj, s_device_ctypes_pointer);
}

/* The view key of ``obj`` (interface_of's), for the kinds cai, cupy, numba and
 * sim, and in *iface (a new reference, or NULL) the interface it was read from
 * (not for cupy's and numba's, read from attributes); NULL with no error: no key here (the
 * Python path decides) */
static PyObject *
view_key(PyObject *obj, PyObject **iface)
{
    *iface = NULL;
    PyObject *t = (PyObject *)Py_TYPE(obj), *kind = PyDict_GetItemWithError(KINDS, t);
    if (kind == NULL) {
        if (PyErr_Occurred())
            return NULL;
        PyObject *k = PyObject_CallOneArg(KIND, obj);   /* fills the cache */
        if (k == NULL)
            return NULL;
        Py_DECREF(k);
        kind = PyDict_GetItemWithError(KINDS, t);
        if (kind == NULL)
            return NULL;
    }
    PyObject *key = NULL;
    if (kind == s_cai || (PyUnicode_Check(kind) && PyUnicode_Compare(kind, s_cai) == 0)) {
        PyObject *cai = PyObject_GetAttr(obj, s_iface);
        if (cai == NULL) {
            PyErr_Clear();
            return NULL;
        }
        key = cai_key(t, cai);
        *iface = cai;
    }
    else if (kind == s_cupy || kind == s_numba || (PyUnicode_Check(kind) &&
             (PyUnicode_Compare(kind, s_cupy) == 0 || PyUnicode_Compare(kind, s_numba) == 0))) {
        /* the address: cupy's obj.data.ptr, numba's obj.device_ctypes_pointer.value */
        int cupy = kind == s_cupy || PyUnicode_Compare(kind, s_cupy) == 0;
        PyObject *data = cupy ? PyObject_GetAttr(obj, s_data) : numba_pointer(obj);
        PyObject *ptr = data == NULL ? NULL : PyObject_GetAttr(data, cupy ? s_ptr : s_value);
        PyObject *shape = ptr == NULL ? NULL : PyObject_GetAttr(obj, s_shape);
        PyObject *strides = shape == NULL ? NULL : PyObject_GetAttr(obj, s_strides);
        PyObject *dtype = strides == NULL ? NULL : PyObject_GetAttr(obj, s_dtype);
        if (dtype != NULL)
            key = PyTuple_Pack(5, t, ptr, shape, strides, dtype);
        Py_XDECREF(data); Py_XDECREF(ptr); Py_XDECREF(shape); Py_XDECREF(strides);
        Py_XDECREF(dtype);
    }
    else if (kind == s_sim || (PyUnicode_Check(kind) && PyUnicode_Compare(kind, s_sim) == 0)) {
        PyObject *ary = PyObject_GetAttr(obj, s__ary);
        PyObject *cai = ary == NULL ? NULL : PyObject_GetAttr(ary, s_array_iface);
        if (cai != NULL)
            key = cai_key(t, cai);
        Py_XDECREF(ary);
        *iface = cai;
    }
    if (key == NULL) {
        PyErr_Clear();
        Py_CLEAR(*iface);
    }
    return key;
}

/* A new view ``obj`` (interface cai, key not in the tracer's views) made by
 * _buffers.c's view where the tracer has it (Tracer._fast_view) and no array of
 * the simulator is tagged with a device: its entry, Py_None for the Python path,
 * NULL with an error */
static PyObject *
new_view(PyObject *tracer, PyObject *views, PyObject *obj, PyObject *cai, PyObject *key)
{
    PyObject *fast = get(tracer, &TRACER, TR_FAST_VIEW), *index = NULL, *roots = NULL,
             *slots = NULL, *bufs = NULL, *got = NULL;
    if (fast == NULL)
        return NULL;
    if (!PyTuple_CheckExact(fast) || PyTuple_GET_SIZE(fast) != 3 ||
            !PyDict_CheckExact(PyTuple_GET_ITEM(fast, 1)) ||
            PyDict_GET_SIZE(PyTuple_GET_ITEM(fast, 1)) != 0) {
        Py_DECREF(fast);
        Py_RETURN_NONE;
    }
    index = get(tracer, &TRACER, TR_ROOT_INDEX);
    if (index == Py_None)   /* made again since a root was added */
        Py_SETREF(index, PyObject_CallMethodNoArgs(tracer, s__index_m));
    roots = index == NULL ? NULL : get(tracer, &TRACER, TR_ROOTS);
    slots = roots == NULL ? NULL : get(tracer, &TRACER, TR_SLOTS);
    bufs = slots == NULL ? NULL : get(tracer, &TRACER, TR_BUFS);
    if (bufs != NULL && PyTuple_CheckExact(index) && PyTuple_GET_SIZE(index) == 3) {
        PyObject *args[11] = {obj, cai, key, PyTuple_GET_ITEM(index, 0),
                              PyTuple_GET_ITEM(index, 1), PyTuple_GET_ITEM(index, 2), roots,
                              slots, bufs, views, PyTuple_GET_ITEM(fast, 2)};
        got = PyObject_Vectorcall(PyTuple_GET_ITEM(fast, 0), args, 11, NULL);
    }
    else if (bufs != NULL) {
        got = Py_NewRef(Py_None);
    }
    Py_DECREF(fast);
    Py_XDECREF(index); Py_XDECREF(roots); Py_XDECREF(slots); Py_XDECREF(bufs);
    return got;
}

/* The last dtype key_iface met (held, so that the same object is that dtype), its
 * item size and its ``str``: the views of one array share their dtype object, and
 * numpy makes ``str`` anew (and its hash with it) at every read */
static PyObject *LAST_DTYPE, *LAST_TYPESTR;
static long long LAST_ITEMSIZE;

/* dtype's item size (-1 with an error) and, in *typestr, its ``str`` (borrowed) */
static long long
dtype_facts(PyObject *dtype, PyObject **typestr)
{
    if (dtype != LAST_DTYPE) {
        PyObject *item = PyObject_GetAttr(dtype, s_itemsize);
        long long size = item == NULL ? -1 : PyLong_AsLongLong(item);
        Py_XDECREF(item);
        PyObject *str = size < 0 ? NULL : PyObject_GetAttr(dtype, s_str);
        if (str == NULL || !PyUnicode_CheckExact(str) || PyObject_Hash(str) == -1) {
            Py_XDECREF(str);
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_TypeError, "a dtype's str is no str");
            return -1;
        }
        Py_XSETREF(LAST_TYPESTR, str);
        Py_XSETREF(LAST_DTYPE, Py_NewRef(dtype));
        LAST_ITEMSIZE = size;
    }
    *typestr = LAST_TYPESTR;
    return LAST_ITEMSIZE;
}

/* arrays.key_interface(obj, key) for a numba array: its interface made from the
 * key, as numba makes it (strides None where C-contiguous, broadcast axes
 * ignored), reading nothing of numba's; a new reference, NULL with no error
 * where the Python path is to decide (a cupy array's: its own, read there once) */
static PyObject *
key_iface(PyObject *key)
{
    PyObject *kind = PyDict_GetItemWithError(KINDS, PyTuple_GET_ITEM(key, 0));
    if (kind == NULL || !PyUnicode_Check(kind) || PyUnicode_Compare(kind, s_numba) != 0 ||
            PyTuple_GET_SIZE(key) != 5)
        return NULL;
    PyObject *ptr = PyTuple_GET_ITEM(key, 1), *shape = PyTuple_GET_ITEM(key, 2),
             *strides = PyTuple_GET_ITEM(key, 3), *dtype = PyTuple_GET_ITEM(key, 4);
    if (!PyTuple_CheckExact(shape) || !PyTuple_CheckExact(strides) ||
            PyTuple_GET_SIZE(shape) != PyTuple_GET_SIZE(strides))
        return NULL;
    PyObject *typestr;
    long long size = dtype_facts(dtype, &typestr);
    if (size < 0)
        return NULL;
    int contiguous = 1;
    for (Py_ssize_t i = PyTuple_GET_SIZE(shape) - 1; i >= 0 && contiguous; i--) {
        long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, i));
        long long step = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, i));
        if (PyErr_Occurred())
            return NULL;
        if (n > 1 && step != 0) {
            if (step != size)
                contiguous = 0;
            size *= n;
        }
    }
    PyObject *data = ptr == Py_None ?
        Py_BuildValue("(iO)", 0, Py_False) : PyTuple_Pack(2, ptr, Py_False);
    PyObject *version = data == NULL ? NULL : PyLong_FromLong(3);
    PyObject *cai = version == NULL ? NULL : PyDict_New();
    if (cai != NULL && (PyDict_SetItem(cai, s_shape, shape) < 0 ||
            PyDict_SetItem(cai, s_strides, contiguous ? Py_None : strides) < 0 ||
            PyDict_SetItem(cai, s_data, data) < 0 || PyDict_SetItem(cai, s_typestr, typestr) < 0 ||
            PyDict_SetItem(cai, s_version, version) < 0))
        Py_CLEAR(cai);
    Py_XDECREF(data); Py_XDECREF(version);
    return cai;
}

/* Tracer._entry(obj), a view made again found by its key without the Python
 * path: a new reference, Py_None for no array, NULL with an error */
static PyObject *
entry(PyObject *tracer, PyObject *views, PyObject *obj)
{
    PyObject *cai, *key = view_key(obj, &cai);
    if (key != NULL) {
        PyObject *same = PyDict_CheckExact(views) ? PyDict_GetItemWithError(views, key) : NULL;
        if (same != NULL) {
            Py_DECREF(key);
            Py_XDECREF(cai);
            return Py_NewRef(same);
        }
        if (PyErr_Occurred()) {
            PyErr_Clear();   /* unhashable (lists in the interface): as a miss */
        }
        else if (PyDict_CheckExact(views)) {
            if (cai == NULL) {   /* a numba view of a new geometry */
                cai = key_iface(key);
                PyErr_Clear();   /* failing: the Python path decides (and raises) */
            }
            PyObject *got = cai == NULL ? Py_NewRef(Py_None) : new_view(tracer, views, obj, cai, key);
            Py_DECREF(key);
            Py_XDECREF(cai);
            if (got != Py_None)
                return got;
            Py_DECREF(got);
            return PyObject_CallMethodOneArg(tracer, s__entry, obj);
        }
        Py_DECREF(key);
    }
    Py_XDECREF(cai);
    return PyObject_CallMethodOneArg(tracer, s__entry, obj);
}

/* isinstance(obj, OPEN) without looking up obj.__class__ once per type in OPEN
 * (isinstance's way when the type check fails): where obj's class does not
 * override __class__, the type check of each plain class in OPEN says all */
static int
is_open(PyObject *obj)
{
    if (!PyTuple_CheckExact(OPEN) || CLASS == NULL ||
            Py_TYPE(obj)->tp_getattro != PyObject_GenericGetAttr ||
            _PyType_Lookup(Py_TYPE(obj), s___class__) != CLASS)
        return PyObject_IsInstance(obj, OPEN);
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(OPEN); i++) {
        PyObject *t = PyTuple_GET_ITEM(OPEN, i);
        if (!Py_IS_TYPE(t, &PyType_Type)) {   /* a metaclass may check otherwise */
            int r = PyObject_IsInstance(obj, t);
            if (r != 0)
                return r;
        }
        else if (PyType_IsSubtype(Py_TYPE(obj), (PyTypeObject *)t)) {
            return 1;
        }
    }
    return 0;
}

/* Where the last array found by next_entry lies in the cache it was found in
 * (Tracer._bufs, by address only: never dereferenced, compared) */
static void *CURSOR_DICT;
static Py_ssize_t CURSOR;

/* The cache entry of obj, borrowed, when it is the entry after the last one
 * found (arrays used in the order they were named: the common case of arrays
 * reached in a list, and each lookup by id a cache miss in a large dict);
 * NULL, with no error, for a lookup by id. Safe whatever the dict did since:
 * PyDict_Next checks the position and the entry must hold obj itself. */
static PyObject *
next_entry(PyObject *bufs, PyObject *obj)
{
    Py_ssize_t pos = (void *)bufs == CURSOR_DICT ? CURSOR : 0;
    PyObject *key, *entry;
    if (!PyDict_Next(bufs, &pos, &key, &entry) || !PyTuple_CheckExact(entry) ||
            PyTuple_GET_SIZE(entry) != 4 || PyTuple_GET_ITEM(entry, 0) != obj)
        return NULL;
    CURSOR_DICT = bufs;
    CURSOR = pos;
    return entry;
}

/* After a lookup by id found ``entry``: next_entry goes on from it where it lies
 * at its slot's position (every slot cached so far: the usual case) */
static void
follow(PyObject *bufs, PyObject *entry)
{
    Py_ssize_t pos = PyTuple_CheckExact(entry) && PyTuple_GET_SIZE(entry) == 4 &&
                     PyLong_CheckExact(PyTuple_GET_ITEM(entry, 2)) ?
                     PyLong_AsSsize_t(PyTuple_GET_ITEM(entry, 2)) >> 2 : -1;
    PyObject *key, *value;
    if (pos < 0) {
        PyErr_Clear();
        return;
    }
    if (PyDict_Next(bufs, &pos, &key, &value) && value == entry) {
        CURSOR_DICT = bufs;
        CURSOR = pos;
    }
}

/* arguments(tracer, args, modes): Tracer._arguments for launches whose
 * arguments are arrays seen before, views made again, numbers and strings;
 * None where the Python path is to take the launch (containers, wrappers,
 * other objects), before any of its work. */
static PyObject *
arguments(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "arguments() takes 3 arguments");
        return NULL;
    }
    if (!ENABLED || PLAIN == NULL || !PyTuple_Check(a[1]))
        Py_RETURN_NONE;
    PyObject *tracer = a[0], *args = a[1], *modes = PySequence_Fast(a[2], "modes");
    if (modes == NULL)
        return NULL;
    Py_ssize_t n = Py_MIN(PyTuple_GET_SIZE(args), PySequence_Fast_GET_SIZE(modes));
    PyObject *result = NULL, *bufs = NULL, *views = NULL, *rec = NULL, *codes = NULL,
             *places = PyLong_FromLong(0);
    int numbers = 0, seen = 1;
    bufs = places == NULL ? NULL : get(tracer, &TRACER, TR_BUFS);
    views = bufs == NULL ? NULL : get(tracer, &TRACER, TR_VIEWS);
    rec = views == NULL ? NULL : PyTuple_New(n);
    codes = rec == NULL ? NULL : PyList_New(0);
    if (codes == NULL || !PyDict_CheckExact(bufs))
        goto done;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *arg = PyTuple_GET_ITEM(args, i), *m = PySequence_Fast_GET_ITEM(modes, i);
        PyObject *hit = next_entry(bufs, arg);   /* (obj, Buffer, slot, bit) */
        if (hit == NULL) {
            PyObject *id = cache_key(arg);
            if (id == NULL)
                goto done;
            hit = PyDict_GetItemWithError(bufs, id);
            Py_DECREF(id);
            if (hit != NULL)
                follow(bufs, hit);
        }
        /* (Buffer, slot << 2, device bit) of an array from found[at] on: a cache
         * entry (at 1) or a view made again (at 0) */
        PyObject *found = NULL;
        Py_ssize_t at = 0;
        if (hit != NULL) {
            if (!PyTuple_Check(hit) || PyTuple_GET_SIZE(hit) != 4) {
                Py_SETREF(result, Py_NewRef(Py_None));
                goto done;
            }
            found = Py_NewRef(hit);
            at = 1;
        }
        else if (PyErr_Occurred()) {
            goto done;
        }
        else {
            PyObject *plain = PyDict_GetItemWithError(PLAIN, (PyObject *)Py_TYPE(arg));
            if (plain != NULL) {   /* a number, a string, None, a dynamic Scalar */
                PyTuple_SET_ITEM(rec, i, Py_NewRef(arg));
                long p = PyLong_AsLong(plain);
                if (p == -1 && PyErr_Occurred())
                    goto done;
                if (p && !numbers) {   /* it may be an address */
                    int big = p == 2 ? 1 : PyObject_RichCompareBool(arg, LOWEST, Py_GE);
                    if (big < 0)
                        goto done;
                    numbers = big;
                }
                continue;
            }
            if (PyErr_Occurred())
                goto done;
            int open = is_open(arg);
            if (open != 0) {
                if (open > 0)
                    result = Py_NewRef(Py_None);
                goto done;
            }
            found = entry(tracer, views, arg);
            if (found == Py_None) {   /* no array: the Python path looks inside */
                Py_DECREF(found);
                result = Py_NewRef(Py_None);
                goto done;
            }
            seen = 0;
        }
        if (found == NULL)
            goto done;
        if (!PyTuple_Check(found) || PyTuple_GET_SIZE(found) != 3 + at) {
            Py_DECREF(found);
            result = Py_NewRef(Py_None);
            goto done;
        }
        PyObject *code = PyNumber_Or(PyTuple_GET_ITEM(found, at + 1), m);
        PyObject *more = code == NULL ? NULL :
                         PyNumber_Or(places, PyTuple_GET_ITEM(found, at + 2));
        if (more == NULL || PyList_Append(codes, code) < 0) {
            Py_XDECREF(code);
            Py_XDECREF(more);
            Py_DECREF(found);
            goto done;
        }
        Py_DECREF(code);
        Py_SETREF(places, more);
        PyTuple_SET_ITEM(rec, i, Py_NewRef(PyTuple_GET_ITEM(found, at)));
        Py_DECREF(found);
    }
    result = PyTuple_Pack(5, rec, codes, places, numbers ? Py_True : Py_False,
                          seen ? Py_True : Py_False);
done:
    Py_DECREF(modes);
    Py_XDECREF(bufs); Py_XDECREF(views); Py_XDECREF(rec); Py_XDECREF(codes);
    Py_XDECREF(places);
    return result;
}

/* Each of the module's globals ``slots`` now holds the matching value; None */
static PyObject *
keep(PyObject **const *slots, PyObject *const *values, int n)
{
    for (int i = 0; i < n; i++)
        Py_XSETREF(*slots[i], Py_NewRef(values[i]));
    Py_RETURN_NONE;
}

/* configure(state, one_device, internal, is_internal): what again() reads */
static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *state, *one, *internal, *is_internal;
    if (!PyArg_ParseTuple(args, "OO!O!O:configure", &state, &PyDict_Type, &one,
                          &PyDict_Type, &internal, &is_internal))
        return NULL;
    PyObject *getframe = PySys_GetObject("_getframe");   /* borrowed */
    if (getframe == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "sys._getframe is missing");
        return NULL;
    }
    PyObject **const slots[] = {&STATE, &ONE_DEVICE, &INTERNAL, &IS_INTERNAL, &GETFRAME};
    PyObject *const values[] = {state, one, internal, is_internal, getframe};
    return keep(slots, values, 5);
}

/* active(tracer): the tracer now made active in this thread (set_tracer), or None */
static PyObject *
active(PyObject *module, PyObject *tracer)
{
    if (tracer == Py_None) {
        Py_CLEAR(ACTIVE);
        ACTIVE_THREAD = NULL;
    }
    else {
        Py_XSETREF(ACTIVE, Py_NewRef(tracer));
        ACTIVE_THREAD = PyThreadState_Get();
    }
    Py_RETURN_NONE;
}

/* configure_launch(Stream, Scope, Recording, Tracer, record, launches, KERNEL,
 * plain, lowest_address, open, kinds, kind): the classes whose slots are read
 * at their offsets, what a launch from compiled code calls when neither the
 * memo nor record_new takes it (launch_plain), what record_new reads, and what
 * arguments() reads */
static PyObject *
configure_launch(PyObject *module, PyObject *args)
{
    PyObject *stream, *scope, *recording, *tracer, *rec, *launches, *kernel_op, *plain, *lowest,
             *open, *kinds, *kind;
    if (!PyArg_ParseTuple(args, "OOOOOO!OO!OO!O!O:configure_launch", &stream, &scope, &recording,
                          &tracer, &rec, &PyDict_Type, &launches, &kernel_op, &PyDict_Type,
                          &plain, &lowest, &PyTuple_Type, &open, &PyDict_Type, &kinds, &kind))
        return NULL;
    if (learn(&STREAM, stream) < 0 || learn(&SCOPE, scope) < 0 ||
            learn(&RECORDING, recording) < 0 || learn(&TRACER, tracer) < 0)
        return NULL;
    PyObject **const slots[] = {&RECORD, &LAUNCHES, &KERNEL_OP, &PLAIN, &LOWEST, &OPEN, &KINDS,
                                &KIND};
    PyObject *const values[] = {rec, launches, kernel_op, plain, lowest, open, kinds, kind};
    return keep(slots, values, 8);
}

/* configure_numba(ProxyStream): proxy streams' base class */
static PyObject *
configure_numba(PyObject *module, PyObject *proxy)
{
    if (!PyType_Check(proxy)) {
        PyErr_SetString(PyExc_TypeError, "configure_numba(): expected a class");
        return NULL;
    }
    Py_XSETREF(PROXY_STREAM, (PyTypeObject *)Py_NewRef(proxy));
    Py_RETURN_NONE;
}

/* enable(on): whether Launchers take their fast path; whether they did */
static PyObject *
enable(PyObject *module, PyObject *on)
{
    int was = ENABLED, t = PyObject_IsTrue(on);
    if (t < 0)
        return NULL;
    ENABLED = t;
    return PyBool_FromLong(was);
}

static PyMethodDef methods[] = {
    {"again", (PyCFunction)(void (*)(void))again, METH_FASTCALL,
     "again(stream, kernel, grid, block, shared_mem, args, depth=3): True if the "
     "launch was recorded from the tracer's memo, else the key to remember it by "
     "(None: the kernel is no longer remembered)."},
    {"arguments", (PyCFunction)(void (*)(void))arguments, METH_FASTCALL,
     "arguments(tracer, args, modes): Tracer._arguments for arrays seen before, views "
     "made again, numbers and strings; None: the Python path is to take the launch."},
    {"record", (PyCFunction)(void (*)(void))record_py, METH_FASTCALL,
     "record(tracer, stream, launch, depth): Tracer.again's common case for Tracer.add "
     "(the user's frame depth frames up from the caller's); False: the Python path "
     "is to record it."},
    {"configure", configure, METH_VARARGS,
     "configure(state, one_device, internal, is_internal): what again() reads."},
    {"configure_numba", configure_numba, METH_O,
     "configure_numba(ProxyStream): proxy streams' base class, for kernel[grid, block, s]."},
    {"enable", enable, METH_O,
     "enable(on): whether Launchers take their compiled fast path; returns whether "
     "they did."},
    {"active", active, METH_O,
     "active(tracer): the tracer made active in this thread (set_tracer), or None "
     "when it ends; again() then need not read the thread-local to know."},
    {"configure_launch", configure_launch, METH_VARARGS,
     "configure_launch(Stream, Scope, Recording, Tracer, record, launches, KERNEL, plain, "
     "lowest_address, open, kinds, kind): the classes read at their slots' offsets, what "
     "a compiled launch calls when it does not record it itself, kernel.py's launch kinds "
     "and op, "
     "and what arguments() reads."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "graphtrace._speedups",
    "The tracing hot path, compiled (optional; ops/kernel.py and trace.py hold the "
    "reference).",
    -1, methods, NULL, NULL, NULL, NULL,
};

#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL

PyMODINIT_FUNC
PyInit__speedups(void)
{
    INTERN(s_tracer, "tracer");
    INTERN(s__tracer, "_tracer");
    INTERN(s_memo_off, "memo_off");
    INTERN(s_memo, "memo");
    INTERN(s__device, "_device");
    INTERN(s__scope, "_scope");
    INTERN(s__top, "_top");
    INTERN(s_closed, "closed");
    INTERN(s_open_regions, "open_regions");
    INTERN(s_conditional, "conditional");
    INTERN(s_online, "online");
    INTERN(s__count, "_count");
    INTERN(s_rec, "rec");
    INTERN(s_entries, "entries");
    INTERN(s__index, "_index");
    INTERN(s_codes, "codes");
    INTERN(s_ends, "ends");
    INTERN(s_opaque, "opaque");
    INTERN(s_again, "again");
    INTERN(s__bufs, "_bufs");
    INTERN(s__views, "_views");
    INTERN(s___class__, "__class__");
    INTERN(s__roots, "_roots");
    INTERN(s__slots, "_slots");
    INTERN(s__root_index, "_root_index");
    INTERN(s__fast_view, "_fast_view");
    INTERN(s__memo_size, "_memo_size");
    INTERN(s__remember, "_remember");
    INTERN(s__index_m, "_index");
    CLASS = Py_XNewRef(_PyType_Lookup(&PyBaseObject_Type, s___class__));
    INTERN(s__entry, "_entry");
    INTERN(s_cai, "cai");
    INTERN(s_cupy, "cupy");
    INTERN(s_numba, "numba");
    INTERN(s_sim, "sim");
    INTERN(s_iface, "__cuda_array_interface__");
    INTERN(s_descr, "descr");
    INTERN(s_data, "data");
    INTERN(s_shape, "shape");
    INTERN(s_strides, "strides");
    INTERN(s_typestr, "typestr");
    INTERN(s_ptr, "ptr");
    INTERN(s_device_ctypes_pointer, "device_ctypes_pointer");
    INTERN(s_value, "value");
    INTERN(s_gpu_data, "gpu_data");
    INTERN(s_valid_types, "valid_types");
    INTERN(s_raw_pointers, "raw_pointers");
    INTERN(s_step, "step");
    INTERN(s_dtype, "dtype");
    INTERN(s__ary, "_ary");
    INTERN(s_array_iface, "__array_interface__");
    INTERN(s_add, "add");
    INTERN(s_itemsize, "itemsize");
    INTERN(s_str, "str");
    INTERN(s_version, "version");
    if (PyType_Ready(&LauncherType) < 0 || PyType_Ready(&ProxyLaunchType) < 0)
        return NULL;
    if ((ZERO = PyLong_FromLong(0)) == NULL || (ONE = PyLong_FromLong(1)) == NULL)
        return NULL;
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL)
        return NULL;
    if (PyModule_AddObjectRef(m, "Launcher", (PyObject *)&LauncherType) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
