/* The search of reduction.py's transitive reduction, compiled: reduction._search
 * and reduction._latest_on, for the nodes left with predecessors on several
 * chains; and deps.data_pairs where the regions a scope touches do not overlap
 * (pairs).
 *
 * Optional, like _speedups.c: without it (or with GRAPHTRACE_PURE_PYTHON set)
 * reduction.py and deps.py run their Python functions, which are the reference. The reduction
 * is unique, so both keep the same pairs: tests/test_deps_random.py holds each
 * against a brute-force oracle on random graphs.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>

/* memo of _latest_on: (node, chain) -> (answer, the lowest node it looked back to) */
typedef struct {
    int64_t *keys;   /* node * n + chain + 1; 0: empty */
    int64_t *answer, *lo;
    size_t cap, used;
} Memo;

static inline size_t
mix(int64_t key)
{
    uint64_t x = (uint64_t)key;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (size_t)x;
}

static int
memo_grow(Memo *m)
{
    size_t cap = m->cap ? 2 * m->cap : 1024;
    int64_t *keys = PyMem_Calloc(cap, sizeof(int64_t));
    int64_t *answer = PyMem_Malloc(cap * sizeof(int64_t));
    int64_t *lo = PyMem_Malloc(cap * sizeof(int64_t));
    if (keys == NULL || answer == NULL || lo == NULL) {
        PyMem_Free(keys), PyMem_Free(answer), PyMem_Free(lo);
        PyErr_NoMemory();
        return -1;
    }
    for (size_t i = 0; i < m->cap; i++) {
        if (!m->keys[i])
            continue;
        size_t j = mix(m->keys[i]) & (cap - 1);
        while (keys[j])
            j = (j + 1) & (cap - 1);
        keys[j] = m->keys[i], answer[j] = m->answer[i], lo[j] = m->lo[i];
    }
    PyMem_Free(m->keys), PyMem_Free(m->answer), PyMem_Free(m->lo);
    m->keys = keys, m->answer = answer, m->lo = lo, m->cap = cap;
    return 0;
}

/* the slot of ``key``: found (keys[slot] == key) or where it would go */
static inline size_t
memo_slot(const Memo *m, int64_t key)
{
    size_t j = mix(key) & (m->cap - 1);
    while (m->keys[j] && m->keys[j] != key)
        j = (j + 1) & (m->cap - 1);
    return j;
}

static inline int
memo_put(Memo *m, int64_t key, int64_t answer, int64_t lo)
{
    if (2 * (m->used + 1) > m->cap && memo_grow(m) < 0)
        return -1;
    size_t j = memo_slot(m, key);
    if (!m->keys[j])
        m->keys[j] = key, m->used++;
    m->answer[j] = answer, m->lo[j] = lo;
    return 0;
}

/* whether the memo answers for (key) looking back to ``lo``: found and final
 * (an answer), or found looking back at least as far; its answer in *out */
static inline int
memo_known(const Memo *m, int64_t key, int64_t lo, int64_t *out)
{
    size_t j = memo_slot(m, key);
    if (!m->keys[j] || (m->answer[j] < 0 && m->lo[j] > lo))
        return 0;
    *out = m->answer[j];
    return 1;
}

typedef struct {
    int64_t *at;
    size_t size, room;
} Stack;

