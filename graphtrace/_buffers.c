/* New arrays taken in by a trace, compiled: the roots it names (the arrays a
 * function reaches by name, Tracer.add_arguments), the walk that finds them
 * in containers (values._collect) and the regions of the slots it added since
 * (deps.Regions.update: one lookup per slot, or the hulls of a large batch
 * read for numpy to sort).
 *
 * Optional, like _speedups.c. Each function takes the common case and stops
 * at the first item it does not take, returning that item's index; the
 * Python path (the reference) takes that one and calls again for the rest,
 * so the slots and regions come out in the same order either way. Taken
 * here: a device array whose type arrays.py knows as "cai", "cupy", "numba" or "sim"
 * (or "other", an object that has the interface itself), whose interface is
 * a dict of a C-contiguous layout (strides absent or None), an int address
 * and a dtype arrays.py has made from its typestr before, on a host of one
 * device; and views of one run of bytes. Anything odd, an error included, is
 * left to the Python path, which raises it.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#ifndef Py_T_OBJECT_EX
#include <structmember.h>
#define Py_T_OBJECT_EX T_OBJECT_EX
#endif

/* buffers.Buffer's slots, by name; the class is NULL until configure() found
 * every one a plain object slot */
enum { F_PTR, F_SHAPE, F_STRIDES, F_DTYPE, F_DEVICE, F_PINNED, F_READONLY, F_OBJ, F_LO, F_HI,
       F_RUN, F_STEP, F_LABEL, F_BASE, F_STARTS, N_FIELDS };
/* The key of an object in Tracer._bufs: its address over 16 (as Tracer._bufs is keyed in trace.py).
 * Every object takes 16 bytes at least, so no two living ones share it; arrays
 * made one after another get keys close together, and their lookups in a large
 * table touch neighbouring memory instead of one cache line each. */
static inline PyObject *
cache_key(PyObject *obj)
{
    return PyLong_FromSize_t((size_t)obj >> 4);
}

static const char *const FIELD[N_FIELDS] = {
    "ptr", "shape", "strides", "dtype", "device", "pinned", "readonly", "obj", "lo", "hi",
    "run", "step", "_label", "base", "_starts"};
static PyTypeObject *BUFFER;
static Py_ssize_t OFFSET[N_FIELDS];

/* configure(): arrays.py's _dtypes (typestr -> dtype) and _kinds (type -> kind) */
static PyObject *DTYPES, *KINDS;

static PyObject *ZERO, *TOP, *LAST;   /* 0, 2**64, 2**64 - 1 */
static PyObject *ONE_BIT;              /* 2: placement.device_bit of device 0 */
static PyObject *ONE_STRIDE;           /* item size -> (item size,) */
static PyObject *ARRAY_KINDS[6];     /* "cai", "cupy", "sim", "own", "host", "numba" */
static PyObject *s_iface, *s_array_iface, *s__ary, *s_descr, *s_data, *s_shape, *s_strides,
    *s_typestr, *s_itemsize;

#define FIELD_AT(b, i) (*(PyObject **)((char *)(b) + OFFSET[i]))

/* b's field i set to v (a reference stolen) */
static inline void
put(PyObject *b, int i, PyObject *v)
{
    Py_XSETREF(FIELD_AT(b, i), v);
}

/* The interface of obj as arrays.as_buffer reads it for the kinds taken here:
 * a new reference, or NULL (an error possibly set) where the Python path is to */
static PyObject *
interface(PyObject *obj)
{
    PyObject *kind = PyDict_GetItemWithError(KINDS, (PyObject *)Py_TYPE(obj));
    if (kind == NULL || !PyUnicode_Check(kind))
        return NULL;
    if (kind == ARRAY_KINDS[0] || kind == ARRAY_KINDS[1] ||   /* interned: at once */
            kind == ARRAY_KINDS[5] ||
            PyUnicode_CompareWithASCIIString(kind, "cai") == 0 ||
            PyUnicode_CompareWithASCIIString(kind, "cupy") == 0 ||
            PyUnicode_CompareWithASCIIString(kind, "numba") == 0 ||
            PyUnicode_CompareWithASCIIString(kind, "other") == 0)   /* as_buffer asks it */
        return PyObject_GetAttr(obj, s_iface);
    if (PyUnicode_CompareWithASCIIString(kind, "sim") != 0)
        return NULL;
    PyObject *ary = PyObject_GetAttr(obj, s__ary);
    PyObject *cai = ary == NULL ? NULL : PyObject_GetAttr(ary, s_array_iface);
    Py_XDECREF(ary);
    return cai;
}

