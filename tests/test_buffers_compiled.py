"""New arrays taken in by ``_buffers.c`` (``Tracer.add_arguments``'s roots and
``Regions.update``) come out as the Python path makes them: the same Buffers,
slots, cache entries, roots and regions, in the same order, for arrays it
takes and arrays it leaves to Python, mixed in any order."""

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from graphtrace import regions
from graphtrace.arrays import as_buffer
from graphtrace.deps import EVERYTHING, Regions
from graphtrace.errors import ArgumentError
from graphtrace.trace import Tracer
from helpers import FakeDeviceArray, compiled_buffers

pytestmark = pytest.mark.skipif(
    regions._BUFFERS is None,
    reason="graphtrace._buffers is not built (no C compiler at install; "
           "tools/build_speedups.py builds it in a checkout) or GRAPHTRACE_PURE_PYTHON is set")

FIELDS = ("ptr", "shape", "strides", "dtype", "device", "pinned", "readonly", "lo", "hi",
          "run", "step", "label", "_starts")


class Odd:
    """An array whose interface the compiled path leaves to Python: a list shape."""

    def __init__(self, n):
        self.inner = FakeDeviceArray(n)
        cai = dict(self.inner.__cuda_array_interface__)
        cai["shape"] = list(cai["shape"])
        self.__cuda_array_interface__ = cai


class WithDescr(FakeDeviceArray):
    """An interface with a one-entry ``descr`` naming no field (a plain dtype:
    taken), or two fields or one named field (a record: left)."""

    def __init__(self, n, fields, name=""):
        super().__init__(n, "float32")
        self.__cuda_array_interface__["descr"] = [(name, "<f4")] * fields


class Broken:
    """No array: its interface raises (the Python path says what is wrong)."""

    @property
    def __cuda_array_interface__(self):
        raise AttributeError("no interface here")


def _array(kind, n, dtype):
    if kind == "1d":
        return FakeDeviceArray(n, dtype)
    if kind == "2d":
        return FakeDeviceArray((n, 3), dtype)
    if kind == "0d":
        return FakeDeviceArray((), dtype)
    if kind == "empty":
        return FakeDeviceArray((0, n), dtype)
    if kind == "strided":
        a = FakeDeviceArray(2 * n, dtype)
        item = np.dtype(dtype).itemsize
        return FakeDeviceArray(n, dtype, ptr=a.ptr, strides=(2 * item,))
    if kind == "readonly":
        a = FakeDeviceArray(n, dtype)
        a.__cuda_array_interface__["data"] = (a.ptr, True)
        return a
    if kind == "numpy flag":   # a flag whose truth is code of its own: left to Python
        a = FakeDeviceArray(n, dtype)
        a.__cuda_array_interface__["data"] = (a.ptr, np.bool_(True))
        return a
    if kind == "odd":
        return Odd(n)
    if kind == "descr1":
        return WithDescr(n, 1)
    if kind == "descr2":
        return WithDescr(n, 2)
    if kind == "record1":
        return WithDescr(n, 1, "a")
    return np.zeros(n, dtype)   # host memory: left to Python


KINDS = ("1d", "2d", "0d", "empty", "strided", "readonly", "numpy flag", "odd", "descr1",
         "descr2", "record1", "host")
ITEMS = st.lists(st.tuples(st.sampled_from(KINDS), st.integers(1, 40),
                           st.sampled_from(["float32", "float64", "int16", "uint8", "<c8"])),
                 min_size=1, max_size=30)


def _plain(v):
    """A field as compared: numpy arrays (a strided view's starts) as lists."""
    return v.tolist() if isinstance(v, np.ndarray) else v