static inline int
push(Stack *s, int64_t v)
{
    if (s->size == s->room) {
        size_t room = s->room ? 2 * s->room : 256;
        int64_t *at = PyMem_Realloc(s->at, room * sizeof(int64_t));
        if (at == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        s->at = at, s->room = room;
    }
    s->at[s->size++] = v;
    return 0;
}

typedef struct {
    const int64_t *ptr, *preds, *head;
    int64_t n;
    Memo memo;
    Stack stack;
} Graph;

#define KEY(g, u, chain) ((u) * (g)->n + (chain) + 1)

/* reduction._latest_on: the latest node of ``chain`` that is ``q`` or an ancestor of
 * it, looking no further back than ``lo``; -1 if none; -2 with an error */
static int64_t
latest_on(Graph *g, int64_t q, int64_t chain, int64_t lo)
{
    Stack *st = &g->stack;
    size_t base = st->size;
    int64_t out = -1;
    if (push(st, q) < 0)
        return -2;
    while (st->size > base) {
        int64_t u = st->at[st->size - 1];
        if (memo_known(&g->memo, KEY(g, u, chain), lo, &out)) {
            st->size--;
            continue;
        }
        if (g->head[u] == chain) {
            if (memo_put(&g->memo, KEY(g, u, chain), u, 0) < 0)
                return -2;
            st->size--;
            continue;
        }
        int pending = 0;
        int64_t best = -1;
        for (int64_t k = g->ptr[u]; k < g->ptr[u + 1]; k++) {
            int64_t w = g->preds[k];
            if (w < lo)
                continue;
            if (memo_known(&g->memo, KEY(g, w, chain), lo, &out)) {
                if (out > best)
                    best = out;
            }
            else {
                if (push(st, w) < 0)
                    return -2;
                pending = 1;
            }
        }
        if (pending)
            continue;
        if (memo_put(&g->memo, KEY(g, u, chain), best, lo) < 0)
            return -2;
        st->size--;
    }
    memo_known(&g->memo, KEY(g, q, chain), lo, &out);
    return out;
}

/* one int64 array argument: its view (released by the caller) */
static int
int64s(PyObject *obj, Py_buffer *view, const char *name)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *f = view->format;
    if (view->itemsize != 8 || f == NULL || strlen(f) != 1 ||
            (f[0] != 'q' && f[0] != 'l')) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "search(): %s must be an int64 array", name);
        return -1;
    }
    return 0;
}

/* reduction._search's node loop, for node ``node``; 0, or -1 with an error */
static int
settle(Graph *g, int64_t node, int64_t *seen, int64_t *red, int64_t *want,
       int64_t *wanted_pred, char *keep)
{
    const int64_t *ptr = g->ptr, *preds = g->preds, *head = g->head;
    int64_t a = ptr[node], b = ptr[node + 1], stamp = node + 1;
    int64_t lo = preds[a], budget = 4 * (b - a), wanted = 0;
    for (int64_t k = a; k < b - 1; k++) {   /* chain -> its predecessor, the last one */
        int64_t c = head[preds[k]];
        if (want[c] != stamp)
            want[c] = stamp, wanted++;
        wanted_pred[c] = preds[k];
    }
    Stack *st = &g->stack;
    for (int64_t k = b - 1; k >= a; k--) {
        int64_t q = preds[k];
        if (red[q] == stamp)
            continue;   /* its ancestors were walked from the one that reaches it */
        int64_t c = head[q];
        if (want[c] == stamp && wanted_pred[c] == q)
            want[c] = 0, wanted--;
        st->size = 0;
        for (int64_t j = ptr[q]; j < ptr[q + 1]; j++)
            if (push(st, preds[j]) < 0)
                return -1;
        while (st->size && wanted && budget) {
            int64_t v = st->at[--st->size];
            if (v < lo || seen[v] == stamp)
                continue;
            seen[v] = stamp;
            budget--;
            int64_t cv = head[v];
            if (want[cv] == stamp && wanted_pred[cv] <= v) {
                red[wanted_pred[cv]] = stamp;
                want[cv] = 0, wanted--;
            }
            for (int64_t j = ptr[v]; j < ptr[v + 1]; j++)
                if (push(st, preds[j]) < 0)
                    return -1;
        }
        if (!wanted || !budget)
            break;
    }
    st->size = 0;
    for (int64_t k = a; k < b - 1 && wanted; k++) {   /* left open by a long walk */
        int64_t p = preds[k], c = head[p];
        if (want[c] != stamp || wanted_pred[c] != p)
            continue;
        for (int64_t j = a; j < b; j++) {
            int64_t q = preds[j];
            if (q <= p)
                continue;
            int64_t found = latest_on(g, q, c, p);
            if (found == -2)
                return -1;
            if (found >= p) {
                red[p] = stamp;
                break;
            }
        }
    }
    for (int64_t k = a; k < b; k++)
        if (red[preds[k]] == stamp)
            keep[k] = 0;
    return 0;
}