/* item ``key`` of the interface dict, borrowed; NULL where it is absent (or an error) */
static inline PyObject *
field(PyObject *cai, PyObject *key)
{
    return PyDict_GetItemWithError(cai, key);
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

/* A new Buffer of obj, its interface cai, on device, as arrays._from_interface
 * makes it (strides laid out C-contiguous); NULL where the Python path is to */
static PyObject *
plain_buffer(PyObject *obj, PyObject *cai, PyObject *device)
{
    if (!PyDict_CheckExact(cai))
        return NULL;
    PyObject *descr = field(cai, s_descr), *strides = field(cai, s_strides);
    if (!plain_descr(descr) || (strides != NULL && strides != Py_None))
        return NULL;
    PyObject *data = field(cai, s_data), *shape = field(cai, s_shape);
    PyObject *typestr = field(cai, s_typestr);
    if (data == NULL || shape == NULL || typestr == NULL || !PyTuple_CheckExact(data) ||
            PyTuple_GET_SIZE(data) != 2 || !PyLong_CheckExact(PyTuple_GET_ITEM(data, 0)) ||
            !PyTuple_CheckExact(shape) || !PyUnicode_CheckExact(typestr))
        return NULL;
    /* a void ("|V16"): a record whose fields a numba array's interface leaves out */
    if (PyUnicode_GET_LENGTH(typestr) > 1 && PyUnicode_READ_CHAR(typestr, 1) == 'V')
        return NULL;
    PyObject *dtype = PyDict_GetItemWithError(DTYPES, typestr);
    if (dtype == NULL)
        return NULL;
    Py_ssize_t nd = PyTuple_GET_SIZE(shape);
    for (Py_ssize_t d = 0; d < nd; d++) {
        PyObject *n = PyTuple_GET_ITEM(shape, d);
        if (!PyLong_CheckExact(n) || PyObject_RichCompareBool(n, ZERO, Py_GE) != 1)
            return NULL;
    }
    /* a bool or an int (no code of the object's own runs while the borrowed
     * items are in use); anything else for the Python path */
    PyObject *flag = PyTuple_GET_ITEM(data, 1);
    if (!PyBool_Check(flag) && !PyLong_CheckExact(flag))
        return NULL;
    int readonly = PyObject_IsTrue(flag);
    PyObject *acc = readonly < 0 ? NULL : PyObject_GetAttr(dtype, s_itemsize);
    /* a 1-D view's strides: one tuple per item size, shared (tuples do not change) */
    PyObject *steps = acc == NULL || nd != 1 ? NULL :
                      Py_XNewRef(PyDict_GetItemWithError(ONE_STRIDE, acc));
    if (steps == NULL && acc != NULL && nd == 1 && !PyErr_Occurred()) {
        steps = PyTuple_Pack(1, acc);
        if (steps != NULL && PyDict_SetItem(ONE_STRIDE, acc, steps) < 0)
            Py_CLEAR(steps);
    }
    if (steps != NULL) {
        Py_SETREF(acc, PyNumber_Multiply(acc, PyTuple_GET_ITEM(shape, 0)));
    }
    else if (acc != NULL && nd != 1 && (steps = PyTuple_New(nd)) != NULL) {
        for (Py_ssize_t d = nd - 1; d >= 0 && acc != NULL; d--) {   /* C order */
            PyTuple_SET_ITEM(steps, d, Py_NewRef(acc));
            Py_SETREF(acc, PyNumber_Multiply(acc, PyTuple_GET_ITEM(shape, d)));
        }
    }
    if (steps == NULL || acc == NULL) {
        Py_XDECREF(acc);
        Py_XDECREF(steps);
        return NULL;
    }
    PyObject *ptr = PyTuple_GET_ITEM(data, 0), *hi = PyNumber_Add(ptr, acc);
    PyObject *b = hi == NULL ? NULL : BUFFER->tp_alloc(BUFFER, 0);
    if (b == NULL) {
        Py_DECREF(acc);
        Py_DECREF(steps);
        Py_XDECREF(hi);
        return NULL;
    }
    put(b, F_PTR, Py_NewRef(ptr));
    put(b, F_SHAPE, Py_NewRef(shape));
    put(b, F_STRIDES, steps);
    put(b, F_DTYPE, Py_NewRef(dtype));
    put(b, F_DEVICE, Py_NewRef(device));
    put(b, F_PINNED, Py_NewRef(Py_False));
    put(b, F_READONLY, PyBool_FromLong(readonly));
    put(b, F_OBJ, Py_NewRef(obj));
    put(b, F_LO, Py_NewRef(ptr));
    put(b, F_HI, hi);
    put(b, F_RUN, acc);
    put(b, F_STEP, Py_NewRef(ZERO));
    put(b, F_LABEL, Py_NewRef(Py_None));
    put(b, F_BASE, Py_NewRef(b));
    put(b, F_STARTS, Py_NewRef(Py_None));
    return b;
}

/* Give buf (of obj, labelled label) the next slot and name it a root; 0, -1 with an
 * error (the slot map, Tracer._slot_of, is made when asked for) */
static int
take_root(PyObject *obj, PyObject *id, PyObject *buf, PyObject *label, PyObject *bit,
          PyObject *slots, PyObject *bufs, PyObject *roots)
{
    put(buf, F_LABEL, Py_NewRef(label));
    PyObject *code = PyLong_FromSsize_t(PyList_GET_SIZE(slots) << 2);
    PyObject *entry = code ? PyTuple_Pack(4, obj, buf, code, bit) : NULL;
    int r = entry == NULL || PyList_Append(slots, buf) < 0 ||
            PyDict_SetItem(bufs, id, entry) < 0 || PyList_Append(roots, buf) < 0 ? -1 : 0;
    Py_XDECREF(code);
    Py_XDECREF(entry);
    return r;
}

/* roots(items, start, device, bit, slots, bufs, roots): Tracer.add_arguments
 * from items[start] on ((label, array) pairs; an array already there keeps its
 * first name); the index of the first item not taken (len(items): every one) */
static PyObject *
roots(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != 7 || !PyList_CheckExact(a[0]) || !PyList_CheckExact(a[4]) ||
            !PyDict_CheckExact(a[5]) || !PyList_CheckExact(a[6])) {
        PyErr_SetString(PyExc_TypeError,
                        "roots(items: list, start, device, bit, slots: list, bufs: dict, "
                        "roots: list)");
        return NULL;
    }
    PyObject *items = a[0], *device = a[2], *bit = a[3];
    Py_ssize_t i = PyLong_AsSsize_t(a[1]);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    if (BUFFER == NULL || device == Py_None || i < 0)
        return PyLong_FromSsize_t(i);
    for (; i < PyList_GET_SIZE(items); i++) {
        /* held: the interface's getter is code of the array's own */
        PyObject *item = Py_NewRef(PyList_GET_ITEM(items, i));
        if (!PyTuple_CheckExact(item) || PyTuple_GET_SIZE(item) != 2) {
            Py_DECREF(item);
            break;
        }
        PyObject *label = PyTuple_GET_ITEM(item, 0), *obj = PyTuple_GET_ITEM(item, 1);
        PyObject *id = cache_key(obj);
        int seen = id == NULL ? -1 : PyDict_Contains(a[5], id);
        if (seen != 0) {
            Py_XDECREF(id);
            Py_DECREF(item);
            if (seen < 0)
                return NULL;
            continue;   /* the same array under a second name: the first one stays */
        }
        PyObject *cai = interface(obj);
        PyObject *buf = cai == NULL ? NULL : plain_buffer(obj, cai, device);
        Py_XDECREF(cai);
        int r = buf == NULL ? 1 : take_root(obj, id, buf, label, bit, a[4], a[5], a[6]);
        Py_XDECREF(buf);
        Py_DECREF(id);
        Py_DECREF(item);
        if (r > 0) {
            PyErr_Clear();   /* the Python path makes it, or raises */
            break;
        }
        if (r < 0)
            return NULL;
    }
    return PyLong_FromSsize_t(i);
}

/* Whether v (an exact int) fits in 64 bits unsigned, then in *out; no error left.
 * Addresses and sizes are below 2**63: they convert without a byte array. */
