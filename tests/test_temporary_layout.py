"""Where temporaries lie in the graph's block: they share bytes only when the
graph orders every use of one before every use of the other."""
import numpy as np
from hypothesis import given, settings, strategies as st
from numba import cuda

import graphtrace as gt
from graphtrace.temporary_memory import layout, owned_moves
from helpers import FakeDeviceArray as A, any_kernel
from temp_kernels import add, scale

K = any_kernel()
KB = 1024


def ranges(g):
    total, offsets = layout(g)
    return total, [(o, o + t.nbytes) for o, t in zip(offsets, g.temporaries)]


def test_a_chain_of_temporaries_needs_two_of_them():
    x = A(256)

    @gt.graph
    def f(s, x):
        prev = x
        for _ in range(10):
            t = s.empty(256, np.float32)
            s.launch(K, 1, 1, gt.In(prev), gt.Out(t))
            prev = t
        s.launch(K, 1, 1, gt.In(prev), gt.Out(x))
    total, spans = ranges(f.trace(x))
    assert total == 2 * KB
    assert all(spans[i][0] != spans[i + 1][0] for i in range(9))   # a writer's input lives


def test_temporaries_of_parallel_branches_get_their_own_bytes():
    x, y = A(256), A(256)

    @gt.graph
    def f(s, x, y):
        a, b = s.empty(256, np.float32), s.empty(256, np.float32)
        s.launch(K, 1, 1, gt.In(x), gt.Out(a))
        s.launch(K, 1, 1, gt.In(x), gt.Out(b))       # unordered with the writer of a
        s.launch(K, 1, 1, gt.In(a), gt.Out(y))
        s.launch(K, 1, 1, gt.In(b), gt.Out(x))
    total, ((a0, a1), (b0, b1)) = ranges(f.trace(x, y))
    assert total == 2 * KB and (a1 <= b0 or b1 <= a0)


def test_a_temporary_of_a_loop_body_and_one_used_after_the_loop_share():
    x, flag = A(256), A(1, "int32")

    @gt.graph
    def f(s, x, flag):
        before = s.empty(256, np.float32)
        s.launch(K, 1, 1, gt.In(x), gt.Out(before))
        s.launch(K, 1, 1, gt.In(before), gt.Out(x))
        with s.while_loop(gt.cond(flag), max_iterations=4) as body:
            inside, also = body.empty(256, np.float32), body.empty(256, np.float32)
            body.launch(K, 1, 1, gt.In(x), gt.Out(inside))
            body.launch(K, 1, 1, gt.In(inside), gt.Out(also))
            body.launch(K, 1, 1, gt.In(also), gt.Out(x), gt.Out(flag))
    total, spans = ranges(f.trace(x, flag))
    # the loop node uses both of its temporaries at once: they cannot share;
    # the one used before the loop is done with when the loop starts
    assert total == 2 * KB and spans[1][0] != spans[2][0]


def test_a_temporary_that_nothing_uses_takes_no_room_of_its_own():
    x = A(256)

    @gt.graph
    def f(s, x):
        s.empty(4096, np.float32)
        t = s.empty(256, np.float32)
        s.launch(K, 1, 1, gt.In(x), gt.Out(t))
        s.launch(K, 1, 1, gt.In(t), gt.Out(x))
    assert layout(f.trace(x))[0] == 16 * KB


# --- random programs --------------------------------------------------------------

def reaches(g):
    """Brute force: the positions each top-level node depends on, transitively."""
    pos = {n.index: p for p, n in enumerate(g.nodes)}
    before = []
    for n in g.nodes:
        mine = set()
        for d in n.deps:
            mine |= before[pos[d.index]] | {pos[d.index]}
        before.append(mine)
    return before


def users(g, t):
    return [p for p, n in enumerate(g.nodes) if any(b.base is t for b, _ in n.accesses)]


# one step: (kernel, source, destination); 0 is x, 1 is y, 2.. are temporaries
steps = st.lists(st.tuples(st.sampled_from(["scale", "add"]), st.integers(0, 7),
                           st.integers(1, 7)), min_size=1, max_size=14)