/* search(ptr, preds, head): reduction._search's mask of the pairs to keep, as bytes
 * (one 0 or 1 per pair); the nodes settled are those with two predecessors or
 * more in ptr */
static PyObject *
search(PyObject *self, PyObject *args)
{
    PyObject *o[3];
    if (!PyArg_ParseTuple(args, "OOO", &o[0], &o[1], &o[2]))
        return NULL;
    static const char *names[3] = {"ptr", "preds", "head"};
    Py_buffer v[3];
    int got = 0;
    for (; got < 3; got++)
        if (int64s(o[got], &v[got], names[got]) < 0)
            break;
    PyObject *out = NULL;
    int64_t *seen = NULL, *red = NULL, *want = NULL, *wanted_pred = NULL;
    Graph g = {0};
    if (got < 3)
        goto done;
    int64_t n = v[2].len / 8, m = v[1].len / 8;
    if (v[0].len / 8 != n + 1) {
        PyErr_SetString(PyExc_ValueError, "search(): ptr has n + 1 entries, head n");
        goto done;
    }
    g.ptr = v[0].buf, g.preds = v[1].buf, g.head = v[2].buf, g.n = n;
    if (g.ptr[n] != m || g.ptr[0] != 0) {
        PyErr_SetString(PyExc_ValueError, "search(): ptr does not cover preds");
        goto done;
    }
    out = PyBytes_FromStringAndSize(NULL, m);
    seen = PyMem_Calloc(n + 1, sizeof(int64_t));
    red = PyMem_Calloc(n + 1, sizeof(int64_t));
    want = PyMem_Calloc(n + 1, sizeof(int64_t));
    wanted_pred = PyMem_Calloc(n + 1, sizeof(int64_t));
    if (out == NULL || seen == NULL || red == NULL || want == NULL || wanted_pred == NULL) {
        if (out != NULL)
            PyErr_NoMemory();
        Py_CLEAR(out);
        goto done;
    }
    if (memo_grow(&g.memo) < 0) {   /* never empty: slots are found by masking */
        Py_CLEAR(out);
        goto done;
    }
    char *keep = PyBytes_AS_STRING(out);
    memset(keep, 1, m);
    for (int64_t i = 0; i < m; i++)   /* every index is read unchecked below */
        if (g.preds[i] < 0 || g.preds[i] >= n) {
            PyErr_SetString(PyExc_ValueError, "search(): a predecessor out of range");
            Py_CLEAR(out);
            goto done;
        }
    for (int64_t i = 0; i < n; i++) {
        if (g.ptr[i + 1] < g.ptr[i] || g.head[i] < 0 || g.head[i] >= n) {
            PyErr_SetString(PyExc_ValueError, "search(): ptr or head out of order");
            Py_CLEAR(out);
            goto done;
        }
    }
    for (int64_t i = 0; i < n; i++) {
        if (g.ptr[i + 1] - g.ptr[i] >= 2 && settle(&g, i, seen, red, want, wanted_pred, keep) < 0) {
            Py_CLEAR(out);
            goto done;
        }
    }
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&v[i]);
    PyMem_Free(seen), PyMem_Free(red), PyMem_Free(want), PyMem_Free(wanted_pred);
    PyMem_Free(g.memo.keys), PyMem_Free(g.memo.answer), PyMem_Free(g.memo.lo);
    PyMem_Free(g.stack.at);
    return out;
}


/* --- deps.data_pairs where the regions touched do not overlap ------------------- */

typedef struct {
    int64_t *at;
    Py_ssize_t len, cap;
} Pairs;   /* preds and ops interleaved */

