"""Random programs for differential testing: run eagerly, and as graphs.

A *case* is a program (ops over views of arrays), the *route* by which its
graph function reaches its arrays, and a few calls, each with its own
assignment of arrays to *slots*. Slots are the graph function's parameters
(``bufs[0..2]``) and the places it reaches outside them: global names, items
of a global list or dict, closure cells, a method's ``self`` attributes.
Between calls the places are reassigned (a fresh array, another slot's
memory, a new object over the same memory, nothing), so a call must see the
arrays its places hold now.

Families of programs:

- ``views``: numba kernels over 1-D and 2-D views (overlapping, disjoint,
  strided) of the parameters, with copies and memsets;
- ``indirect``: as ``views``, with one kernel whose writes reach a parameter
  indirectly (a device function returning one of its arrays or a row of
  one, iteration over an array's rows, tuples of arrays);
- ``globals``: ``views`` ops on arrays reached by global or closure name,
  through helper functions and nested graph functions;
- ``unset``: ``globals`` where a place holds no array (None) at the first
  call and an array later;
- ``methods``: a ``@gt.graph`` method using its instance's array attributes.

Data are small integers in float32, so results are exact and compared bit
for bit. The generator takes its choices from a ``Draws`` (hypothesis for
the tests, ``random.Random`` for tools/fuzz.py).
"""
from __future__ import annotations

import dataclasses
import traceback

import numpy as np
import graphtrace as gt  # first: numba then builds simulator kernels where there is no GPU
from hypothesis import strategies as st
from numba import cuda

from fuzz_kernels import DIRECT, INDIRECT, SPECS

N_PARAMS, ROWS, COLS = 3, 4, 6
SIZE = ROWS * COLS
ORDERS = 3     # random topological orders per traced graph (replays on a GPU)
MAX_CALLS = 4  # calls of the graph function per case


# --- views, and running a program ---------------------------------------------
def make_view(arr, v):
    """The device array view ``v = (slot, start, shape, strides)`` (in elements) of ``arr``."""
    _, start, shape, strides = v
    if len(shape) == 1:
        return arr[start:start + (shape[0] - 1) * strides[0] + 1:strides[0]]
    r0, c0 = divmod(start, COLS)
    return arr.reshape(ROWS, COLS)[r0:r0 + shape[0],
                                   c0:c0 + (shape[1] - 1) * strides[1] + 1:strides[1]]


def run_op(s, arrays, op):
    """Issue one op on the proxy stream ``s``, or run it eagerly (``s`` is None).
    An op on a slot that holds no array is left out, as user code would test."""
    kind, views, extra = op
    if any(arrays[v[0]] is None for v in views):
        return
    vs = [make_view(arrays[v[0]], v) for v in views]
    if kind == "copy":
        if s is None:
            vs[0].copy_to_device(vs[1])
        else:
            s.copy(vs[0], vs[1])
    elif kind == "memset":
        if s is None:
            vs[0][:] = extra[0]
        else:
            s.memset(vs[0], extra[0])
    else:
        spec = SPECS[kind]
        shape = views[0][2]
        n = shape[1] if spec.threads == "cols" else shape[0]
        launch = spec.kernel[1, n] if s is None else spec.kernel[1, n, s]
        launch(*vs, *extra)


def run_ops(s, arrays, prog):
    for op in prog:
        run_op(s, arrays, op)


# --- routes: how a graph function reaches the arrays of its slots -------------
G0 = G1 = None
GLIST = [None, None]
GDICT = {"a": None}
GLOBAL_PLACES = ("G0", "G1", "GLIST[0]", "GLIST[1]", "GDICT['a']")


def global_arrays():
    return [G0, G1, *GLIST, GDICT["a"]]


def run_with_globals(s, bufs, prog):
    run_ops(s, [*bufs, *global_arrays()], prog)


@gt.graph
def nested_direct(s, bufs, prog):
    run_ops(s, [*bufs, G0, G1, *GLIST, GDICT["a"]], prog)


@gt.graph
def nested_via_helper(s, bufs, prog):
    run_with_globals(s, bufs, prog)