static int
as_u64(PyObject *v, unsigned long long *out)
{
    int over;
    long long s = PyLong_AsLongLongAndOverflow(v, &over);
    if (over == 0 && s >= 0) {
        *out = (unsigned long long)s;
        return 1;
    }
    if (s == -1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    *out = PyLong_AsUnsignedLongLong(v);
    if (*out == (unsigned long long)-1 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    return 1;
}

/* Slot b's byte hull [*l, *h) where b is a Buffer of one run (or empty) whose
 * hull ends below 2**64: 1; else 0 (the Python path keys it), no error set */
static int
one_run(PyObject *b, unsigned long long *l, unsigned long long *h)
{
    if (Py_TYPE(b) != BUFFER)
        return 0;
    PyObject *lo = FIELD_AT(b, F_LO), *hi = FIELD_AT(b, F_HI);
    PyObject *run = FIELD_AT(b, F_RUN), *step = FIELD_AT(b, F_STEP);
    if (lo == NULL || hi == NULL || run == NULL || step == NULL || !PyLong_CheckExact(lo) ||
            !PyLong_CheckExact(hi) || !PyLong_CheckExact(run) || !PyLong_CheckExact(step))
        return 0;
    unsigned long long len, st;
    if (!as_u64(lo, l) || !as_u64(hi, h) || !as_u64(run, &len) || !as_u64(step, &st) ||
            *h < *l)
        return 0;   /* a hull to 2**64 or past */
    return *h == *l || (st == 0 && *h - *l == len);   /* empty, or one run */
}

/* Index of the first int of the sorted list ``los`` above v (bisect_right); -2
 * where an item is no int below 2**64 (the Python path compares) */
static Py_ssize_t
bisect_u64(PyObject *los, unsigned long long v)
{
    Py_ssize_t a = 0, b = PyList_GET_SIZE(los);
    while (a < b) {
        Py_ssize_t mid = a + (b - a) / 2;
        unsigned long long x;
        if (!as_u64(PyList_GET_ITEM(los, mid), &x))
            return -2;
        if (v < x)
            b = mid;
        else
            a = mid + 1;
    }
    return a;
}

/* The one root of Tracer._root's search whose hull holds [l, h) when it is a
 * root of one run (then it holds every byte); NULL, no error, where the Python
 * path is to decide: no root, several, one of several runs, or odd items */
static PyObject *
one_root(unsigned long long l, unsigned long long h, PyObject *los, PyObject *ks,
         PyObject *tops, PyObject *roots)
{
    Py_ssize_t j = bisect_u64(los, l) - 1;
    if (j < -1 || PyList_GET_SIZE(ks) != PyList_GET_SIZE(los) ||
            PyList_GET_SIZE(tops) != PyList_GET_SIZE(los))
        return NULL;
    PyObject *found = NULL;
    for (; j >= 0; j--) {   /* no earlier root reaches past the view */
        unsigned long long top, rh;
        Py_ssize_t k;
        if (!as_u64(PyList_GET_ITEM(tops, j), &top))
            return NULL;
        if (top < h)
            break;
        PyObject *kv = PyList_GET_ITEM(ks, j);
        k = PyLong_CheckExact(kv) ? PyLong_AsSsize_t(kv) : -1;
        if (k < 0 || k >= PyList_GET_SIZE(roots)) {
            PyErr_Clear();
            return NULL;
        }
        PyObject *r = PyList_GET_ITEM(roots, k);
        if (Py_TYPE(r) != BUFFER || FIELD_AT(r, F_HI) == NULL ||
                !as_u64(FIELD_AT(r, F_HI), &rh))
            return NULL;
        if (rh >= h) {
            if (found != NULL)
                return NULL;   /* several: the first named, by the Python path */
            found = r;
        }
    }
    unsigned long long rl, rh;
    return found != NULL && one_run(found, &rl, &rh) ? found : NULL;
}

/* view(obj, cai, key, los, ks, tops, roots, slots, bufs, views, virtual):
 * Tracer._entry of a new view on a host of one device (device 0), for the common case: a
 * C-contiguous interface (plain_buffer) inside one root of one run, below the
 * temporaries' addresses (virtual). Registers it as _register does, keeps it
 * under key in views (unless key is None) and returns (Buffer, slot << 2, bit);
 * None, with nothing changed, where the Python path is to take it. */
static PyObject *
view(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != 11 || !PyList_CheckExact(a[3]) || !PyList_CheckExact(a[4]) ||
            !PyList_CheckExact(a[5]) || !PyList_CheckExact(a[6]) ||
            !PyList_CheckExact(a[7]) || !PyDict_CheckExact(a[8]) ||
            !PyDict_CheckExact(a[9])) {
        PyErr_SetString(PyExc_TypeError, "view(obj, cai, key, los: list, ks: list, tops: "
                        "list, roots: list, slots: list, bufs: dict, views: dict, virtual)");
        return NULL;
    }
    PyObject *obj = a[0], *key = a[2], *bit = ONE_BIT, *slots = a[7];
    unsigned long long l, h, virt;
    if (BUFFER == NULL || !as_u64(a[10], &virt))
        Py_RETURN_NONE;
    PyObject *buf = plain_buffer(obj, a[1], ZERO);
    if (buf == NULL) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *root;
    if (!as_u64(FIELD_AT(buf, F_LO), &l) || !as_u64(FIELD_AT(buf, F_HI), &h) || l >= virt ||
            (root = one_root(l, h, a[3], a[4], a[5], a[6])) == NULL) {
        Py_DECREF(buf);
        if (PyErr_Occurred())
            return NULL;
        Py_RETURN_NONE;
    }
    put(buf, F_BASE, Py_NewRef(root));   /* it moves with that one, named after it */
    PyObject *code = PyLong_FromSsize_t(PyList_GET_SIZE(slots) << 2);
    PyObject *id = code == NULL ? NULL : cache_key(obj);
    PyObject *held = id == NULL ? NULL : PyTuple_Pack(4, obj, buf, code, bit);
    PyObject *entry = held == NULL ? NULL : PyTuple_Pack(3, buf, code, bit);
    int fail = entry == NULL || PyList_Append(slots, buf) < 0 ||
               PyDict_SetItem(a[8], id, held) < 0 ||
               (key != Py_None && PyDict_SetItem(a[9], key, entry) < 0);
    Py_DECREF(buf);
    Py_XDECREF(code);
    Py_XDECREF(id);
    Py_XDECREF(held);
    if (fail) {
        Py_XDECREF(entry);
        return NULL;
    }
    return entry;
}

/* The numpy columns regions() writes: Regions._cols, with room made by the caller */
typedef struct {
    Py_buffer of_slot, lo, hi, one;
} Columns;

/* Take in a Buffer (slot i) of one run whose region is [l, h); 0, -1 with an error */
static int
take_run(PyObject *b, PyObject *lo, PyObject *hi, unsigned long long l, unsigned long long h,
         Py_ssize_t i, PyObject *const *a, Columns *c)
{
    PyObject *keys = a[2], *los = a[3], *his = a[4], *bufs = a[5];
    PyObject *key = PyTuple_Pack(2, lo, hi);
    if (key == NULL)
        return -1;
    PyObject *r = PyDict_GetItemWithError(keys, key);   /* borrowed */
    if (r != NULL || PyErr_Occurred()) {
        Py_DECREF(key);
        Py_ssize_t at = r == NULL ? -1 : PyLong_AsSsize_t(r);
        if (at < 0)
            return -1;
        ((long long *)c->of_slot.buf)[i] = at;
        return 0;
    }
    Py_ssize_t at = PyList_GET_SIZE(los);
    PyObject *region = PyLong_FromSsize_t(at);
    int fail = region == NULL || PyDict_SetItem(keys, key, region) < 0 ||
               PyList_Append(los, lo) < 0 || PyList_Append(his, hi) < 0 ||
               PyList_Append(bufs, b) < 0;
    Py_DECREF(key);
    Py_XDECREF(region);
    if (fail)
        return -1;
    ((long long *)c->of_slot.buf)[i] = at;
    ((unsigned long long *)c->lo.buf)[at] = l;
    ((unsigned long long *)c->hi.buf)[at] = h;
    ((unsigned char *)c->one.buf)[at] = 1;
    return 0;
}

/* Each column, writable, of its item size and with room for ``need`` items; 0, -1 */
static int
columns(PyObject *const *a, Py_ssize_t slots, Py_ssize_t regions, Columns *c)
{
    Py_buffer *views[4] = {&c->of_slot, &c->lo, &c->hi, &c->one};
    const Py_ssize_t size[4] = {8, 8, 8, 1}, need[4] = {slots, regions, regions, regions};
    for (int k = 0; k < 4; k++) {
        if (PyObject_GetBuffer(a[6 + k], views[k], PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
            while (--k >= 0)
                PyBuffer_Release(views[k]);
            return -1;
        }
        if (views[k]->itemsize != size[k] || views[k]->len / size[k] < need[k]) {
            for (; k >= 0; k--)
                PyBuffer_Release(views[k]);
            PyErr_SetString(PyExc_ValueError, "regions(): a column is too short or of "
                            "another item size");
            return -1;
        }
    }
    return 0;
}

/* regions(slots, start, keys, lo, hi, bufs, of_slot, col_lo, col_hi, col_one):
 * Regions.update's loop from slots[start] on, for empty views and views of one
 * run whose hull ends below 2**64, writing the numpy columns (room made for
 * every slot and as many new regions); the index of the first slot not taken */
static PyObject *
regions(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != 10 || !PyList_CheckExact(a[0]) || !PyDict_CheckExact(a[2]) ||
            !PyList_CheckExact(a[3]) || !PyList_CheckExact(a[4]) || !PyList_CheckExact(a[5])) {
        PyErr_SetString(PyExc_TypeError, "regions(slots: list, start, keys: dict, lo: list, "
                        "hi: list, bufs: list, of_slot, col_lo, col_hi, col_one)");
        return NULL;
    }
    Py_ssize_t i = PyLong_AsSsize_t(a[1]);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(a[0]);
    Columns c;
    if (i < 0 || i > n || columns(a, n, PyList_GET_SIZE(a[3]) + n - i, &c) < 0) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "regions(): start out of range");
        return NULL;
    }
    int fail = 0;
    for (; BUFFER != NULL && i < n; i++) {   /* no code of the user's runs here */
        PyObject *b = PyList_GET_ITEM(a[0], i);
        unsigned long long l, h;
        if (!one_run(b, &l, &h))
            break;   /* several runs: the Python path keys it by its layout */
        if (h == l) {   /* an empty view: no region */
            ((long long *)c.of_slot.buf)[i] = -1;
            continue;
        }
        if (take_run(b, FIELD_AT(b, F_LO), FIELD_AT(b, F_HI), l, h, i, a, &c) < 0) {
            fail = 1;
            break;
        }
    }
    PyBuffer_Release(&c.of_slot);
    PyBuffer_Release(&c.lo);
    PyBuffer_Release(&c.hi);
    PyBuffer_Release(&c.one);
    return fail ? NULL : PyLong_FromSsize_t(i);
}