static int
pair(Pairs *p, int64_t pred, int64_t op)
{
    if (p->len + 2 > p->cap) {
        Py_ssize_t cap = p->cap ? 2 * p->cap : 1024;
        int64_t *at = PyMem_Realloc(p->at, cap * sizeof(int64_t));
        if (at == NULL) {
            PyErr_NoMemory();
            return -1;
        }
        p->at = at, p->cap = cap;
    }
    p->at[p->len++] = pred, p->at[p->len++] = op;
    return 0;
}

typedef struct {
    uint64_t lo, hi;
} Hull;

static int
by_lo(const void *a, const void *b)
{
    uint64_t x = ((const Hull *)a)->lo, y = ((const Hull *)b)->lo;
    return (x > y) - (x < y);
}

/* one array argument of 8-byte items, signed ('q', 'l') or not ('Q', 'L') */
static int
words(PyObject *obj, Py_buffer *view, const char *name, int is_signed)
{
    if (PyObject_GetBuffer(obj, view, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) < 0)
        return -1;
    const char *f = view->format;
    char a = is_signed ? 'q' : 'Q', b = is_signed ? 'l' : 'L';
    if (view->itemsize != 8 || f == NULL || strlen(f) != 1 || (f[0] != a && f[0] != b)) {
        PyBuffer_Release(view);
        PyErr_Format(PyExc_TypeError, "pairs(): %s must be an %s array", name,
                     is_signed ? "int64" : "uint64");
        return -1;
    }
    return 0;
}

/* Whether the hulls of the regions that live accesses touch overlap (1), or not
 * (0); -1 with an error. Marks them in ``used``. */