def put_global(i, array, replace):
    """Assign global place ``i``; ``replace``: rebind the list or dict name to a
    new container rather than assign an item."""
    global G0, G1, GLIST, GDICT
    if i == 0:
        G0 = array
    elif i == 1:
        G1 = array
    elif i < 4:
        if replace:
            GLIST = list(GLIST)
        GLIST[i - 2] = array
    else:
        if replace:
            GDICT = dict(GDICT)
        GDICT["a"] = array


def params_graph(prog):
    """A graph function for ``prog`` on its parameters alone."""
    @gt.graph
    def f(s, bufs):
        run_ops(s, bufs, prog)
    return f, None


def global_graph(route, prog):
    """A graph function for ``prog`` reaching the global places by ``route``."""
    if route == "global":
        def f(s, bufs):
            run_ops(s, [*bufs, G0, G1, *GLIST, GDICT["a"]], prog)
    elif route == "helper":
        def f(s, bufs):
            run_ops(s, [*bufs, *global_arrays()], prog)
    elif route == "helper_of_helper":
        def f(s, bufs):
            run_with_globals(s, bufs, prog)
    elif route == "nested":
        def f(s, bufs):
            nested_direct(s, bufs, prog)
    else:
        def f(s, bufs):
            nested_via_helper(s, bufs, prog)
    return gt.graph(f), put_global


def closure_graph(prog):
    """A graph function for ``prog`` reaching two closure cells, and their setter."""
    c0 = c1 = None

    @gt.graph
    def f(s, bufs):
        run_ops(s, [*bufs, c0, c1], prog)

    def put(i, array, replace):
        nonlocal c0, c1
        if i == 0:
            c0 = array
        else:
            c1 = array
    return f, put


def method_graph(route, prog):
    """A model object's graph method; a class per case, so that cases share no cache."""
    class Model:
        def __init__(self):
            self.a = self.b = None
            self.items, self.table = [None], {"k": None}

        @gt.graph
        def step(self, s, bufs):
            run_ops(s, [*bufs, self.a, self.b, *self.items, self.table["k"]], prog)

        @gt.graph
        def outer(self, s, bufs):
            self.step(s, bufs)

    m = Model()

    def put(i, array, replace):
        if i < 2:
            setattr(m, "ab"[i], array)
        elif i == 2:
            if replace:
                m.items = list(m.items)
            m.items[0] = array
        else:
            if replace:
                m.table = dict(m.table)
            m.table["k"] = array
    return (m.step if route == "method" else m.outer), put


ROUTES = {   # route -> (its places, how to build (graph function, setter))
    "params": ((), params_graph),
    **{r: (GLOBAL_PLACES, lambda prog, r=r: global_graph(r, prog))
       for r in ("global", "helper", "helper_of_helper", "nested", "nested_helper")},
    "closure": (("c0", "c1"), closure_graph),
    **{r: (("self.a", "self.b", "self.items[0]", "self.table['k']"),
           lambda prog, r=r: method_graph(r, prog)) for r in ("method", "nested_method")},
}
FAMILIES = {
    "views": ("params",),
    "indirect": ("params",),
    "globals": ("global", "helper", "helper_of_helper", "nested", "nested_helper", "closure"),
    "unset": ("global", "helper", "helper_of_helper", "nested", "nested_helper", "closure"),
    "methods": ("method", "nested_method"),
}


# --- generating cases ---------------------------------------------------------
class Draws:
    """The generator's choices: from hypothesis's ``draw`` (so failures shrink),
    or from a ``random.Random``."""

    def __init__(self, draw=None, rng=None):
        self.draw, self.rng = draw, rng

    def int(self, lo, hi):
        return self.draw(st.integers(lo, hi)) if self.draw else self.rng.randint(lo, hi)

    def pick(self, seq):
        return seq[self.int(0, len(seq) - 1)]


@dataclasses.dataclass(frozen=True)
class Case:
    family: str
    route: str
    prog: tuple     # ops: (kind, views, extra)
    calls: tuple    # per call: (slot -> (memory, object) or None, replace containers)
    seed: int       # data

    @property
    def slots(self):
        return [f"bufs[{i}]" for i in range(N_PARAMS)] + list(ROUTES[self.route][0])