/* runs(slots, start, lo, hi): the byte hulls of slots[start:] into lo[k], hi[k]
 * (uint64 arrays, k counted from start) while each slot is a Buffer of one run,
 * or empty (lo == hi), below 2**64: Regions.update's batch; the index of the
 * first slot not taken */
static PyObject *
runs(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != 4 || !PyList_CheckExact(a[0])) {
        PyErr_SetString(PyExc_TypeError, "runs(slots: list, start, lo, hi)");
        return NULL;
    }
    Py_ssize_t i = PyLong_AsSsize_t(a[1]), n = PyList_GET_SIZE(a[0]);
    if (i == -1 && PyErr_Occurred())
        return NULL;
    if (i < 0 || i > n) {
        PyErr_SetString(PyExc_ValueError, "runs(): start out of range");
        return NULL;
    }
    Py_buffer lo, hi;
    if (PyObject_GetBuffer(a[2], &lo, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0)
        return NULL;
    if (PyObject_GetBuffer(a[3], &hi, PyBUF_WRITABLE | PyBUF_C_CONTIGUOUS) < 0) {
        PyBuffer_Release(&lo);
        return NULL;
    }
    Py_ssize_t start = i;
    if (lo.itemsize != 8 || hi.itemsize != 8 || lo.len / 8 < n - i || hi.len / 8 < n - i) {
        PyErr_SetString(PyExc_ValueError, "runs(): a column is too short or of another "
                        "item size");
        i = -1;
    }
    for (; i >= 0 && BUFFER != NULL && i < n; i++) {   /* no code of the user's runs here */
        unsigned long long l, h;
        if (!one_run(PyList_GET_ITEM(a[0], i), &l, &h))
            break;
        ((unsigned long long *)lo.buf)[i - start] = l;
        ((unsigned long long *)hi.buf)[i - start] = h;
    }
    PyBuffer_Release(&lo);
    PyBuffer_Release(&hi);
    return i < 0 ? NULL : PyLong_FromSsize_t(i);
}

