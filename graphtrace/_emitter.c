/* Kernel nodes added to a graph from compiled code: the driver's
 * cuGraphAddKernelNode called through the function pointer cuGetProcAddress
 * gave (ops/_driver_nodes.py passes it to configure()), and the loop of
 * emit.py's GpuContext._emit_recorded for its common entry.
 *
 * It also sets kernel nodes' parameters when a graph is rebound
 * (ops/_patch.py's set_definition and set_executable: set_nodes).
 *
 * Optional, like _speedups.c: without it, or with GRAPHTRACE_PURE_PYTHON set,
 * the same nodes are added through cuda.bindings. emit.py's Python loop is the
 * reference and takes every entry this file hands back: a node made while
 * recording, an op other than a kernel launch, a cooperative or cluster launch
 * or one with more dynamic shared memory than the default, a grid or block
 * that is not three ints, and any entry whose packing or driver call failed
 * (the Python loop then raises its error, naming the user's line). Nothing is
 * changed for an entry handed back. tests/test_emitter.py compares the two
 * loops through a stand-in for the driver.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>

/* The driver's CUDA_KERNEL_NODE_PARAMS (the _v2 layout, CUDA 12 and later:
 * what cuGetProcAddress gives for "cuGraphAddKernelNode" at version 12000). */
typedef struct {
    void *func;
    unsigned int grid[3];
    unsigned int block[3];
    unsigned int shared_mem;
    void **kernel_params;
    void **extra;
    void *kern;
    void *ctx;
} KernelParams;

typedef int (*AddKernelNode)(uint64_t *node, uint64_t graph, const uint64_t *deps,
                             size_t n, const KernelParams *params);
typedef int (*SetKernelNode)(uint64_t node, const KernelParams *params);
typedef int (*SetExecKernelNode)(uint64_t exec, uint64_t node, const KernelParams *params);

/* configure_set(): the driver's cuGraphKernelNodeSetParams and
 * cuGraphExecKernelNodeSetParams (CUDA 12 parameters), for rebinding */
static SetKernelNode SET;
static SetExecKernelNode SET_EXEC;

/* configure(): the driver's function (NULL: not configured), cuda.bindings'
 * CUgraphNode (what a handle is made as), kernel.py's KERNEL op, the dynamic
 * shared memory a kernel takes without opting in */
static AddKernelNode ADD;
static PyObject *NODE_TYPE, *KERNEL_OP;
static long long DEFAULT_SHARED;

static PyObject *s_cooperative, *s_cluster, *s_shared_mem, *s_grid, *s_block;

/* a handle object's (or an int's) value; 0 with an error where it has none */
static uint64_t
handle_value(PyObject *h)
{
    PyObject *v = PyLong_CheckExact(h) ? Py_NewRef(h) : PyNumber_Long(h);
    if (v == NULL)
        return 0;
    uint64_t out = PyLong_AsUnsignedLongLong(v);
    Py_DECREF(v);
    if (out == (uint64_t)-1 && PyErr_Occurred())
        return 0;
    return out;
}

/* a new handle object of the node ``h``; NULL with an error */
static PyObject *
make_handle(uint64_t h)
{
    PyObject *v = PyLong_FromUnsignedLongLong(h);
    if (v == NULL)
        return NULL;
    PyObject *out = PyObject_CallOneArg(NODE_TYPE, v);
    Py_DECREF(v);
    return out;
}

/* ``t`` a tuple of three ints that fit an unsigned int, into ``out``; 0 if not */
static int
dim3(PyObject *t, unsigned int out[3])
{
    if (t == NULL || !PyTuple_CheckExact(t) || PyTuple_GET_SIZE(t) != 3)
        return 0;
    for (int i = 0; i < 3; i++) {
        PyObject *v = PyTuple_GET_ITEM(t, i);
        if (!PyLong_CheckExact(v))
            return 0;
        int overflow;
        long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
        if (overflow || x < 0 || x > 0xFFFFFFFFLL)
            return 0;
        out[i] = (unsigned int)x;
    }
    return 1;
}