def memory(mapping, slot):
    """The memory a slot holds; a slot with no array counts as memory of its
    own, which it may hold later."""
    return ("slot", slot) if mapping[slot] is None else mapping[slot][0]


def elements(v, mapping):
    """The memory elements of view ``v`` when slots hold ``mapping``."""
    slot, start, shape, strides = v
    idx = np.indices(shape).reshape(len(shape), -1)
    return {(memory(mapping, slot), int(e)) for e in start + np.dot(strides, idx)}


def well_formed(op, mapping) -> bool:
    """Each view an op writes equals each of its other views or is disjoint from
    it (all disjoint for a copy), so that eager results do not depend on the
    order of threads."""
    kind, views, _ = op
    roles = SPECS[kind].roles
    for i, v in enumerate(views):
        if "w" not in roles[i]:
            continue
        for j, u in enumerate(views):
            if j == i:
                continue
            same_view = v[1:] == u[1:] and memory(mapping, v[0]) == memory(mapping, u[0])
            if (kind == "copy" or not same_view) and elements(v, mapping) & elements(u, mapping):
                return False
    return True


def draw_view(d, n_slots, shape, contiguous):
    slot = d.int(0, n_slots - 1)
    if len(shape) == 1:
        step = 1 if contiguous else d.pick((1, 1, 2, 3))
        return (slot, d.int(0, SIZE - (shape[0] - 1) * step - 1), shape, (step,))
    nr, nc = shape
    step = d.pick((1, 1, 2)) if 2 * nc - 1 <= COLS else 1
    r0, c0 = d.int(0, ROWS - nr), d.int(0, COLS - (nc - 1) * step - 1)
    return (slot, r0 * COLS + c0, shape, (COLS, step))


def in_place(op):
    """``op`` with one view everywhere (always well formed); a copy becomes an
    increment, since graphtrace refuses overlapping copies."""
    kind, views, extra = op
    return ("increment", views[:1], ()) if kind == "copy" else (kind, views[:1] * len(views), extra)


def draw_op(d, kinds, n_slots, mapping):
    kind = d.pick(kinds)
    spec = SPECS[kind]
    shape = (d.int(1, 8),) if spec.ndim == 1 else (d.int(1, ROWS), d.int(1, COLS))
    extra = (d.int(0, 9),) if kind == "memset" else tuple(d.int(0, 1) for _ in range(spec.flags))
    for _ in range(8):
        op = (kind, tuple(draw_view(d, n_slots, shape, spec.kernel is None) for _ in spec.roles),
              extra)
        if well_formed(op, mapping):
            return op
    return in_place(op)


def fresh(state):
    """A new memory id (a new allocation)."""
    state["memories"] += 1
    return (state["memories"] - 1, 0)


def new_object(state, memory):
    """A new array object over ``memory`` (a view of all of it)."""
    state["objects"] += 1
    return (memory, state["objects"])


def change(d, prog, mapping, state):
    """Reassign one or two slots (mostly places, where there are any), keeping
    every op well formed: where a choice would not, the slot gets fresh memory.
    Only places may hold nothing."""
    first = N_PARAMS if len(mapping) > N_PARAMS and d.int(0, 2) else 0
    for _ in range(d.int(1, 2)):
        k, j = d.int(first, len(mapping) - 1), d.int(0, len(mapping) - 1)
        how = d.pick(("fresh", "alias", "object", "swap", "none"))
        before = list(mapping)
        if how == "fresh" or how in ("object", "none") and mapping[k] is None:
            mapping[k] = fresh(state)
        elif how == "alias":
            mapping[k] = mapping[j] if mapping[j] is None or d.int(0, 1) else \
                new_object(state, mapping[j][0])
        elif how == "object":
            mapping[k] = new_object(state, mapping[k][0])
        elif how == "swap":
            mapping[k], mapping[j] = mapping[j], mapping[k]
        else:
            mapping[k] = None
        if not all(well_formed(op, mapping) for op in prog):
            mapping[:] = before
            mapping[k] = fresh(state)
            if how == "swap":
                mapping[j] = fresh(state)
        for p in range(N_PARAMS):
            if mapping[p] is None:
                mapping[p] = fresh(state)