def program(plan):
    """A traced function and its eager twin: ``scale`` writes its destination
    whole, ``add`` adds into it; nothing reads a temporary before it is written."""
    written = {0, 1}
    ops = []
    for kind, src, dst in plan:
        if src not in written or (kind == "add" and dst not in written) or src == dst:
            continue
        ops.append((kind, src, dst))
        written.add(dst)

    def traced(s, x, y):
        arrays = [x, y] + [s.empty(16, np.float32) for _ in range(6)]
        for kind, src, dst in ops:
            if kind == "scale":
                scale[1, 16, s](arrays[src], 2.0, arrays[dst])
            else:
                add[1, 16, s](arrays[src], arrays[dst])

    def eager(x, y):
        arrays = [x, y] + [np.full(16, np.nan, np.float32) for _ in range(6)]
        for kind, src, dst in ops:
            if kind == "scale":
                arrays[dst][:] = np.float32(2.0) * arrays[src]
            else:
                arrays[dst] += arrays[src]
    return traced, eager


@settings(max_examples=60, deadline=None)
@given(steps)
def test_temporaries_share_bytes_only_when_every_use_is_ordered(plan):
    traced, _ = program(plan)
    g = gt.graph(traced).trace(cuda.to_device(np.ones(16, np.float32)),
                               cuda.to_device(np.ones(16, np.float32)))
    _, spans = ranges(g)
    before = reaches(g)
    for i, (lo, hi) in enumerate(spans):
        for j, (lo2, hi2) in enumerate(spans[:i]):
            ui, uj = users(g, g.temporaries[i]), users(g, g.temporaries[j])
            if lo < hi2 and lo2 < hi and ui and uj:
                assert all(set(ui) <= before[q] for q in uj) \
                    or all(set(uj) <= before[q] for q in ui), (i, j, spans)


@settings(max_examples=40, deadline=None)
@given(steps, st.integers(0, 3))
def test_shared_bytes_give_eager_results_in_any_order(plan, seed):
    traced, eager = program(plan)
    xh, yh = np.arange(16, dtype=np.float32), np.ones(16, np.float32)
    x, y = cuda.to_device(xh), cuda.to_device(yh)
    gt.simulate(gt.graph(traced).trace(x, y), seed=seed)
    eager(xh, yh)
    assert np.array_equal(y.copy_to_host(), yh)


# --- larger random graphs, against a brute-force first fit ----------------------

# one step: (temporaries and arrays read, the one written); 0 and 1 are x and y,
# 2.. are temporaries of the sizes drawn; reads of one value run in parallel
wide_steps = st.lists(st.tuples(st.lists(st.integers(0, 25), max_size=3), st.integers(0, 25)),
                      min_size=1, max_size=60)
sizes = st.lists(st.sampled_from([1, 64, 65, 200, 640]), min_size=24, max_size=24)


def wide_program(plan, counts):
    x, y = A(64), A(64)

    @gt.graph
    def f(s, x, y):
        arrays = [x, y] + [s.empty(n, np.float32) for n in counts]
        written = {0, 1}
        for reads, dst in plan:
            reads = [r for r in dict.fromkeys(reads) if r in written and r != dst]
            s.launch(K, 1, 1, *(gt.In(arrays[r]) for r in reads), gt.Out(arrays[dst]))
            written.add(dst)
    return f.trace(x, y)