/* ``v`` a non-negative int, or -1 */
static long long
count(PyObject *v)
{
    if (v == NULL || !PyLong_CheckExact(v))
        return -1;
    int overflow;
    long long x = PyLong_AsLongLongAndOverflow(v, &overflow);
    return overflow || x < 0 ? -1 : x;
}

/* whether ``attrs`` (a launch's options) asks for nothing but grid, block and
 * at most the default shared memory; with them in ``p`` */
static int
plain_launch(PyObject *attrs, KernelParams *p)
{
    if (!PyDict_CheckExact(attrs))
        return 0;
    PyObject *names[2] = {s_cooperative, s_cluster};
    for (int i = 0; i < 2; i++) {   /* as emit_launch asks: a.get(name) true */
        PyObject *v = PyDict_GetItemWithError(attrs, names[i]);
        int asked = v == NULL ? 0 : PyObject_IsTrue(v);
        if (asked)
            return 0;   /* asked, or an error (PyErr_Occurred) */
    }
    long long shared = count(PyDict_GetItemWithError(attrs, s_shared_mem));
    if (shared < 0 || shared > DEFAULT_SHARED)
        return 0;
    p->shared_mem = (unsigned int)shared;
    return !PyErr_Occurred() && dim3(PyDict_GetItemWithError(attrs, s_grid), p->grid) &&
           dim3(PyDict_GetItemWithError(attrs, s_block), p->block);
}

/* ``deps`` (handles) as values in ``out`` (room for ``room``), or in memory
 * allocated for them (the caller frees what differs from ``out``); NULL with
 * an error */
static uint64_t *
dep_values(PyObject *deps, uint64_t *out, Py_ssize_t room, Py_ssize_t *n)
{
    PyObject *seq = PySequence_Fast(deps, "dependencies must be a sequence of graph nodes");
    if (seq == NULL)
        return NULL;
    *n = PySequence_Fast_GET_SIZE(seq);
    if (*n > room && (out = PyMem_Malloc(*n * sizeof(uint64_t))) == NULL) {
        Py_DECREF(seq);
        PyErr_NoMemory();
        return NULL;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        out[i] = handle_value(PySequence_Fast_GET_ITEM(seq, i));
        if (out[i] == 0 && PyErr_Occurred())
            break;
    }
    Py_DECREF(seq);
    return out;
}

static PyObject *
configure(PyObject *self, PyObject *args)
{
    unsigned long long add;
    PyObject *node_type, *kernel_op;
    long long shared;
    if (!PyArg_ParseTuple(args, "KOOL", &add, &node_type, &kernel_op, &shared))
        return NULL;
    if (!PyCallable_Check(node_type)) {
        PyErr_SetString(PyExc_TypeError, "configure(): the node type must be callable");
        return NULL;
    }
    ADD = (AddKernelNode)(uintptr_t)add;
    Py_XSETREF(NODE_TYPE, Py_NewRef(node_type));
    Py_XSETREF(KERNEL_OP, Py_NewRef(kernel_op));
    DEFAULT_SHARED = shared;
    Py_RETURN_NONE;
}

static PyObject *
configure_set(PyObject *self, PyObject *args)
{
    unsigned long long set, set_exec;
    if (!PyArg_ParseTuple(args, "KK", &set, &set_exec))
        return NULL;
    SET = (SetKernelNode)(uintptr_t)set;
    SET_EXEC = (SetExecKernelNode)(uintptr_t)set_exec;
    Py_RETURN_NONE;
}

/* set_nodes(members, params, executable): every node of ``members`` (a list of
 * (node, handle) pairs: ops/_patch.py's images) given the
 * CUDA_KERNEL_NODE_PARAMS at address ``params``, in the graph definition
 * (``executable`` 0) or in the executable graph of that handle. None, or
 * (position, the driver's error code) of the first that failed. */
