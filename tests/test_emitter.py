"""The compiled emitter (``_emitter.c``) adds the nodes the Python loop adds
through ``cuda.bindings``: the same calls of ``cuGraphAddKernelNode`` (graph,
dependencies, function, grid, block, shared memory, argument words), in the
same order, the same hand-backs to ``emit_node`` and the special launches,
and the same errors. Without a GPU both go to a stand-in for the driver: the
compiled one through a C function pointer, as it calls the driver's."""
import contextlib
import ctypes
import itertools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import graphtrace as gt
from graphtrace import _compiled, emit as _emit
from graphtrace.errors import EmitError
from graphtrace.ops import _driver_nodes as dn, _launch
from graphtrace.ops.kernel import KERNEL, Adapter
from helpers import FakeDeviceArray as A, line_of

BUILT = _compiled.emitter()
pytestmark = pytest.mark.skipif(
    BUILT is None, reason="graphtrace._emitter is not built (no C compiler at install; "
                          "tools/build_speedups.py builds it in a checkout) or "
                          "GRAPHTRACE_PURE_PYTHON is set")

WORDS = 2   # every kernel here takes two 8-byte words
BEFORE = BUILT.pointers() if BUILT is not None else None   # the driver's, or none yet


class Params(ctypes.Structure):
    """The driver's CUDA_KERNEL_NODE_PARAMS (CUDA 12), as _emitter.c declares it."""
    _fields_ = [("func", ctypes.c_uint64), ("grid", ctypes.c_uint * 3),
                ("block", ctypes.c_uint * 3), ("shared_mem", ctypes.c_uint),
                ("kernel_params", ctypes.POINTER(ctypes.c_void_p)), ("extra", ctypes.c_void_p),
                ("kern", ctypes.c_void_p), ("ctx", ctypes.c_void_p)]


ADD = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ctypes.c_uint64), ctypes.c_uint64,
                       ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t, ctypes.POINTER(Params))


class Kern:
    def __init__(self, handle):
        self.handle = handle


class Fake(Adapter):
    """A kernel whose packing is two int64 words (an array's address, a number)."""

    def __init__(self, name, handle, is_function=False, needs_cooperative=False,
                 refuse=None):
        super().__init__(None, name)
        self.kern, self.handle_is_function = Kern(handle), is_function
        self.needs_cooperative, self.refuse = needs_cooperative, refuse

    def compile(self, args):
        return self.kern, ("meta", self.name)

    def pack(self, meta, args, value_of):
        words = [value_of(a) for a in args]
        if self.refuse is not None and self.refuse in words:
            raise ValueError(f"cannot pack {self.refuse:#x}")
        return [np.int64(w) for w in words]

    def compiled_cooperative(self, meta):
        return self.needs_cooperative


def _word(v) -> int:
    ptr = getattr(v, "ptr", None)
    return ptr if ptr is not None else int(v * 1000) if type(v) is float else int(v)


class Log:
    """What the stand-in driver saw, and the handles it gave (1000, 1001, ...)."""

    def __init__(self, fail=None):
        self.calls, self.fail, self.handles = [], fail, itertools.count(1000)

    def kernel(self, graph, deps, p: Params):
        words = tuple(ctypes.c_int64.from_address(p.kernel_params[i]).value
                      for i in range(WORDS))
        if self.fail is not None and self.fail in words:
            return None
        h = next(self.handles)
        self.calls.append(("kernel", h, graph, tuple(deps), p.func, tuple(p.grid),
                           tuple(p.block), p.shared_mem, words, p.extra, p.kern, p.ctx))
        return h


class Bindings:
    """cuda.bindings' driver with cuGraphAddKernelNode going to a Log."""

    def __init__(self, real, log):
        self.real, self.log = real, log

    def __getattr__(self, name):
        return getattr(self.real, name)

    def cuGraphAddKernelNode(self, graph, deps, n, params):
        assert n == len(deps)
        h = self.log.kernel(int(graph), [int(d) for d in deps],
                            Params.from_address(params.getPtr()))
        if h is None:
            return (self.real.CUresult.CUDA_ERROR_INVALID_VALUE, None)
        return (self.real.CUresult.CUDA_SUCCESS, self.real.CUgraphNode(h))


class Definition:
    handle = 77