def gen_case(d: Draws, family: str, gpu: bool = False) -> Case:
    route = d.pick(FAMILIES[family])
    n_places = len(ROUTES[route][0])
    state = {"memories": N_PARAMS, "objects": 0}
    mapping = [(m, 0) for m in range(N_PARAMS)]
    for _ in range(n_places):   # a place holds fresh memory, or a slot's before it
        j = d.int(0, len(mapping) + 1)
        mapping.append(fresh(state) if j >= len(mapping) else
                       mapping[j] if d.int(0, 1) else new_object(state, mapping[j][0]))
    # ``unset``, and half the ``methods``: a place holds nothing at the first call,
    # an op uses it, and it holds an array from the second call on
    unset = N_PARAMS + d.int(0, n_places - 1) \
        if family == "unset" or family == "methods" and d.int(0, 1) else None
    if unset is not None:
        mapping[unset] = None
    n_ops = d.int(1, 8)
    special = d.int(0, n_ops - 1)   # the op with an indirect write, or on the unset place
    prog = []
    for i in range(n_ops):
        if i != special:
            op = draw_op(d, DIRECT, len(mapping), mapping)
        elif family == "indirect":
            op = draw_op(d, [k for k in INDIRECT if SPECS[k].gpu or not gpu],
                         len(mapping), mapping)
        else:
            op = draw_op(d, DIRECT, len(mapping), mapping)
            if unset is not None:
                op = (op[0], ((unset,) + op[1][0][1:],) + op[1][1:], op[2])
                op = op if well_formed(op, mapping) else in_place(op)
        prog.append(op)
    prog = tuple(prog)
    calls = [(tuple(mapping), False)]
    for i in range(d.int(1, MAX_CALLS - 1)):
        mapping = list(mapping)
        if unset is not None and i == 0:
            mapping[unset] = fresh(state)
        elif d.int(0, 3):   # else: the very same arguments again
            change(d, prog, mapping, state)
        calls.append((tuple(mapping), bool(n_places and d.int(0, 1))))
    return Case(family, route, prog, tuple(calls), d.int(0, 2**32 - 1))


@st.composite
def cases(draw, family, gpu=False):
    return gen_case(Draws(draw=draw), family, gpu)


# --- running cases ------------------------------------------------------------
@dataclasses.dataclass
class Outcome:
    """What running a case found: counts, and failures as (what, where, text)."""
    orders: int = 0    # random orders the traced graph ran in (simulator only)
    calls: int = 0     # calls of the graph function that ran (on a GPU: with replays)
    rebinds: int = 0   # later calls with other arrays in some slot
    traces: int = 0
    failures: list = dataclasses.field(default_factory=list)

    def count(self, what) -> int:
        return sum(f[0] == what for f in self.failures)


class World:
    """Every memory a case allocates, with its initial data, and the array
    objects over it."""

    def __init__(self, seed):
        self.seed = seed
        self.init, self.dev, self.objs, self.eager = {}, {}, {}, {}

    def array(self, held):
        """The array object a slot holds: ``(memory, object)``, or None."""
        if held is None:
            return None
        mem, obj = held
        if mem not in self.dev:
            rng = np.random.default_rng([self.seed, mem])
            self.init[mem] = rng.integers(0, 10, SIZE).astype(np.float32)
            self.dev[mem] = cuda.to_device(self.init[mem])
        if obj and held not in self.objs:
            self.objs[held] = self.dev[mem][:]   # another object over the same memory
        return self.objs[held] if obj else self.dev[mem]

    def reset(self):
        for mem, a in self.dev.items():
            a.copy_to_device(self.init[mem])

    def expected(self, prog, mapping) -> dict:
        """Every memory after running ``prog`` eagerly on copies of the data."""
        key = tuple(memory(mapping, s) for s in range(len(mapping)))
        if key not in self.eager:
            copies = {mem: cuda.to_device(self.init[mem]) for mem in self.dev}
            run_ops(None, [None if h is None else copies[h[0]] for h in mapping], prog)
            self.eager[key] = {mem: c.copy_to_host() for mem, c in copies.items()}
        return self.eager[key]

    def differing(self, expected) -> list:
        """The memories whose bits differ from ``expected`` (untouched: initial)."""
        return [mem for mem, a in self.dev.items()
                if not np.array_equal(a.copy_to_host().view(np.uint32),
                                      expected.get(mem, self.init[mem]).view(np.uint32))]