/* Whether kind (arrays._kind's answer) is that of an array, as is_array says */
static int
array_kind(PyObject *kind)
{
    static const char *const ARRAYS[] = {"cai", "cupy", "sim", "own", "host", "numba"};
    if (kind == NULL || !PyUnicode_Check(kind))
        return 0;
    for (int i = 0; i < 6; i++)   /* arrays.py's literals are these very objects */
        if (kind == ARRAY_KINDS[i])
            return 1;
    for (int i = 0; i < 6; i++)
        if (PyUnicode_CompareWithASCIIString(kind, ARRAYS[i]) == 0)
            return 1;
    return 0;
}

/* label + "[i]" (as "%U[%R]" makes it), written directly for a one-byte label */
static PyObject *
index_label(PyObject *label, Py_ssize_t i)
{
    char digits[24];
    int nd = 0;
    for (size_t v = (size_t)i; nd == 0 || v != 0; v /= 10)   /* i >= 0: an index */
        digits[nd++] = (char)('0' + v % 10);
    if (PyUnicode_KIND(label) != PyUnicode_1BYTE_KIND || i < 0)
        return PyUnicode_FromFormat("%U[%zd]", label, i);
    Py_ssize_t n = PyUnicode_GET_LENGTH(label);
    PyObject *out = PyUnicode_New(n + nd + 2, PyUnicode_MAX_CHAR_VALUE(label));
    if (out == NULL)
        return NULL;
    Py_UCS1 *to = PyUnicode_1BYTE_DATA(out);
    memcpy(to, PyUnicode_1BYTE_DATA(label), (size_t)n);
    to[n] = '[';
    for (int d = 0; d < nd; d++)   /* written last digit first */
        to[n + 1 + d] = (Py_UCS1)digits[nd - 1 - d];
    to[n + nd + 1] = ']';
    return out;
}