static int
hulls_overlap(int64_t n, const int64_t *ends, const int64_t *reg, const char *barrier,
              const uint64_t *lo, const uint64_t *hi, char *used, int64_t count)
{
    Hull *h = PyMem_Malloc((count ? count : 1) * sizeof(Hull));
    if (h == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    int64_t k = 0, at = 0;
    int sorted = 1;
    for (int64_t j = 0; j < n; at = ends[j++]) {
        if (barrier != NULL && barrier[j])
            continue;
        for (int64_t t = at; t < ends[j]; t++) {
            int64_t r = reg[t];
            if (r < 0 || used[r])
                continue;
            used[r] = 1;
            h[k].lo = lo[r], h[k].hi = hi[r];
            sorted &= k == 0 || h[k - 1].lo <= h[k].lo;
            k++;
        }
    }
    if (!sorted)
        qsort(h, k, sizeof(Hull), by_lo);
    int overlap = 0;
    uint64_t top = 0;
    for (int64_t i = 0; i < k && !overlap; i++) {
        overlap = i > 0 && h[i].lo < top;
        top = h[i].hi > top ? h[i].hi : top;
    }
    PyMem_Free(h);
    return overlap;
}

/* The walk of deps._simple_pairs, one region one segment: per region, in the
 * nodes' order and within an epoch (the nodes between barriers), a read follows
 * the last write, a write the reads since it, else the last write. A node's
 * accesses of one region count once, their modes joined. */
static int
walk(int64_t n, const int64_t *ends, const int64_t *reg, const char *mode,
     const char *barrier, int64_t count, Pairs *out)
{
    int64_t m = n ? ends[n - 1] : 0;
    int64_t *last = PyMem_Malloc((count + 1) * sizeof(int64_t));
    int64_t *head = PyMem_Malloc((count + 1) * sizeof(int64_t));
    int64_t *epoch_of = PyMem_Malloc((count + 1) * sizeof(int64_t));
    int64_t *seen = PyMem_Calloc(count + 1, sizeof(int64_t));
    int64_t *slot = PyMem_Malloc((count + 1) * sizeof(int64_t));
    int64_t *rnode = PyMem_Malloc((m + 1) * sizeof(int64_t));
    int64_t *rnext = PyMem_Malloc((m + 1) * sizeof(int64_t));
    int64_t *nreg = PyMem_Malloc((m + 1) * sizeof(int64_t));
    char *nmode = PyMem_Malloc(m + 1);
    int rc = -1;
    if (!last || !head || !epoch_of || !seen || !slot || !rnode || !rnext || !nreg || !nmode) {
        PyErr_NoMemory();
        goto done;
    }
    for (int64_t r = 0; r < count; r++)
        epoch_of[r] = -1;
    int64_t epoch = 0, reads = 0, at = 0;
    for (int64_t j = 0; j < n; at = ends[j++]) {
        if (barrier != NULL && barrier[j]) {
            epoch++;
            continue;
        }
        int64_t k = 0;
        for (int64_t t = at; t < ends[j]; t++) {   /* this node's regions, modes joined */
            int64_t r = reg[t];
            if (r < 0)
                continue;
            if (seen[r] == j + 1) {
                nmode[slot[r]] |= mode[t];
                continue;
            }
            seen[r] = j + 1, slot[r] = k, nreg[k] = r, nmode[k++] = mode[t];
        }
        for (int64_t i = 0; i < k; i++) {
            int64_t r = nreg[i];
            if (epoch_of[r] != epoch)
                epoch_of[r] = epoch, last[r] = -1, head[r] = -1;
            if (nmode[i] & 2) {
                if (head[r] >= 0) {
                    for (int64_t q = head[r]; q >= 0; q = rnext[q])
                        if (pair(out, rnode[q], j) < 0)
                            goto done;
                    head[r] = -1;
                }
                else if (last[r] >= 0 && pair(out, last[r], j) < 0)
                    goto done;
                last[r] = j;
            }
            else {
                if (last[r] >= 0 && pair(out, last[r], j) < 0)
                    goto done;
                rnode[reads] = j, rnext[reads] = head[r], head[r] = reads++;
            }
        }
    }
    rc = 0;
done:
    PyMem_Free(last), PyMem_Free(head), PyMem_Free(epoch_of), PyMem_Free(seen);
    PyMem_Free(slot), PyMem_Free(rnode), PyMem_Free(rnext), PyMem_Free(nreg);
    PyMem_Free(nmode);
    return rc;
}

/* pairs(codes, ends, of_slot, lo, hi, barrier): deps.data_pairs's pairs before
 * the barriers' own, as bytes of int64 (preds, ops), where the hulls of the
 * regions that live accesses touch do not overlap; None where they do (the
 * batch path then infers them). ``barrier``: None, or one byte per node. */
static PyObject *
pairs(PyObject *self, PyObject *args)
{
    PyObject *codes_o, *ends_o, *slot_o, *lo_o, *hi_o, *bar_o;
    if (!PyArg_ParseTuple(args, "OOOOOO", &codes_o, &ends_o, &slot_o, &lo_o, &hi_o, &bar_o))
        return NULL;
    PyObject *codes = NULL, *ends_s = NULL, *out = NULL;
    Py_buffer v[4];
    int got = 0;
    int64_t *ends = NULL, *reg = NULL;
    char *mode = NULL, *used = NULL;
    Pairs p = {0};
    codes = PySequence_Fast(codes_o, "pairs(): codes must be a sequence");
    ends_s = codes ? PySequence_Fast(ends_o, "pairs(): ends must be a sequence") : NULL;
    if (ends_s == NULL)
        goto done;
    if (words(slot_o, &v[got], "of_slot", 1) < 0 || (++got, words(lo_o, &v[got], "lo", 0)) < 0
            || (++got, words(hi_o, &v[got], "hi", 0)) < 0)
        goto done;
    got++;
    int64_t n = PySequence_Fast_GET_SIZE(ends_s), m = PySequence_Fast_GET_SIZE(codes);
    int64_t slots = v[0].len / 8, count = v[1].len / 8;
    const char *barrier = NULL;
    if (bar_o != Py_None) {
        if (PyObject_GetBuffer(bar_o, &v[got], PyBUF_SIMPLE) < 0)
            goto done;
        if (v[got++].len < n) {
            PyErr_SetString(PyExc_ValueError, "pairs(): barrier has fewer entries than nodes");
            goto done;
        }
        barrier = v[got - 1].buf;
    }
    if (v[2].len / 8 != count) {
        PyErr_SetString(PyExc_ValueError, "pairs(): lo and hi differ in length");
        goto done;
    }
    ends = PyMem_Malloc((n + 1) * sizeof(int64_t));
    reg = PyMem_Malloc((m + 1) * sizeof(int64_t));
    mode = PyMem_Malloc(m + 1);
    used = PyMem_Calloc(count + 1, 1);
    if (!ends || !reg || !mode || !used) {
        PyErr_NoMemory();
        goto done;
    }
    PyObject **e = PySequence_Fast_ITEMS(ends_s), **c = PySequence_Fast_ITEMS(codes);
    for (int64_t j = 0; j < n; j++) {
        ends[j] = PyLong_AsLongLong(e[j]);
        if (ends[j] == -1 && PyErr_Occurred())
            goto done;
        if (ends[j] < (j ? ends[j - 1] : 0) || ends[j] > m) {
            PyErr_SetString(PyExc_ValueError, "pairs(): ends out of order");
            goto done;
        }
    }
    const int64_t *of_slot = v[0].buf;
    for (int64_t t = 0; t < m; t++) {
        long long code = PyLong_AsLongLong(c[t]);
        if (code == -1 && PyErr_Occurred())
            goto done;
        int64_t s = code >> 2, r = s >= 0 && s < slots ? of_slot[s] : count;
        if (r >= count) {
            PyErr_SetString(PyExc_ValueError, "pairs(): an access of no region");
            goto done;
        }
        reg[t] = r, mode[t] = (char)(code & 3);
    }
    int overlap = hulls_overlap(n, ends, reg, barrier, v[1].buf, v[2].buf, used, count);
    if (overlap < 0)
        goto done;
    if (overlap) {
        out = Py_NewRef(Py_None);
        goto done;
    }
    if (walk(n, ends, reg, mode, barrier, count, &p) < 0)
        goto done;
    Py_ssize_t k = p.len / 2;
    PyObject *preds = PyBytes_FromStringAndSize(NULL, k * 8);
    PyObject *ops = PyBytes_FromStringAndSize(NULL, k * 8);
    if (preds != NULL && ops != NULL) {
        int64_t *a = (int64_t *)PyBytes_AS_STRING(preds), *b = (int64_t *)PyBytes_AS_STRING(ops);
        for (Py_ssize_t i = 0; i < k; i++)
            a[i] = p.at[2 * i], b[i] = p.at[2 * i + 1];
        out = PyTuple_Pack(2, preds, ops);
    }
    Py_XDECREF(preds);
    Py_XDECREF(ops);
done:
    for (int i = 0; i < got; i++)
        PyBuffer_Release(&v[i]);
    Py_XDECREF(codes);
    Py_XDECREF(ends_s);
    PyMem_Free(ends), PyMem_Free(reg), PyMem_Free(mode), PyMem_Free(used), PyMem_Free(p.at);
    return out;
}

static PyMethodDef methods[] = {
    {"search", search, METH_VARARGS,
     "search(ptr, preds, head): reduction._search's mask of the pairs to keep "
     "(bytes of 0 and 1), from int64 arrays"},
    {"pairs", pairs, METH_VARARGS,
     "pairs(codes, ends, of_slot, lo, hi, barrier): deps.data_pairs's pairs where the "
     "regions touched do not overlap, as bytes of int64 (preds, ops); else None"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "graphtrace._reduce",
    "reduction.py's transitive-reduction search and deps.py's pairs, compiled (optional; "
    "those modules hold the reference).",
    -1, methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC
PyInit__reduce(void)
{
    return PyModule_Create(&module_def);
}