static PyObject *
set_nodes(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "set_nodes(members, params, executable) takes "
                        "3 arguments");
        return NULL;
    }
    if (SET == NULL || SET_EXEC == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "set_nodes(): the driver's functions are not configured");
        return NULL;
    }
    if (!PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "set_nodes(): members must be a list");
        return NULL;
    }
    const KernelParams *params = PyLong_AsVoidPtr(args[1]);
    uint64_t exec = handle_value(args[2]);
    if (PyErr_Occurred())
        return NULL;
    if (params == NULL) {
        PyErr_SetString(PyExc_ValueError, "set_nodes(): params is a null address");
        return NULL;
    }
    PyObject *members = args[0];
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(members); i++) {
        PyObject *m = PyList_GET_ITEM(members, i);
        if (!PyTuple_Check(m) || PyTuple_GET_SIZE(m) != 2) {
            PyErr_SetString(PyExc_TypeError, "set_nodes(): members are (node, handle) pairs");
            return NULL;
        }
        uint64_t node = handle_value(PyTuple_GET_ITEM(m, 1));
        if (node == 0) {
            if (!PyErr_Occurred())
                PyErr_SetString(PyExc_ValueError, "set_nodes(): a null node handle");
            return NULL;
        }
        int err = exec ? SET_EXEC(exec, node, params) : SET(node, params);
        if (err)
            return Py_BuildValue("(ni)", i, err);
    }
    Py_RETURN_NONE;
}

/* pointers(): the driver functions configured, as ints (0: none) */
static PyObject *
pointers(PyObject *self, PyObject *unused)
{
    return Py_BuildValue("(KKK)", (unsigned long long)(uintptr_t)ADD,
                         (unsigned long long)(uintptr_t)SET,
                         (unsigned long long)(uintptr_t)SET_EXEC);
}

#define ROOM 16

/* add(graph, deps, params): a kernel node of the CUgraph ``graph`` (an int)
 * after the handles ``deps``, with the CUDA_KERNEL_NODE_PARAMS at address
 * ``params``; its handle, or the driver's error code (an int) */
static PyObject *
add(PyObject *self, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 3) {
        PyErr_SetString(PyExc_TypeError, "add(graph, deps, params) takes 3 arguments");
        return NULL;
    }
    if (ADD == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "add(): the driver's function is not configured");
        return NULL;
    }
    uint64_t graph = handle_value(args[0]), room[ROOM], node = 0;
    if (PyErr_Occurred())
        return NULL;
    const KernelParams *params = PyLong_AsVoidPtr(args[2]);
    if (params == NULL) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "add(): params is a null address");
        return NULL;
    }
    Py_ssize_t n;
    uint64_t *deps = dep_values(args[1], room, ROOM, &n);
    if (deps == NULL || PyErr_Occurred()) {
        if (deps != room)
            PyMem_Free(deps);
        return NULL;
    }
    int err = ADD(&node, graph, deps, (size_t)n, params);
    if (deps != room)
        PyMem_Free(deps);
    return err ? PyLong_FromLong(err) : make_handle(node);
}

/* The handles of the nodes this call of launches() added, by position, grown
 * as it goes (0 where another added the node: read from by_pos) */
typedef struct {
    uint64_t *at;
    Py_ssize_t start, size, room;
    uint64_t graph;   /* the CUgraph they are added to */
} Made;