/* values._collect of an exact list, tuple or dict ``v``; 0, -1 with an error */
static int
walk(PyObject *v, PyObject *label, long depth, PyObject *out, PyObject *item, long most)
{
    if (depth > most)
        return 0;
    int dict = PyDict_CheckExact(v);
    /* the items as they are now (children() lists them before a look inside) */
    PyObject *items = dict ? PyDict_Items(v) : PySequence_Tuple(v);
    if (items == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(items);
    int r = 0;
    for (Py_ssize_t i = 0; i < n && r == 0; i++) {
        PyObject *x, *k;
        if (dict) {
            PyObject *pair = PyList_GET_ITEM(items, i);
            k = Py_NewRef(PyTuple_GET_ITEM(pair, 0));
            x = PyTuple_GET_ITEM(pair, 1);
        }
        else {
            k = NULL;
            x = PyTuple_GET_ITEM(items, i);
        }
        PyObject *sub = dict ? PyUnicode_FromFormat("%U[%R]", label, k) : index_label(label, i);
        Py_XDECREF(k);
        if (sub == NULL) {
            r = -1;
            break;
        }
        PyObject *kind = PyDict_GetItemWithError(KINDS, (PyObject *)Py_TYPE(x));
        if (array_kind(kind)) {
            PyObject *leaf = PyTuple_Pack(2, sub, x);
            r = leaf == NULL || PyList_Append(out, leaf) < 0 ? -1 : 0;
            Py_XDECREF(leaf);
        }
        else if (PyErr_Occurred()) {
            r = -1;
        }
        else if (PyList_CheckExact(x) || PyTuple_CheckExact(x) || PyDict_CheckExact(x)) {
            r = walk(x, sub, depth + 1, out, item, most);
        }
        else {   /* an object of another kind: values._item looks at it */
            PyObject *d = PyLong_FromLong(depth + 1);
            PyObject *got = d == NULL ? NULL :
                            PyObject_CallFunctionObjArgs(item, x, sub, d, out, NULL);
            r = got == NULL ? -1 : 0;
            Py_XDECREF(d);
            Py_XDECREF(got);
        }
        Py_DECREF(sub);
    }
    Py_DECREF(items);
    return r;
}

/* leaves(v, label, depth, out, item, most): values._collect of an exact list,
 * tuple or dict; None */
static PyObject *
leaves(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != 6 || !PyUnicode_Check(a[1]) || !PyList_CheckExact(a[3]) ||
            !(PyList_CheckExact(a[0]) || PyTuple_CheckExact(a[0]) || PyDict_CheckExact(a[0]))) {
        PyErr_SetString(PyExc_TypeError, "leaves(v: list, tuple or dict, label: str, depth, "
                        "out: list, item, most)");
        return NULL;
    }
    long depth = PyLong_AsLong(a[2]), most = PyLong_AsLong(a[5]);
    if ((depth == -1 || most == -1) && PyErr_Occurred())
        return NULL;
    if (KINDS == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "graphtrace._buffers is not configured");
        return NULL;
    }
    if (walk(a[0], a[1], depth, a[3], a[4], most) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyTypeObject *deque_type;   /* collections.deque: changed in place unseen */

/* One object of identities(): appended to out, or (out NULL) compared with
 * held[*at]; 1 (taken or the same), 0 (another object), -1 with an error */
static int
ident(PyObject *x, PyObject *out, PyObject *held, Py_ssize_t *at)
{
    if (out != NULL)
        return PyList_Append(out, x) < 0 ? -1 : 1;
    if (*at >= PyList_GET_SIZE(held) || PyList_GET_ITEM(held, *at) != x)
        return 0;
    (*at)++;
    return 1;
}

/* values._identities of v at depth; marks: (list, tuple, dict, end). No code of
 * the user's runs here (exact containers, pointers compared), so the borrowed
 * items stay valid. 1, 0 (a subclass of a container, too deep, or another
 * object), -1 with an error */
static int
ident_walk(PyObject *v, long depth, long most, PyObject *marks, PyObject *out, PyObject *held,
           Py_ssize_t *at)
{
    int kind = PyList_CheckExact(v) ? 0 : PyTuple_CheckExact(v) ? 1 : PyDict_CheckExact(v) ? 2
                                                                                          : -1;
    if (kind < 0) {   /* a subclass of a container, or one changed in place unseen by
                       * its identity (a set, a deque, a bytearray): not vouched for */
        int r = ident(v, out, held, at);
        PyTypeObject *t = Py_TYPE(v);   /* (exact types: a pointer each, no MRO walk) */
        return r == 1 && (PyList_Check(v) || PyTuple_Check(v) || PyDict_Check(v) ||
                          t == &PySet_Type || t == &PyByteArray_Type || t == deque_type)
            ? 0 : r;
    }
    if (depth > most)
        return 0;
    int r = ident(PyTuple_GET_ITEM(marks, kind), out, held, at);
    if (kind == 2) {
        Py_ssize_t pos = 0;
        PyObject *k, *x;
        while (r == 1 && PyDict_Next(v, &pos, &k, &x)) {
            r = ident(k, out, held, at);
            if (r == 1)
                r = ident_walk(x, depth + 1, most, marks, out, held, at);
        }
    }
    else {
        Py_ssize_t n = Py_SIZE(v);
        PyObject **items = kind == 0 ? ((PyListObject *)v)->ob_item
                                     : ((PyTupleObject *)v)->ob_item;
        /* compared: where held has the very items in a row, each was held as itself
         * (a container would have been held as its marks), no container: a lookup
         * table of a million numbers in one memcmp */
        if (r == 1 && out == NULL && n > 0 && *at + n <= PyList_GET_SIZE(held) &&
                memcmp(items, ((PyListObject *)held)->ob_item + *at,
                       (size_t)n * sizeof(PyObject *)) == 0) {
            *at += n;
            n = 0;
        }
        for (Py_ssize_t i = 0; r == 1 && i < n; i++)
            r = ident_walk(kind == 0 ? PyList_GET_ITEM(v, i) : PyTuple_GET_ITEM(v, i),
                           depth + 1, most, marks, out, held, at);
    }
    return r == 1 ? ident(PyTuple_GET_ITEM(marks, 3), out, held, at) : r;
}

static int
ident_args(PyObject *const *a, Py_ssize_t nargs, const char *usage, long *depth, long *most)
{
    if (nargs != 5 || !PyList_CheckExact(a[1]) || !PyTuple_CheckExact(a[4]) ||
            PyTuple_GET_SIZE(a[4]) != 4) {
        PyErr_SetString(PyExc_TypeError, usage);
        return -1;
    }
    *depth = PyLong_AsLong(a[2]);
    *most = PyLong_AsLong(a[3]);
    return (*depth == -1 || *most == -1) && PyErr_Occurred() ? -1 : 0;
}

/* identities(v, out, depth, most, marks): values._identities; whether complete */
static PyObject *
identities(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    long depth, most;
    if (ident_args(a, nargs, "identities(v, out: list, depth, most, marks: 4-tuple)",
                   &depth, &most) < 0)
        return NULL;
    int r = ident_walk(a[0], depth, most, a[4], a[1], NULL, NULL);
    return r < 0 ? NULL : PyBool_FromLong(r);
}

/* unchanged(v, held, depth, most, marks): whether identities(v) would be held's
 * very objects */
static PyObject *
unchanged(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    long depth, most;
    if (ident_args(a, nargs, "unchanged(v, held: list, depth, most, marks: 4-tuple)",
                   &depth, &most) < 0)
        return NULL;
    Py_ssize_t at = 0;
    int r = ident_walk(a[0], depth, most, a[4], NULL, a[1], &at);
    return r < 0 ? NULL : PyBool_FromLong(r == 1 && at == PyList_GET_SIZE(a[1]));
}

/* The items of an exact list or tuple, and their count; NULL for anything else */
static PyObject **
seq_items(PyObject *v, Py_ssize_t *n)
{
    if (PyList_CheckExact(v)) {
        *n = PyList_GET_SIZE(v);
        return ((PyListObject *)v)->ob_item;
    }
    if (PyTuple_CheckExact(v)) {
        *n = PyTuple_GET_SIZE(v);
        return ((PyTupleObject *)v)->ob_item;
    }
    return NULL;
}

/* one_type(v): the one exact type of the items of an exact list or tuple
 * (typed_forms._one_type); None where it is empty, holds items of several types, or
 * is another object */
static PyObject *
one_type(PyObject *module, PyObject *v)
{
    Py_ssize_t n;
    PyObject **items = seq_items(v, &n);
    if (items == NULL || n == 0)
        Py_RETURN_NONE;
    PyTypeObject *t = Py_TYPE(items[0]);
    for (Py_ssize_t i = 1; i < n; i++) {
        if (Py_TYPE(items[i]) != t)
            Py_RETURN_NONE;
    }
    return Py_NewRef((PyObject *)t);
}

/* float_bits(v): the doubles of an exact list or tuple of exact floats, as bytes
 * (typed_forms._float_bits, as array("d", v).tobytes()); None where an item is no
 * exact float or v is another object */
static PyObject *
float_bits(PyObject *module, PyObject *v)
{
    Py_ssize_t n;
    if (seq_items(v, &n) == NULL)
        Py_RETURN_NONE;
    /* (bytes are no container of the collector's: allocating them runs no code) */
    PyObject *out = PyBytes_FromStringAndSize(NULL, n * (Py_ssize_t)sizeof(double));
    if (out == NULL)
        return NULL;
    PyObject **items = seq_items(v, &n);
    char *to = PyBytes_AS_STRING(out);
    for (Py_ssize_t i = 0; i < n; i++) {
        if (!PyFloat_CheckExact(items[i])) {
            Py_DECREF(out);
            Py_RETURN_NONE;
        }
        double d = PyFloat_AS_DOUBLE(items[i]);
        memcpy(to + i * (Py_ssize_t)sizeof(double), &d, sizeof(double));
    }
    return out;
}

/* address(a): the address of a numpy array's first byte, read through the buffer
 * protocol (no format asked, so any dtype) where ``a.__array_interface__`` builds a
 * dict; None where the object exports no buffer (the Python path reads it then) */
static PyObject *
address(PyObject *module, PyObject *obj)
{
    Py_buffer v;
    if (PyObject_GetBuffer(obj, &v, PyBUF_STRIDES) < 0) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    PyObject *out = PyLong_FromVoidPtr(v.buf);
    PyBuffer_Release(&v);
    return out;
}

/* --- guard.py's Guard.unchanged ------------------------------------------ */

static int
first_referent(PyObject *o, void *arg)
{
    PyObject **out = (PyObject **)arg;
    if (*out == NULL)
        *out = o;
    return 0;
}

/* the dict a class's mappingproxy shows (the one object it visits), or NULL */
static PyObject *
proxied(PyObject *m)
{
    PyObject *inner = NULL;
    if (Py_TYPE(m)->tp_traverse == NULL ||
            Py_TYPE(m)->tp_traverse(m, first_referent, &inner) != 0)
        return NULL;
    return inner != NULL && PyDict_CheckExact(inner) ? inner : NULL;
}

#define ENTRY(list, i, n) (PyTuple_CheckExact(PyList_GET_ITEM(list, i)) && \
    PyTuple_GET_SIZE(PyList_GET_ITEM(list, i)) == (n) ? PyList_GET_ITEM(list, i) : NULL)
#define ITEM(t, k) PyTuple_GET_ITEM(t, k)