def _state(tracer):
    """What add_arguments and Regions.update leave in a tracer, comparable."""
    slots = tracer._slots
    pos = {id(b): k for k, b in enumerate(slots)}
    bufs = [tuple(_plain(getattr(b, f)) for f in FIELDS) + (b.base is b, id(b.obj))
            for b in slots]
    entries = sorted((k, id(e[0]), pos[id(e[1])], e[2], e[3]) for k, e in tracer._bufs.items())
    regions = tracer._regions
    regions.update()
    if slots:   # the slot map, made when first asked for
        assert tracer._slot(slots[-1]) == len(slots) - 1
    cols = [c[:len(regions.lo)].tolist() for c in regions._cols[1:]]
    return (bufs, entries, [pos[id(b)] for b in tracer._roots],
            {pos[i]: s for i, s in tracer._slot_of.items()}, regions.of_slot.tolist(), cols,
            regions.lo, regions.hi, [pos[id(b)] for b in regions.buf], regions.beyond,
            sorted(regions.keys.items(), key=repr))


def _both(items, before=()):
    """The state each path leaves (compiled first), after ``before`` named one by one."""
    out = []
    for on in (True, False):
        with compiled_buffers(on):
            t = Tracer("f", [], "data")
            for label, a in before:
                t.add_argument(label, a)
            t.add_arguments(list(items))
            out.append(_state(t))
    return out


@settings(max_examples=200, deadline=None)
@given(ITEMS, st.data())
def test_both_paths_take_the_same_arrays(specs, data):
    arrays = [_array(*s) for s in specs]
    # names: some arrays twice (the first name stays), some named before the batch
    repeats = data.draw(st.lists(st.integers(0, len(arrays) - 1), max_size=5))
    items = [(f"a[{k}]", a) for k, a in enumerate(arrays)] + \
        [(f"again{k}", arrays[k]) for k in repeats]
    order = data.draw(st.permutations(range(len(items))))
    before = data.draw(st.lists(st.integers(0, len(items) - 1), max_size=3))
    compiled, pure = _both([items[k] for k in order], [items[k] for k in before])
    assert compiled == pure


def test_the_compiled_path_takes_plain_arrays():
    """It is used at all: a batch of plain arrays is taken without add_argument."""
    arrays = [FakeDeviceArray(8) for _ in range(50)]
    as_buffer(arrays[0])   # the dtype and kind are known from then on
    t = Tracer("f", [], "data")
    calls = []
    t.add_argument = lambda *a: calls.append(a)
    if regions.TAKE[0] is None:
        pytest.skip("compiled buffers switched off")
    t.add_arguments([(f"x{k}", a) for k, a in enumerate(arrays)])
    assert calls == [] and len(t._roots) == 50 and t._roots[7].label == "x7"
    assert t._roots[7].obj is arrays[7] and t._roots[7].base is t._roots[7]


def test_an_object_that_is_no_array_is_refused_as_before():
    for on in (True, False):
        with compiled_buffers(on):
            t = Tracer("f", [], "data")
            with pytest.raises(ArgumentError, match="cannot use Broken"):
                t.add_arguments([("x", FakeDeviceArray(4)), ("bad", Broken())])
            assert [b.label for b in t._roots] == ["x"]
            with pytest.raises(ArgumentError, match="cannot use"):
                t.add_arguments([("y", FakeDeviceArray(4)), ("z", object())])