@pytest.fixture
def stand_in(monkeypatch):
    """``emit(graph, compiled, fail=None)``: the Log of emitting ``graph``'s
    recording, by the compiled emitter or the Python loop, and the context."""
    import cuda.core.graph
    driver = dn._driver()
    monkeypatch.setenv("GRAPHTRACE_VERIFY", "0")   # verifying makes the Nodes: no recording
    monkeypatch.setattr(cuda.core.graph, "GraphDefinition", Definition)
    monkeypatch.setattr(dn.KernelNodes, "_function",
                        lambda self, k: driver.CUfunction(k.handle + 1))
    monkeypatch.setattr(_launch, "check_co_resident", lambda kern, a: None)
    logs = []
    monkeypatch.setattr(_launch, "allow_dynamic_shared",
                        lambda kern, shared, function: logs[-1].calls.append(("opt in", shared)))
    monkeypatch.setattr(_launch, "set_node_attributes",
                        lambda h, a: logs[-1].calls.append(("attributes", int(h))))

    def emit_node(self, node, preds, definition=None):
        h = next(logs[-1].handles)
        logs[-1].calls.append(("node", h, node.index, tuple(int(p) for p in preds)))
        self._handles[node.index] = self._nodes[node.index] = driver.CUgraphNode(h)
    monkeypatch.setattr(_emit.GpuContext, "emit_node", emit_node)

    keep = []

    def emit(graph, compiled, fail=None):
        log = Log(fail)
        logs.append(log)

        def add(node, g, deps, n, params):
            h = log.kernel(g, [deps[i] for i in range(n)], params.contents)
            if h is None:
                return 1   # CUDA_ERROR_INVALID_VALUE
            node[0] = h
            return 0
        fn = ADD(add)
        keep.append(fn)
        BUILT.configure(ctypes.cast(fn, ctypes.c_void_p).value, driver.CUgraphNode, KERNEL,
                        _launch.DEFAULT_SHARED)
        monkeypatch.setitem(dn._compiled, "module", BUILT)
        was = dn.use_compiled(compiled)
        try:
            gpu = _emit.GpuContext(_word)
            if not compiled:
                gpu.kernel_nodes.driver = Bindings(driver, log)
            gpu.packings = {}
            gpu.emit_region(graph, gpu.definition)
        finally:
            dn.use_compiled(was)
        return log, gpu
    with driver_functions_kept():
        yield emit


@contextlib.contextmanager
def driver_functions_kept():
    """The driver functions the emitter was configured with, given back after a
    test points it at stand-ins (graphs built before may still call it)."""
    add, set_params, set_exec = BUILT.pointers()
    try:
        yield
    finally:
        BUILT.configure(add, dn._driver().CUgraphNode, KERNEL, _launch.DEFAULT_SHARED)
        BUILT.configure_set(set_params, set_exec)


KERNELS = [Fake("a", 10), Fake("b", 20, is_function=True), Fake("c", 30),
           Fake("coop", 40, needs_cooperative=True)]

STEPS = st.lists(st.tuples(st.integers(0, len(KERNELS) - 1),
                           st.lists(st.integers(0, 6), min_size=2, max_size=2),
                           st.integers(0, 9)), max_size=30)


def _program(steps):
    """Launches of ``steps``: (kernel, argument picks, how), plain or with shared
    memory, cooperative, a cluster, on a forked stream, and between them
    memsets, a loop and a host callback (nodes the Python loop emits)."""
    def f(s, x, y, z):
        pool = [lambda: x, lambda: y, lambda: z, lambda: x[0:8], lambda: y[8:16],
                lambda: 2.0, lambda: 7]
        other = s.fork()
        same = [x, 3]   # one argument tuple for several launches: packed once
        for k, picks, how in steps:
            kern = KERNELS[k]
            args = [pool[p]() for p in picks]
            extra = {"cooperative": True} if kern.needs_cooperative else {}
            if how == 0:
                s.launch(kern, 1, 32, *args, **extra)
            elif how == 1:
                other.launch(kern, (2, 3), (32, 2), *args, **extra)
            elif how == 2:
                s.launch(kern, 4, 64, *args, shared_mem=1024, **extra)
            elif how == 3:
                s.launch(kern, 1, 32, *args, shared_mem=64 * 1024, **extra)
            elif how == 4:
                s.launch(kern, 1, 32, *args, cooperative=True)
            elif how == 5:
                s.launch(kern, 2, 32, *args, cluster=(2, 1, 1), **extra)
            elif how == 6:
                s.memset(args[0] if hasattr(args[0], "shape") else z, 0)
            elif how == 7:
                with s.while_loop(gt.cond(z[0:1]) > 0, max_iterations=2) as body:
                    body.launch(kern, 1, 32, *args, **extra)
            elif how == 8:
                s.launch(kern, 1, 32, *same, **extra)
            else:
                s.launch(kern, 1, 32, *same, **extra)
                other.launch(kern, 1, 32, *same, **extra)
        s.join(other)
    return gt.graph(f)