/* 1: each (dict or a class's mappingproxy, keys, values) holds those very
 * objects, in that order; 0: not; -1: not told here */
static int
same_mappings(PyObject *list)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *e = ENTRY(list, i, 3), *m;
        if (e == NULL || !PyTuple_CheckExact(ITEM(e, 1)) || !PyTuple_CheckExact(ITEM(e, 2)))
            return -1;
        m = ITEM(e, 0);
        if (!PyDict_CheckExact(m) && (!Py_IS_TYPE(m, &PyDictProxy_Type) ||
                                      (m = proxied(m)) == NULL))
            return -1;
        PyObject *keys = ITEM(e, 1), *values = ITEM(e, 2), *k, *v;
        Py_ssize_t n = PyTuple_GET_SIZE(keys), pos = 0, at = 0;
        if (PyDict_GET_SIZE(m) != n || PyTuple_GET_SIZE(values) != n)
            return 0;
        while (PyDict_Next(m, &pos, &k, &v)) {
            if (at >= n || k != ITEM(keys, at) || v != ITEM(values, at))
                return 0;
            at++;
        }
    }
    return 1;
}

/* the same for (list, tuple, deque, set or frozenset, its items) */
static int
same_sequences(PyObject *list)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *e = ENTRY(list, i, 2);
        if (e == NULL || !PyTuple_CheckExact(ITEM(e, 1)))
            return -1;
        PyObject *c = ITEM(e, 0), *items = ITEM(e, 1);
        Py_ssize_t n = PyTuple_GET_SIZE(items);
        if (PyList_CheckExact(c) || PyTuple_CheckExact(c)) {
            if (PySequence_Fast_GET_SIZE(c) != n)
                return 0;
            PyObject **got = PySequence_Fast_ITEMS(c);
            for (Py_ssize_t k = 0; k < n; k++)
                if (got[k] != ITEM(items, k))
                    return 0;
            continue;
        }
        Py_ssize_t size = PyObject_Size(c);
        if (size < 0) {
            PyErr_Clear();
            return -1;
        }
        if (size != n)
            return 0;
        PyObject *it = PyObject_GetIter(c), *x;
        if (it == NULL) {
            PyErr_Clear();
            return -1;
        }
        Py_ssize_t at = 0;
        int same = 1;
        while (same && (x = PyIter_Next(it)) != NULL) {
            same = at < n && x == ITEM(items, at);
            at++;
            Py_DECREF(x);
        }
        Py_DECREF(it);
        if (PyErr_Occurred()) {
            PyErr_Clear();
            return -1;
        }
        if (!same || at != n)
            return 0;
    }
    return 1;
}

/* the same for (globals or a module's dict, names, what each held or missing) */
static int
same_names(PyObject *list, PyObject *missing)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *e = ENTRY(list, i, 3);
        if (e == NULL || !PyDict_CheckExact(ITEM(e, 0)) || !PyTuple_CheckExact(ITEM(e, 1)) ||
                !PyTuple_CheckExact(ITEM(e, 2)) ||
                PyTuple_GET_SIZE(ITEM(e, 1)) != PyTuple_GET_SIZE(ITEM(e, 2)))
            return -1;
        PyObject *g = ITEM(e, 0), *names = ITEM(e, 1), *values = ITEM(e, 2);
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(names); k++) {
            PyObject *v = PyDict_GetItemWithError(g, ITEM(names, k));
            if (v == NULL) {
                if (PyErr_Occurred()) {
                    PyErr_Clear();
                    return -1;
                }
                v = missing;
            }
            if (v != ITEM(values, k))
                return 0;
        }
    }
    return 1;
}

/* the same for (cells, their contents or missing) */
static int
same_cells(PyObject *list, PyObject *missing)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(list); i++) {
        PyObject *e = ENTRY(list, i, 2);
        if (e == NULL || !PyTuple_CheckExact(ITEM(e, 0)) || !PyTuple_CheckExact(ITEM(e, 1)) ||
                PyTuple_GET_SIZE(ITEM(e, 0)) != PyTuple_GET_SIZE(ITEM(e, 1)))
            return -1;
        for (Py_ssize_t k = 0; k < PyTuple_GET_SIZE(ITEM(e, 0)); k++) {
            PyObject *cell = ITEM(ITEM(e, 0), k);
            if (!PyCell_Check(cell))
                return -1;
            PyObject *v = PyCell_GET(cell);
            if ((v == NULL ? missing : v) != ITEM(ITEM(e, 1), k))
                return 0;
        }
    }
    return 1;
}

/* the same for (function, its defaults, keyword defaults, code), (weak reference,
 * what it gave) and (object, its class) */
static int
same_functions_calls_types(PyObject *functions, PyObject *calls, PyObject *types)
{
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(functions); i++) {
        PyObject *e = ENTRY(functions, i, 4);
        if (e == NULL || !PyFunction_Check(ITEM(e, 0)))
            return -1;
        PyObject *f = ITEM(e, 0), *d = PyFunction_GET_DEFAULTS(f),
                 *kw = PyFunction_GET_KW_DEFAULTS(f);
        if ((d == NULL ? Py_None : d) != ITEM(e, 1) || (kw == NULL ? Py_None : kw) != ITEM(e, 2)
                || PyFunction_GET_CODE(f) != ITEM(e, 3))
            return 0;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(calls); i++) {
        PyObject *e = ENTRY(calls, i, 2);
        if (e == NULL || !PyWeakref_CheckRefExact(ITEM(e, 0)))
            return -1;
        PyObject *got = NULL;
#if PY_VERSION_HEX >= 0x030D0000
        if (PyWeakref_GetRef(ITEM(e, 0), &got) < 0)
            return -1;
        Py_XDECREF(got);   /* compared by address only; the entry holds the target */
        if (got == NULL)
            got = Py_None;
#else
        got = PyWeakref_GET_OBJECT(ITEM(e, 0));
#endif
        if (got != ITEM(e, 1))
            return 0;
    }
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(types); i++) {
        PyObject *e = ENTRY(types, i, 2);
        if (e == NULL)
            return -1;
        if ((PyObject *)Py_TYPE(ITEM(e, 0)) != ITEM(e, 1))
            return 0;
    }
    return 1;
}

/* guard_unchanged(mappings, sequences, names, cells, functions, calls, types,
 * missing): Guard.unchanged over its lists; None where it is not told here */