def _error(out, where, e):
    what = "intent" if isinstance(e, gt.SimulationError) else f"error {type(e).__name__}"
    out.failures.append((what, where, "".join(traceback.format_exception(e)[-6:])))


def _simulate_orders(out, world, g, expected, orders):
    """Run the traced graph in random orders: a write graphtrace missed is an
    ``intent`` failure, and the order still runs (unchecked) for its data."""
    for seed in range(orders):
        world.reset()
        try:
            gt.simulate(g, seed=seed)
        except gt.SimulationError as e:
            _error(out, f"order {seed}", e)
            world.reset()
            gt.simulate(g, seed=seed, check_intents=False)
        out.orders += 1
        bad = world.differing(expected)
        if bad:
            out.failures.append(("mismatch", f"order {seed}", f"memories {bad} differ"))


def run_case(case: Case, backend: str = "sim", orders: int = ORDERS) -> Outcome:
    """Trace the case's graph function, check it and run it in random orders
    (on a GPU: replay it), then call it once per entry of ``case.calls``; every
    run must leave every memory as the eager run does."""
    out, world = Outcome(), World(case.seed)
    fn, put = ROUTES[case.route][1](case.prog)
    for c, (mapping, replace) in enumerate(case.calls):
        arrays = [world.array(h) for h in mapping]
        bufs = arrays[:N_PARAMS]
        for i, a in enumerate(arrays[N_PARAMS:]):
            put(i, a, replace)
        expected = world.expected(case.prog, mapping)
        if c and mapping != case.calls[c - 1][0]:
            out.rebinds += 1
        if c == 0:
            try:
                g = fn.trace(bufs)
            except Exception as e:
                _error(out, "trace", e)
                return out
            out.failures += [("race", "trace", str(r)) for r in gt.check(g)]
            if backend == "sim":
                _simulate_orders(out, world, g, expected, orders)
        for _ in range(orders if c == 0 and backend == "gpu" else 1):
            world.reset()
            try:
                fn(bufs, backend=backend)
                if backend == "gpu":
                    cuda.synchronize()
            except Exception as e:
                _error(out, f"call {c}", e)
                continue
            out.calls += 1
            bad = world.differing(expected)
            if bad:
                out.failures.append(("mismatch", f"call {c}", f"memories {bad} differ"))
    out.traces = fn.cache_info().misses
    return out


def _view_str(name, v) -> str:
    _, start, shape, strides = v
    if len(shape) == 1:
        return f"{name}[{start}:{start + (shape[0] - 1) * strides[0] + 1}:{strides[0]}]"
    r0, c0 = divmod(start, COLS)
    return (f"{name}.reshape({ROWS}, {COLS})[{r0}:{r0 + shape[0]}, "
            f"{c0}:{c0 + (shape[1] - 1) * strides[1] + 1}:{strides[1]}]")


def describe(case: Case, out: Outcome | None = None) -> str:
    """The case as text (ops, what each slot holds per call) and its failures."""
    names = case.slots
    lines = [f"{case.family} program, route {case.route}, data seed {case.seed}:"]
    for kind, views, extra in case.prog:
        args = [_view_str(names[v[0]], v) for v in views] + [str(x) for x in extra]
        lines.append(f"  {kind}({', '.join(args)})")
    for c, (mapping, replace) in enumerate(case.calls):
        held = ", ".join(f"{n}={'None' if h is None else f'm{h[0]}' + (f'/{h[1]}' if h[1] else '')}"
                         for n, h in zip(names, mapping))
        lines.append(f"  call {c}{' (new containers)' if replace else ''}: {held}")
    for what, where, text in (out.failures if out else []):
        lines.append(f"{what} at {where}: {text.rstrip()}")
    return "\n".join(lines)