def first_fit(g):
    """The layout's specification, step by step: in the order of their first
    users, each temporary at the lowest address clear of those placed that may
    be in use with it."""
    before = reaches(g)
    uses = [users(g, t) for t in g.temporaries]
    ordered = [(uses[i][:1] or [-1], i) for i in range(len(uses))]
    size = [-(-t.nbytes // 256) * 256 for t in g.temporaries]
    offsets, total, placed = [0] * len(uses), 0, []
    for _, i in sorted(ordered):
        if uses[i]:
            clash = [j for j in placed
                     if not all(set(uses[j]) <= before[q] for q in uses[i])]
            spans = [(offsets[j], offsets[j] + size[j]) for j in clash]
            offsets[i] = min(p for p in [0] + [hi for _, hi in spans]
                             if all(p + size[i] <= lo or hi <= p for lo, hi in spans))
            placed.append(i)
        total = max(total, offsets[i] + size[i])
    return total, offsets


@settings(max_examples=60, deadline=None)
@given(wide_steps, sizes)
def test_temporaries_in_use_at_once_never_share_bytes_in_larger_graphs(plan, counts):
    g = wide_program(plan, counts)
    _, spans = ranges(g)
    before = reaches(g)
    uses = [users(g, t) for t in g.temporaries]
    for i, (lo, hi) in enumerate(spans):
        for j, (lo2, hi2) in enumerate(spans[:i]):
            if lo < hi2 and lo2 < hi and uses[i] and uses[j]:
                assert all(set(uses[i]) <= before[q] for q in uses[j]) \
                    or all(set(uses[j]) <= before[q] for q in uses[i]), (i, j, spans)


@settings(max_examples=60, deadline=None)
@given(wide_steps, sizes)
def test_the_layout_is_the_first_fit_of_its_specification(plan, counts):
    g = wide_program(plan, counts)
    assert layout(g) == first_fit(g)


def test_activations_kept_for_a_backward_pass_each_get_their_bytes():
    """A forward pass keeping every activation, read back in reverse: all k
    are in use at once, and the gradient beside them."""
    x, k = A(64), 300

    @gt.graph
    def f(s, x):
        acts, prev = [], x
        for _ in range(k):
            t = s.empty(64, np.float32)
            s.launch(K, 1, 1, gt.In(prev), gt.Out(t))
            acts.append(t)
            prev = t
        grad = s.empty(64, np.float32)
        s.launch(K, 1, 1, gt.Out(grad))
        for t in reversed(acts):
            s.launch(K, 1, 1, gt.In(t), gt.InOut(grad))
        s.launch(K, 1, 1, gt.In(grad), gt.Out(x))
    total, spans = ranges(f.trace(x))
    assert total == (k + 1) * 256 and len({lo for lo, _ in spans}) == k + 1


def test_a_long_chain_of_temporaries_still_needs_two_of_them():
    x = A(256)

    @gt.graph
    def f(s, x):
        prev = x
        for _ in range(100):
            t = s.empty(256, np.float32)
            s.launch(K, 1, 1, gt.In(prev), gt.Out(t))
            prev = t
        s.launch(K, 1, 1, gt.In(prev), gt.Out(x))
    assert layout(f.trace(x))[0] == 2 * KB


def test_temporaries_placed_on_no_device_share_the_block_of_the_graphs_own():
    x = A(256)

    @gt.graph
    def f(s, x):
        prev = x
        for _ in range(4):
            t = s.empty(256, np.float32)
            s.launch(K, 1, 1, gt.In(prev), gt.Out(t))
            prev = t
    g = f.trace(x)
    g.temporaries[0].device, g.temporaries[1].device = 0, None   # as placement leaves them
    asked = []
    moves = owned_moves(g, lambda n, device: asked.append((n, device)) or 1 << 20, home=0)
    assert asked == [(2 * KB, None)] and len(moves) == 4
    g.temporaries[1].device = 1                       # on another GPU: a block there
    asked.clear()
    owned_moves(g, lambda n, device: asked.append((n, device)) or 1 << 20, home=0)
    assert sorted(asked, key=str) == sorted([(2 * KB, None), (KB, 1)], key=str)


def test_the_simulators_temporaries_live_as_long_as_their_values(monkeypatch):
    """``gt.simulate`` places a graph's temporaries in host memory that must outlive
    every kernel of the run: freed early, kernels wrote into freed memory (flaky
    intent errors, then a crash in the collector)."""
    import gc
    import weakref

    from graphtrace import sim
    made = []
    host_memory = sim.host_memory

    def recorded(nbytes):
        block, base = host_memory(nbytes)
        made.append(weakref.ref(block))
        return block, base
    monkeypatch.setattr(sim, "host_memory", recorded)
    x = A(256)

    @gt.graph
    def f(s, x):
        t = s.empty(256, np.float32)
        s.launch(K, 1, 1, gt.In(x), gt.Out(t))
        s.launch(K, 1, 1, gt.In(t), gt.Out(x))
    value_of = sim._owned(f.trace(x))
    gc.collect()
    assert made and all(r() is not None for r in made)
    del value_of
    gc.collect()
    assert all(r() is None for r in made)