static PyObject *
guard_unchanged(PyObject *module, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != 8) {
        PyErr_SetString(PyExc_TypeError, "guard_unchanged takes 8 arguments");
        return NULL;
    }
    for (int i = 0; i < 7; i++)
        if (!PyList_CheckExact(a[i]))
            Py_RETURN_NONE;
    int r = same_functions_calls_types(a[4], a[5], a[6]);
    if (r == 1)
        r = same_names(a[2], a[7]);
    if (r == 1)
        r = same_cells(a[3], a[7]);
    if (r == 1)
        r = same_mappings(a[0]);
    if (r == 1)
        r = same_sequences(a[1]);
    if (r < 0)
        Py_RETURN_NONE;
    return PyBool_FromLong(r);
}

#undef ENTRY
#undef ITEM

/* configure(Buffer, dtypes, kinds): what roots() and regions() read */
static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyObject *type, *dtypes, *kinds;
    if (!PyArg_ParseTuple(args, "O!O!O!:configure", &PyType_Type, &type, &PyDict_Type, &dtypes,
                          &PyDict_Type, &kinds))
        return NULL;
    Py_CLEAR(BUFFER);
    for (int i = 0; i < N_FIELDS; i++) {
        PyObject *d = PyObject_GetAttrString(type, FIELD[i]);
        if (d == NULL)
            return NULL;
        int plain = Py_IS_TYPE(d, &PyMemberDescr_Type) &&
                    ((PyMemberDescrObject *)d)->d_member->type == Py_T_OBJECT_EX;
        if (plain)
            OFFSET[i] = ((PyMemberDescrObject *)d)->d_member->offset;
        Py_DECREF(d);
        if (!plain)   /* not a class of plain slots: nothing is taken here */
            Py_RETURN_FALSE;
    }
    BUFFER = (PyTypeObject *)Py_NewRef(type);
    Py_XSETREF(DTYPES, Py_NewRef(dtypes));
    Py_XSETREF(KINDS, Py_NewRef(kinds));
    Py_RETURN_TRUE;
}

static PyMethodDef methods[] = {
    {"roots", (PyCFunction)(void (*)(void))roots, METH_FASTCALL,
     "roots(items, start, device, bit, slots, bufs, roots): Tracer.add_arguments "
     "from items[start] on; the index of the first item left to the Python path."},
    {"regions", (PyCFunction)(void (*)(void))regions, METH_FASTCALL,
     "regions(slots, start, keys, lo, hi, bufs, of_slot, col_lo, col_hi, col_one): "
     "Regions.update from slots[start] on, writing the numpy columns; the index of the "
     "first slot left to the Python path."},
    {"runs", (PyCFunction)(void (*)(void))runs, METH_FASTCALL,
     "runs(slots, start, lo, hi): the byte hulls of slots[start:] into two uint64 arrays "
     "while each is a Buffer of one run or empty, below 2**64; the index of the first "
     "slot not taken."},
    {"view", (PyCFunction)(void (*)(void))view, METH_FASTCALL,
     "view(obj, cai, key, los, ks, tops, roots, slots, bufs, views, virtual): "
     "Tracer._entry of a new C-contiguous view on device 0 inside one root of one run, "
     "registered; None where the Python path is to take it."},
    {"leaves", (PyCFunction)(void (*)(void))leaves, METH_FASTCALL,
     "leaves(v, label, depth, out, item, most): values._collect of an exact list, tuple or "
     "dict, item(x, label, depth, out) called for objects of no known kind."},
    {"identities", (PyCFunction)(void (*)(void))identities, METH_FASTCALL,
     "identities(v, out, depth, most, marks): values._identities; whether complete."},
    {"unchanged", (PyCFunction)(void (*)(void))unchanged, METH_FASTCALL,
     "unchanged(v, held, depth, most, marks): whether identities(v) would be held's "
     "very objects."},
    {"one_type", one_type, METH_O,
     "one_type(v): the one exact type of the items of an exact list or tuple; None where "
     "it is empty or of several types, or v is another object."},
    {"float_bits", float_bits, METH_O,
     "float_bits(v): the doubles of an exact list or tuple of exact floats, as bytes "
     "(array('d', v).tobytes()); None where an item is no exact float."},
    {"address", address, METH_O,
     "address(a): the address of numpy array a's first byte (its buffer's); None where "
     "it exports no buffer."},
    {"guard_unchanged", (PyCFunction)(void (*)(void))guard_unchanged, METH_FASTCALL,
     "guard_unchanged(mappings, sequences, names, cells, functions, calls, types, "
     "missing): guard.py's Guard.unchanged over its snapshot lists; None where it is "
     "not told here (the Python path tells)."},
    {"configure", configure, METH_VARARGS,
     "configure(Buffer, dtypes, kinds): the class whose slots are written, arrays.py's "
     "typestr -> dtype and type -> kind caches; whether the class has plain slots."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "graphtrace._buffers",
    "New arrays of a trace taken in, compiled (optional; trace.py and deps.py hold the "
    "reference).",
    -1, methods, NULL, NULL, NULL, NULL,
};

#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL

PyMODINIT_FUNC
PyInit__buffers(void)
{
    PyObject *collections = PyImport_ImportModule("collections");
    if (collections == NULL)
        return NULL;
    deque_type = (PyTypeObject *)PyObject_GetAttrString(collections, "deque");
    Py_DECREF(collections);
    if (deque_type == NULL)
        return NULL;
    INTERN(s_iface, "__cuda_array_interface__");
    INTERN(s_array_iface, "__array_interface__");
    INTERN(s__ary, "_ary");
    INTERN(s_descr, "descr");
    INTERN(s_data, "data");
    INTERN(s_shape, "shape");
    INTERN(s_strides, "strides");
    INTERN(s_typestr, "typestr");
    INTERN(s_itemsize, "itemsize");
    INTERN(ARRAY_KINDS[0], "cai");
    INTERN(ARRAY_KINDS[1], "cupy");
    INTERN(ARRAY_KINDS[2], "sim");
    INTERN(ARRAY_KINDS[3], "own");
    INTERN(ARRAY_KINDS[4], "host");
    INTERN(ARRAY_KINDS[5], "numba");
    ZERO = PyLong_FromLong(0);
    PyObject *one = ZERO == NULL ? NULL : PyLong_FromLong(1);
    PyObject *bits = one == NULL ? NULL : PyLong_FromLong(64);
    ONE_BIT = bits == NULL ? NULL : PyLong_FromLong(2);
    TOP = ONE_BIT == NULL ? NULL : PyNumber_Lshift(one, bits);
    LAST = TOP == NULL ? NULL : PyNumber_Subtract(TOP, one);
    Py_XDECREF(one);
    Py_XDECREF(bits);
    if (LAST == NULL || (ONE_STRIDE = PyDict_New()) == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