static int
made_push(Made *m, uint64_t h)
{
    if (m->size == m->room) {
        Py_ssize_t room = m->room ? 2 * m->room : 256;
        uint64_t *at = PyMem_Realloc(m->at, room * sizeof(uint64_t));
        if (at == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        m->at = at, m->room = room;
    }
    m->at[m->size++] = h;
    return 0;
}

/* the handle value of the node at position ``p``; 0 with an error */
static uint64_t
made_get(Made *m, PyObject *by_pos, Py_ssize_t p)
{
    if (p >= m->start && p - m->start < m->size)
        return m->at[p - m->start];
    if (p < 0 || p >= PyList_GET_SIZE(by_pos)) {
        PyErr_SetString(PyExc_IndexError, "launches(): a dependency not yet emitted");
        return 0;
    }
    return handle_value(PyList_GET_ITEM(by_pos, p));
}

/* What one entry needs of Python: its packed arguments (``kernel_arguments``'s
 * tuple), through ``packings`` where the launch's argument tuple was packed. */
static PyObject *
packed(PyObject *packings, PyObject *kernel_arguments, PyObject *target, PyObject *args)
{
    if (packings != Py_None && PyDict_CheckExact(packings)) {
        PyObject *key = PyLong_FromVoidPtr(args);
        if (key == NULL)
            return NULL;
        PyObject *hit = PyDict_GetItemWithError(packings, key);
        Py_DECREF(key);
        if (hit != NULL && PyTuple_CheckExact(hit) && PyTuple_GET_SIZE(hit) == 3 &&
                PyTuple_GET_ITEM(hit, 0) == args && PyTuple_GET_ITEM(hit, 1) == target)
            return Py_NewRef(PyTuple_GET_ITEM(hit, 2));
        if (PyErr_Occurred())
            return NULL;
    }
    PyObject *call[2] = {target, args};
    return PyObject_Vectorcall(kernel_arguments, call, 2, NULL);
}

enum { A_ENTRIES, A_PTR, A_PREDS, A_BY_POS, A_START, A_GRAPH, A_EARLY, A_PACKINGS,
       A_KERNEL_ARGUMENTS, A_STATE, A_HANDLES, A_NODES, A_FILL, A_FUNCTION, A_COUNT };

/* One entry's node added, if it is a plain kernel launch: 1 added, 0 handed
 * back (nothing changed), -1 an error to raise */
static int
launch_one(PyObject *const *a, Py_ssize_t pos, Made *made, PyObject **last_kern,
           PyObject **last_values, KernelParams *p)
{
    PyObject *entry = PyList_GET_ITEM(a[A_ENTRIES], pos);
    if (!PyTuple_CheckExact(entry) || PyTuple_GET_SIZE(entry) < 8 ||
            PyTuple_GET_ITEM(entry, 0) != KERNEL_OP)
        return 0;
    if (PyDict_GET_SIZE(a[A_EARLY])) {
        PyObject *key = PyLong_FromSsize_t(pos);
        if (key == NULL)
            return -1;
        int early = PyDict_Contains(a[A_EARLY], key);
        Py_DECREF(key);
        if (early)
            return early < 0 ? -1 : 0;
    }
    PyObject *target = PyTuple_GET_ITEM(entry, 1), *args = PyTuple_GET_ITEM(entry, 2);
    PyObject *index = PyTuple_GET_ITEM(entry, 7);
    if (!plain_launch(PyTuple_GET_ITEM(entry, 3), p))
        goto hand_back;

    PyObject *out = packed(a[A_PACKINGS], a[A_KERNEL_ARGUMENTS], target, args);
    if (out == NULL)
        goto hand_back;
    int ok = PyTuple_CheckExact(out) && PyTuple_GET_SIZE(out) == 4;
    if (ok) {
        int cooperative = PyObject_IsTrue(PyTuple_GET_ITEM(out, 3));
        if (cooperative < 0) {
            Py_DECREF(out);
            goto hand_back;
        }
        ok = !cooperative;
    }
    if (!ok) {
        Py_DECREF(out);
        return 0;
    }
    PyObject *kern = PyTuple_GET_ITEM(out, 0), *values = PyTuple_GET_ITEM(out, 2);
    if (kern != *last_kern) {   /* consecutive nodes often launch one kernel */
        PyObject *is_function = PyObject_GetAttrString(target, "handle_is_function");
        PyObject *call[2] = {kern, is_function};
        PyObject *fn = is_function == NULL ? NULL :
            PyObject_Vectorcall(a[A_FUNCTION], call, 2, NULL);
        Py_XDECREF(is_function);
        void *f = fn == NULL ? NULL : PyLong_AsVoidPtr(fn);
        Py_XDECREF(fn);
        if (f == NULL) {
            Py_DECREF(out);
            goto hand_back;
        }
        p->func = f;
        Py_XSETREF(*last_kern, Py_NewRef(kern));
    }
    if (values != *last_values) {   /* nodes of one argument tuple share one packing */
        PyObject *address = PyObject_CallOneArg(a[A_FILL], values);
        void **at = address == NULL ? NULL : PyLong_AsVoidPtr(address);
        Py_XDECREF(address);
        if (at == NULL) {
            Py_DECREF(out);
            Py_CLEAR(*last_values);
            goto hand_back;
        }
        p->kernel_params = at;
        Py_XSETREF(*last_values, Py_NewRef(values));
    }

    PyObject *ptr = a[A_PTR], *preds = a[A_PREDS];
    Py_ssize_t lo = PyLong_AsSsize_t(PyList_GET_ITEM(ptr, pos));
    Py_ssize_t hi = PyLong_AsSsize_t(PyList_GET_ITEM(ptr, pos + 1));
    uint64_t room[ROOM], *deps = room;
    if (PyErr_Occurred() || lo < 0 || hi < lo || hi > PyList_GET_SIZE(preds)) {
        Py_DECREF(out);
        goto hand_back;
    }
    if (hi - lo > ROOM && (deps = PyMem_Malloc((hi - lo) * sizeof(uint64_t))) == NULL) {
        Py_DECREF(out);
        PyErr_NoMemory();
        return -1;
    }
    int known = 1;
    for (Py_ssize_t i = lo; i < hi && known; i++) {
        Py_ssize_t q = PyLong_AsSsize_t(PyList_GET_ITEM(preds, i));
        deps[i - lo] = q < 0 ? 0 : made_get(made, a[A_BY_POS], q);
        known = deps[i - lo] != 0;
    }
    uint64_t node = 0;
    int err = known ? ADD(&node, made->graph, deps, (size_t)(hi - lo), p) : -1;
    if (deps != room)
        PyMem_Free(deps);
    if (err) {   /* the Python loop makes the call again and names the failure */
        Py_DECREF(out);
        goto hand_back;
    }

    /* added: from here on, a failure is raised (the node is in the graph) */
    PyObject *handle = make_handle(node);
    PyObject *state = handle == NULL ? NULL :
        PyTuple_Pack(2, PyTuple_GET_ITEM(out, 0), PyTuple_GET_ITEM(out, 1));
    Py_DECREF(out);
    int failed = state == NULL ||
        PyDict_SetItem(a[A_STATE], index, state) < 0 ||
        PyDict_SetItem(a[A_HANDLES], index, handle) < 0 ||
        PyDict_SetItem(a[A_NODES], index, handle) < 0 ||
        PyList_Append(a[A_BY_POS], handle) < 0 ||
        made_push(made, node) < 0;
    Py_XDECREF(state);
    Py_XDECREF(handle);
    return failed ? -1 : 1;

hand_back:   /* an Exception is the Python loop's to raise again; anything else now */
    if (PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_Exception))
        return -1;
    PyErr_Clear();
    return 0;
}