def _regions_both(bufs):
    out = []
    for on in (True, False):
        with compiled_buffers(on):
            r = Regions(list(bufs[:len(bufs) // 2]))
            r.update()   # in two steps: the second starts past the first's slots
            r.slots.extend(bufs[len(bufs) // 2:])
            r.update()
            out.append((r.of_slot.tolist(), [c[:len(r.lo)].tolist() for c in r._cols[1:]],
                        r.lo, r.hi, [id(b) for b in r.buf], r.beyond,
                        sorted(r.keys.items(), key=repr)))
    return out


@settings(max_examples=150, deadline=None)
@given(ITEMS, st.data())
def test_both_paths_make_the_same_regions(specs, data):
    arrays = [_array(*s) for s in specs]
    bufs = [as_buffer(a) for a in arrays]
    # views of the same bytes again (one region), and the whole address space
    bufs += data.draw(st.lists(st.sampled_from(bufs), max_size=5))
    if data.draw(st.booleans()):
        bufs.insert(data.draw(st.integers(0, len(bufs))), EVERYTHING)
    bufs = data.draw(st.permutations(bufs))
    compiled, pure = _regions_both(bufs)
    assert compiled == pure


# Views for the batch: a few base addresses, so that hulls repeat (one region),
# share their start with another length, or nest; empty and strided ones too.
VIEWS = st.lists(st.tuples(st.integers(0, 5), st.integers(0, 6),
                           st.sampled_from(["run", "run", "run", "empty", "strided"])),
                 min_size=1, max_size=60)


def _view(base, n, kind):
    ptr = (1 << 44) + base * 256
    if kind == "empty":
        return as_buffer(FakeDeviceArray((0, n + 1), "float32", ptr=ptr))
    if kind == "strided":
        return as_buffer(FakeDeviceArray(n + 1, "float32", ptr=ptr, strides=(8,)))
    return as_buffer(FakeDeviceArray(n + 1, "float32", ptr=ptr))


def _regions_stepwise(bufs, cuts, batch, on):
    """A Regions taking ``bufs`` in at each cut, with the batch from ``batch`` new
    slots on: what it holds after each update, comparable."""
    was, regions.BATCH = regions.BATCH, batch
    try:
        with compiled_buffers(on):
            r, out = Regions([]), []
            for a, b in zip([0] + cuts, cuts + [len(bufs)]):
                r.slots.extend(bufs[a:b])
                r.update()
                out.append((r.of_slot.tolist(), r.count,
                            [c[:r.count].tolist() for c in r._cols[1:]]))
            out.append((r.lo, r.hi, [id(b) for b in r.buf], r.beyond,
                        sorted(r.keys.items(), key=repr)))
            return out
    finally:
        regions.BATCH = was


@settings(max_examples=200, deadline=None)
@given(VIEWS, st.data())
def test_the_batch_makes_the_regions_one_lookup_each_makes(specs, data):
    """Regions found by sorting hulls in numpy (any batch size) are those, numbered
    alike, that one dict lookup per slot finds, compiled or in Python; over several
    updates, whose later slots meet regions of earlier ones."""
    bufs = [_view(*s) for s in specs]
    bufs += data.draw(st.lists(st.sampled_from(bufs), max_size=5))   # the same Buffer again
    if data.draw(st.booleans()):
        bufs.insert(data.draw(st.integers(0, len(bufs))), EVERYTHING)
    bufs = data.draw(st.permutations(bufs))
    if data.draw(st.booleans()):   # by address, as allocators hand arrays out: no sort
        bufs.sort(key=lambda b: b.lo)
    cuts = sorted(set(data.draw(st.lists(st.integers(1, len(bufs)), max_size=3))))
    batch = data.draw(st.integers(1, 8))
    each = _regions_stepwise(bufs, cuts, 10 ** 9, True)
    assert _regions_stepwise(bufs, cuts, 10 ** 9, False) == each
    assert _regions_stepwise(bufs, cuts, batch, True) == each
    assert _regions_stepwise(bufs, cuts, batch, False) == each


@pytest.mark.parametrize("on", [True, False], ids=["compiled", "python"])
def test_the_batch_is_taken_and_lists_come_when_asked(on):
    """A large update takes the batch (no key or list made until asked for);
    a strided view among them is left to the slot-by-slot path."""
    bufs = [_view(b, n, "run") for b in range(6) for n in range(7)] * 2
    bufs.insert(30, _view(1, 3, "strided"))
    r = Regions(bufs[:29])
    was, regions.BATCH = regions.BATCH, 10
    try:
        with compiled_buffers(on):
            r.update()
            assert r.count == 29 and r._keys == {} and r._lo == []
            r.slots.extend(bufs[29:])
            r.update()   # 30 first: one by one from the strided view on
    finally:
        regions.BATCH = was
    assert r.count == 43 and len(r.lo) == 43 and len(r.keys) == 43
    # slots 29-42: bufs[29], the strided view (region 30), bufs[30:42]; then all again
    assert r.of_slot.tolist() == list(range(43)) + list(range(30)) + list(range(31, 43))
    assert r.buf[5] is bufs[5] and r.lo[5] == bufs[5].lo and r.hi[5] == bufs[5].hi
    # a batch sorts the regions so far too: one bringing fewer than a quarter as
    # many slots is looked up slot by slot (keys and lists made at once)
    r.slots.extend(_view(9, n, "run") for n in range(4))   # 4 >= BATCH, < 43 // 4
    was, regions.BATCH = regions.BATCH, 2
    try:
        with compiled_buffers(on):
            r.update()
    finally:
        regions.BATCH = was
    assert r.count == 47 and len(r._lo) == 47 and len(r._keys) == 47


def test_a_hull_past_uint64_is_clipped_and_flagged():
    compiled, pure = _regions_both([as_buffer(FakeDeviceArray(4)), EVERYTHING])
    assert compiled == pure and compiled[5] is True
    assert compiled[1][1][-1] == (1 << 64) - 1


def test_misuse_is_refused():
    fast = regions._BUFFERS
    with pytest.raises(TypeError):
        fast.roots([], 0, 0, 2, [], {})
    with pytest.raises(TypeError):
        fast.roots((), 0, 0, 2, [], {}, [])
    cols = Regions([])._cols
    with pytest.raises(TypeError):
        fast.regions([], 0, {}, [], [], (), *cols)
    with pytest.raises(TypeError):   # the columns are arrays
        fast.regions([], 0, {}, [], [], [], [], [], [], [])
    with pytest.raises(ValueError):   # of their item sizes
        fast.regions([], 0, {}, [], [], [], cols[3], *cols[1:])
    with pytest.raises(ValueError):   # with room for every slot
        fast.regions([object()] * 17, 0, {}, [], [], [], *cols)
    with pytest.raises(ValueError):
        fast.regions([], 1, {}, [], [], [], *cols)
    assert fast.roots([("x", FakeDeviceArray(4))], 0, None, 2, [], {}, []) == 0
    assert fast.regions([object()], 0, {}, [], [], [], *cols) == 0


class Named(tuple):
    """A tuple subclass: walked by the Python path (children), not by the compiled one."""


CONTAINERS = st.recursive(
    st.sampled_from(KINDS[:3]).map(lambda k: _array(k, 4, "float32")) |
    st.sampled_from([None, 3, "text", 2.5]),
    lambda inner: st.lists(inner, max_size=4) | st.lists(inner, max_size=3).map(tuple) |
    st.lists(inner, max_size=3).map(Named) |
    st.dictionaries(st.sampled_from(["a", "b", 7, (1, 2)]), inner, max_size=3),
    max_leaves=25)


@settings(max_examples=200, deadline=None)
@given(CONTAINERS, st.integers(0, 9), st.sampled_from(["v", "caf\u00e9", "\u6570", "w" * 40]))
def test_both_paths_find_the_same_arrays_in_containers(value, depth, name):
    """The same arrays under the same labels (names of one, two and four bytes a
    character: the compiled walk writes index labels of one-byte names itself)."""
    from graphtrace import values
    found = []
    for on in (True, False):
        with compiled_buffers(on):
            found.append([(label, id(a)) for label, a in values._leaves(value, name, depth)])
    assert found[0] == found[1]


class Asking:
    """A dict key whose repr fails: the walk's error (labelling the array under
    it) reaches the caller."""

    def __repr__(self):
        raise RuntimeError("asked for its repr")


def test_an_error_in_the_walk_is_raised_by_both_paths():
    from graphtrace import values
    for on in (True, False):
        with compiled_buffers(on):
            with pytest.raises(RuntimeError, match="asked for"):
                values._leaves([(FakeDeviceArray(4), {Asking(): FakeDeviceArray(4)})], "v")


@settings(max_examples=60, deadline=None)
@given(st.lists(st.sampled_from(["1d", "2d", "readonly", "odd", "host", "numpy flag"]),
                min_size=1, max_size=8),
       st.lists(st.tuples(st.integers(0, 50), st.integers(0, 50), st.booleans()),
                min_size=1, max_size=20), st.booleans())
def test_a_function_reaching_containers_of_arrays_traces_the_same(kinds, picks, in_dict):
    """Whole traces of a function whose closure holds arrays in a list of pairs (or
    a dict): the same graph whether new arrays are taken in by _buffers.c or not."""
    import graphtrace as gt
    from helpers import any_kernel
    k = any_kernel("k")
    arrays = [_array(kind, 16, "float32") for kind in kinds if kind != "host"] or \
        [FakeDeviceArray(16)]
    pairs = [(arrays[i % len(arrays)], arrays[(i + 1) % len(arrays)])
             for i in range(len(arrays))]
    held = {f"p{i}": list(p) for i, p in enumerate(pairs)} if in_dict else pairs

    def body(s):
        for i, j, view in picks:
            a = arrays[i % len(arrays)]
            b = arrays[j % len(arrays)]
            if view and len(b.__cuda_array_interface__["shape"]) == 1:
                b = b[0:8] if isinstance(b, FakeDeviceArray) else b
            s.launch(k, 1, 32, a, b)
    listings = []
    for on in (True, False):
        with compiled_buffers(on):
            f = gt.graph(lambda s: (held, body(s))[1])
            listings.append(str(f.trace()))
    assert listings[0] == listings[1]


# Roots for new views: (kind, size in floats, offset in floats from a shared base
# or None for an address of its own); views: (root, offset, length, kind).
ROOT_SPECS = st.lists(st.tuples(st.sampled_from(["1d", "1d", "2d", "strided", "empty"]),
                                st.integers(0, 40), st.one_of(st.none(), st.integers(0, 40))),
                      min_size=1, max_size=5)
VIEW_SPECS = st.lists(st.tuples(st.integers(0, 4), st.integers(-8, 48), st.integers(0, 24),
                                st.sampled_from(["run", "run", "run", "2d", "strided", "empty",
                                                 "again", "same", "readonly", "other"])),
                      min_size=1, max_size=25)


class Typed(FakeDeviceArray):
    """Its type has the interface, as cupy's, numba's and torch's arrays do (kind
    "cai": views made of it are looked up by key, and made by _buffers.c's view)."""

    @property
    def __cuda_array_interface__(self):
        return self.__dict__["_cai"]

    @__cuda_array_interface__.setter
    def __cuda_array_interface__(self, cai):
        self.__dict__["_cai"] = cai


def _roots_and_views(root_specs, view_specs, shared):
    """Root arrays and views of them (some inside one root, some across two or
    outside any, strided, empty, made again or the very object again): of a type
    with the interface, but for views of kind "other" (asked object by object)."""
    roots = []
    for kind, n, at in root_specs:
        ptr = None if at is None else shared + 4 * at
        if kind == "2d":
            roots.append(Typed((n, 2), "float32", ptr=ptr))
        elif kind == "strided":
            roots.append(Typed(n, "float32", ptr=ptr, strides=(8,)))
        elif kind == "empty":
            roots.append(Typed((0,), "float32", ptr=ptr))
        else:
            roots.append(Typed(n, "float32", ptr=ptr))
    views = []
    for r, off, n, kind in view_specs:
        ptr = roots[r % len(roots)].ptr + 4 * off
        if kind == "again" and views:   # the geometry of the last view, a new object
            last = views[-1]
            views.append(Typed(last.shape, last.dtype, last.ptr,
                                         last.__cuda_array_interface__["strides"]))
        elif kind == "same" and views:
            views.append(views[-1])
        elif kind == "2d":
            views.append(Typed((n // 2, 2), "float32", ptr=ptr))
        elif kind == "strided":
            views.append(Typed(n // 2, "float32", ptr=ptr, strides=(8,)))
        elif kind == "empty":
            views.append(Typed((0, n), "float32", ptr=ptr))
        elif kind == "other":
            views.append(FakeDeviceArray(n, "float32", ptr=ptr))
        else:
            views.append(Typed(n, "float32", ptr=ptr))
            if kind == "readonly":
                views[-1].__cuda_array_interface__["data"] = (ptr, True)
    return roots, views


@settings(max_examples=200, deadline=None)
@given(ROOT_SPECS, VIEW_SPECS)
def test_both_paths_make_the_same_new_views(root_specs, view_specs):
    """A view the trace has not seen (``Tracer._entry``): the same Buffer, base,
    slot, cache entry and view key whether _buffers.c's view makes it or the
    Python path does, and the same error for a view no root holds."""
    shared = FakeDeviceArray(4096).ptr
    roots, views = _roots_and_views(root_specs, view_specs, shared)
    out = []
    for on in (True, False):
        with compiled_buffers(on):
            t = Tracer("f", [], "data")
            t.add_arguments([(f"r{k}", r) for k, r in enumerate(roots)])
            got = []
            for v in views:
                try:
                    b = t.buffer(v)
                    got.append((t._slots.index(b), b.base.label, b.label))
                except ArgumentError as e:
                    got.append(str(e))
            pos = {id(b): k for k, b in enumerate(t._slots)}
            keys = sorted((repr(k), pos[id(e[0])], e[1], e[2]) for k, e in t._views.items())
            out.append((got, keys, _state(t)))
    assert out[0] == out[1]


@settings(max_examples=100, deadline=None)
@given(ROOT_SPECS, VIEW_SPECS)
def test_traces_of_new_views_are_alike_on_every_path(root_specs, view_specs):
    """Whole traces launching on views made during the trace: the same listing
    (or error) with new views made in compiled code (launches and _buffers.c) or
    in Python."""
    import graphtrace as gt
    from helpers import any_kernel, launch_path
    from graphtrace.ops import kernel
    k = any_kernel("k")
    shared = FakeDeviceArray(4096).ptr
    roots, _ = _roots_and_views(root_specs, [], shared)

    def f(s, *roots):
        _, views = _roots_and_views(root_specs, view_specs, shared)
        for a, b in zip(views, views[1:] + views[:1]):
            s.launch(k, 1, 32, a, 2.0, b)
    paths = [("pure Python", False)] + \
        ([("compiled", True), ("compiled", False)] if kernel.speedups_module else [])
    listings = []
    for path, on in paths:
        with compiled_buffers(on), launch_path(path):
            try:
                listings.append(str(gt.graph(f).trace(*roots)))
            except ArgumentError as e:
                listings.append(str(e))
    assert len(set(listings)) == 1, listings


def test_a_record_of_one_field_keeps_its_field_on_both_paths():
    """A one-field record ([('a', '<f4')]) is a record, not the plain dtype of its
    typestr: compiled code took it (as a root and as a new view) by its typestr,
    where a one-entry ``descr`` names no field only for a plain dtype."""
    record = np.dtype([("a", "<f4")])
    root = Typed(8, "float32")
    for on in (True, False):
        with compiled_buffers(on):
            t = Tracer("f", [], "data")
            t.add_arguments([("r", WithDescr(4, 1, "a")), ("p", WithDescr(4, 1)),
                             ("root", root)])
            assert [b.dtype for b in t._roots[:2]] == [record, np.dtype("<f4")], on
            view = Typed(4, "float32", ptr=root.ptr)
            view.__cuda_array_interface__["descr"] = [("a", "<f4")]
            assert t.buffer(view).dtype == record, on