def _state(gpu):
    state = {i if type(i) is int else i[0]:   # a kernel's (kern, meta); the last
             (id(v[0]), v[1]) if type(i) is int else int(v)   # cooperative node
             for i, v in gpu.state.items()}
    return state, {i: int(h) for i, h in gpu._handles.items()}


def _both(stand_in, trace):
    """What each emitter did with a graph ``trace()`` gives (traced for each: an
    emission makes some Nodes of the recording)."""
    out = []
    for compiled in (True, False):
        graph = trace()
        assert graph.recording() is not None   # emitted from what the trace recorded
        log, gpu = stand_in(graph, compiled)
        out.append((log.calls, _state(gpu)))
    return out


def test_the_parameter_layout_is_cuda_bindings_own():
    driver = dn._driver()
    p = driver.CUDA_KERNEL_NODE_PARAMS()
    p.func = driver.CUfunction(0x1234)
    p.gridDimX, p.gridDimY, p.gridDimZ = 1, 2, 3
    p.blockDimX, p.blockDimY, p.blockDimZ = 4, 5, 6
    p.sharedMemBytes = 7
    p.kernelParams = 0x5678
    p.kern = driver.CUkernel(0x9ABC)
    p.ctx = driver.CUcontext(0xDEF0)
    q = Params.from_address(p.getPtr())
    assert (q.func, tuple(q.grid), tuple(q.block), q.shared_mem) == \
        (0x1234, (1, 2, 3), (4, 5, 6), 7)
    assert ctypes.cast(q.kernel_params, ctypes.c_void_p).value == 0x5678
    assert (q.kern, q.ctx, q.extra) == (0x9ABC, 0xDEF0, None)
    assert ctypes.sizeof(Params) == 72


# the fixture only patches; each emission makes its own Log and context
@settings(max_examples=120, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(STEPS)
def test_both_emitters_add_the_same_nodes(stand_in, steps):
    arrays = A(64), A(64), A(64)
    compiled, python = _both(stand_in, lambda: _program(steps).trace(*arrays))
    assert compiled == python
    launches = [n for n in _program(steps).trace(*arrays).nodes if n.kind == "kernel"]
    assert sum(c[0] == "kernel" for c in compiled[0]) == len(launches)   # each added


def test_a_node_after_more_predecessors_than_the_stack_holds(stand_in):
    @gt.graph
    def f(s, x, y):
        forks = [s.fork() for _ in range(20)]
        for i, t in enumerate(forks):
            t.launch(KERNELS[0], 1, 32, x[8 * i:8 * i + 8], 1)
        s.join(*forks)
        s.launch(KERNELS[2], 1, 32, x, y)
    arrays = A(160), A(8)
    compiled, python = _both(stand_in, lambda: f.trace(*arrays))
    assert compiled == python
    assert len(compiled[0][-1][3]) == 20


def test_a_failed_driver_call_names_the_users_line(stand_in):
    x, y = A(64), A(64)

    @gt.graph
    def f(s, x, y):
        s.launch(KERNELS[0], 1, 32, x, 1)
        s.launch(KERNELS[0], 1, 32, y, 2)   # fails
    errors = []
    for compiled in (True, False):
        with pytest.raises(EmitError) as e:
            stand_in(f.trace(x, y), compiled, fail=y.ptr)
        errors.append(str(e.value))
    assert errors[0] == errors[1]
    assert f"test_emitter.py:{line_of(__file__, 'fails')}:" in errors[0]
    assert "cuGraphAddKernelNode failed" in errors[0]


def test_a_packing_failure_names_the_users_line(stand_in):
    x, y = A(64), A(64)
    k = Fake("picky", 50, refuse=y.ptr)

    @gt.graph
    def f(s, x, y):
        s.launch(k, 1, 32, x, 1)
        s.launch(k, 1, 32, y, 2)   # refused
    errors = []
    for compiled in (True, False):
        with pytest.raises(EmitError) as e:
            stand_in(f.trace(x, y), compiled)
        errors.append(str(e.value))
    assert errors[0] == errors[1] and "cannot pack" in errors[0]
    assert f"test_emitter.py:{line_of(__file__, 'refused')}:" in errors[0]


def test_launches_refuses_what_emit_does_not_give(stand_in):
    stand_in(_program([]).trace(A(64), A(64), A(64)), True)   # configured
    with pytest.raises(TypeError):
        BUILT.launches([], [0], [], [], 0)
    with pytest.raises(ValueError):   # by_pos longer than the start
        BUILT.launches([], [0], [], [object()], 0, 1, {}, None, None, {}, {}, {}, None, None)
    with pytest.raises(TypeError):
        BUILT.launches((), [0], [], [], 0, 1, {}, None, None, {}, {}, {}, None, None)
    with pytest.raises(TypeError):
        BUILT.add(1, [object()], 8)




SET = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.POINTER(Params))
SET_EXEC = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_uint64, ctypes.c_uint64,
                            ctypes.POINTER(Params))