/* launches(entries, ptr, preds, by_pos, start, graph, early, packings,
 *          kernel_arguments, state, handles, nodes, fill, function_of):
 * _emit_recorded's loop from position ``start``, as far as its entries are
 * plain kernel launches; the position of the first one it hands back (the
 * number of entries when it took them all). */
static PyObject *
launches(PyObject *self, PyObject *const *a, Py_ssize_t nargs)
{
    if (nargs != A_COUNT) {
        PyErr_Format(PyExc_TypeError, "launches() takes %d arguments", (int)A_COUNT);
        return NULL;
    }
    if (ADD == NULL) {
        PyErr_SetString(PyExc_RuntimeError,
                        "launches(): the driver's function is not configured");
        return NULL;
    }
    if (!PyList_CheckExact(a[A_ENTRIES]) || !PyList_CheckExact(a[A_PTR]) ||
            !PyList_CheckExact(a[A_PREDS]) || !PyList_CheckExact(a[A_BY_POS]) ||
            !PyDict_CheckExact(a[A_EARLY]) || !PyDict_CheckExact(a[A_STATE]) ||
            !PyDict_CheckExact(a[A_HANDLES]) || !PyDict_CheckExact(a[A_NODES])) {
        PyErr_SetString(PyExc_TypeError, "launches(): lists and dicts as emit.py has them");
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(a[A_ENTRIES]), pos = PyLong_AsSsize_t(a[A_START]);
    if (pos == -1 && PyErr_Occurred())
        return NULL;
    if (pos < 0 || pos > n || PyList_GET_SIZE(a[A_PTR]) < n + 1 ||
            PyList_GET_SIZE(a[A_BY_POS]) != pos) {
        PyErr_SetString(PyExc_ValueError,
                        "launches(): start, ptr and by_pos do not agree with the entries");
        return NULL;
    }
    Made made = {NULL, pos, 0, 0, handle_value(a[A_GRAPH])};
    if (PyErr_Occurred())
        return NULL;
    PyObject *last_kern = NULL, *last_values = NULL;
    KernelParams p = {0};
    int r = 1;
    for (; pos < n; pos++) {
        r = launch_one(a, pos, &made, &last_kern, &last_values, &p);
        if (r <= 0)
            break;
    }
    PyMem_Free(made.at);
    Py_XDECREF(last_kern);
    Py_XDECREF(last_values);
    return r < 0 ? NULL : PyLong_FromSsize_t(pos);
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(add, node_type, kernel_op, default_shared): the address of the "
     "driver's cuGraphAddKernelNode (CUDA 12 parameters), what a node handle is "
     "made as, the kernel launch op, and the dynamic shared memory a kernel takes "
     "without opting in"},
    {"configure_set", configure_set, METH_VARARGS,
     "configure_set(set, set_exec): the addresses of the driver's "
     "cuGraphKernelNodeSetParams and cuGraphExecKernelNodeSetParams (CUDA 12 "
     "parameters)"},
    {"pointers", pointers, METH_NOARGS,
     "pointers(): the addresses of the driver functions configured (add, set, "
     "set_exec), 0 where none"},
    {"set_nodes", (PyCFunction)(void (*)(void))set_nodes, METH_FASTCALL,
     "set_nodes(members, params, executable): each (node, handle) of ``members`` "
     "given the CUDA_KERNEL_NODE_PARAMS at address ``params``, in the definition "
     "(executable 0) or that executable graph; None, or (position, error code) of "
     "the first that failed"},
    {"add", (PyCFunction)(void (*)(void))add, METH_FASTCALL,
     "add(graph, deps, params): a kernel node of ``graph`` after the handles "
     "``deps``, with the CUDA_KERNEL_NODE_PARAMS at address ``params``; its "
     "handle, or the driver's error code"},
    {"launches", (PyCFunction)(void (*)(void))launches, METH_FASTCALL,
     "launches(entries, ptr, preds, by_pos, start, graph, early, packings, "
     "kernel_arguments, state, handles, nodes, fill, function_of): emit.py's "
     "_emit_recorded loop from ``start`` while its entries are plain kernel "
     "launches; the position of the first entry it hands back"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "graphtrace._emitter",
    "Kernel nodes added through the driver from compiled code (optional; "
    "emit.py and ops/_driver_nodes.py hold the reference).",
    -1, methods, NULL, NULL, NULL, NULL,
};

#define INTERN(var, text) if ((var = PyUnicode_InternFromString(text)) == NULL) return NULL

PyMODINIT_FUNC
PyInit__emitter(void)
{
    INTERN(s_cooperative, "cooperative");
    INTERN(s_cluster, "cluster");
    INTERN(s_shared_mem, "shared_mem");
    INTERN(s_grid, "grid");
    INTERN(s_block, "block");
    return PyModule_Create(&module_def);
}