REFUSED = 13   # a node handle the stand-in driver refuses to set


class Member:
    """What an image's node is to ``Patches`` (its listing and line, for errors)."""
    kind, args, source = "kernel", (), ("rebound.py", 7)

    class op:
        @staticmethod
        def describe(node, namer):
            return "k()"

    def __init__(self, index):
        self.index = index


def _sets(p: Params) -> tuple:
    return (p.func, tuple(p.grid), ctypes.c_int64.from_address(p.kernel_params[0]).value)


class SetLog:
    """cuda.bindings' driver with the two setters going to a list."""

    def __init__(self, real):
        self.real, self.seen = real, []

    def __getattr__(self, name):
        return getattr(self.real, name)

    def cuGraphKernelNodeSetParams(self, node, params):
        return self.cuGraphExecKernelNodeSetParams(0, node, params)

    def cuGraphExecKernelNodeSetParams(self, executable, node, params):
        if int(node) == REFUSED:
            return (self.real.CUresult.CUDA_ERROR_INVALID_VALUE,)
        self.seen.append((int(executable), int(node),
                          _sets(Params.from_address(params.getPtr()))))
        return (self.real.CUresult.CUDA_SUCCESS,)


def test_rebinding_sets_the_nodes_cuda_bindings_sets(monkeypatch):
    from graphtrace.ops._patch import Patches, _Image
    driver = dn._driver()
    seen = []

    def set_exec(executable, node, p):
        if node == REFUSED:
            return 1
        seen.append((executable, node, _sets(p.contents)))
        return 0
    fns = SET(lambda node, p: set_exec(0, node, p)), SET_EXEC(set_exec)
    stack = contextlib.ExitStack()
    stack.enter_context(driver_functions_kept())
    BUILT.configure_set(*(ctypes.cast(f, ctypes.c_void_p).value for f in fns))
    monkeypatch.setitem(dn._compiled, "module", BUILT)

    def images(handles):
        out = []
        for k, hs in enumerate(handles):
            params = driver.CUDA_KERNEL_NODE_PARAMS()
            params.func, params.gridDimX = driver.CUfunction(100 + k), k + 1
            image = _Image(params, None, [(1000 + k).to_bytes(8, "little")], [0], 8)
            image.members = [(Member(h), driver.CUgraphNode(h)) for h in hs]
            out.append(image)
        return out
    try:
        for handles, count in (([[1, 2, 3], [4]], 8), ([[5], [6, 7]], 6),
                               ([[8, REFUSED, 9]], 2)):   # each set in both, up to 13
            bindings = SetLog(driver)
            results = []
            for patches, log in ((Patches(bindings, BUILT), seen), (Patches(bindings), bindings.seen)):
                log.clear()
                errors = []
                for call in (lambda im: patches.set_definition(im),
                             lambda im: patches.set_executable(im, driver.CUgraphExec(99))):
                    try:
                        call(images(handles))
                    except EmitError as e:
                        errors.append(str(e))
                results.append((list(log), errors))
            assert results[0] == results[1]
            assert len(results[0][0]) == count
            assert len(results[0][1]) == (2 if count == 2 else 0)
            assert all("rebound.py:7" in e and "%13" in e for e in results[0][1])
    finally:
        stack.close()


def test_the_driver_functions_are_given_back_after_the_stand_ins():
    """(Runs after the tests above, in file order.) A graph built before them
    may be rebound after: the emitter must call the driver again, not a freed
    stand-in."""
    assert BUILT.pointers() == BEFORE
