"""A host array the function reaches by name (a global, a closure, ``self.h``, an
item or attribute of what those hold) that a node recorded earlier in the trace
writes (``s.copy(H, d)``, a host callback handed it) holds, while tracing, what
it held before the call: the graph fills it when it runs. Reading its values
then (``float(H[0])``, ``H.sum()``, ``H[k]``, a loop over it) baked the old
values into the graph, silently; it is refused at the read's line, naming the
write's. Reads before any write, host callbacks reading it, and nodes reading
it stay as they were.

On the simulator, where results can be read back.
"""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of


@cuda.jit
def scale(x, a, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


H = gt.pinned_empty(2)
PARTS = gt.pinned_empty(2)
CFG = {"h": gt.pinned_empty(2)}
BUFS = [gt.pinned_empty(2)]


class _Box:
    pass


BOX = _Box()
BOX.h = gt.pinned_empty(2)


@pytest.fixture(autouse=True)
def _reset():
    for a in (H, PARTS, CFG["h"], BUFS[0], BOX.h):
        a[:] = 0.0
    yield


def _device(v, n=4):
    return cuda.to_device(np.full(n, v))


def _refused(step, *args, read, write):
    with pytest.raises(gt.HostSyncError) as e:
        step(*args)
    msg = str(e.value)
    assert e.value.source[1] == line_of(__file__, read), msg
    assert f"line {line_of(__file__, write)}" in msg, msg
    assert "until the graph runs" in msg and "s.host" in msg, msg
    return msg


@pytest.mark.parametrize("how", ["element", "float", "sum", "item", "np_sum", "iterate",
                                 "variable_index", "arithmetic"])
def test_reading_a_global_host_array_a_copy_of_the_trace_wrote_is_refused(how):
    """The port of ``d.copy_to_host(H, stream=st); st.synchronize(); c = float(H[0])``:
    the trace saw the values from before the call (the previous call's)."""
    @gt.graph(backend="sim")
    def step(s, x, y):
        s.copy(H, x[:2])                      # writes H
        if how == "element":
            c = H[0]                          # reads element
        elif how == "float":
            c = float(H[0])                   # reads float
        elif how == "sum":
            c = float(H.sum())                # reads sum
        elif how == "item":
            c = H.item(0)                     # reads item
        elif how == "np_sum":
            c = float(np.sum(H))              # reads np_sum
        elif how == "iterate":
            c = sum(v for v in H)             # reads iterate
        elif how == "variable_index":
            c = 0.0
            for k in range(2):
                c += H[k]                     # reads variable_index
        else:
            c = float((H * 2)[0])             # reads arithmetic
        scale[1, 32, s](x, c, y)
    msg = _refused(step, _device(2.0), cuda.device_array(4), read=f"reads {how}",
                   write="writes H")
    assert "H" in msg


def test_a_method_reading_self_h_after_its_copy_is_refused():
    class M:
        def __init__(self):
            self.h = gt.pinned_empty(1)

        @gt.graph(backend="sim")
        def step(self, s, x, y):
            s.copy(self.h, x[:1])                        # writes self.h
            scale[1, 32, s](x, float(self.h[0]), y)      # reads self.h
    m = M()
    msg = _refused(m.step, _device(3.0), cuda.device_array(4), read="reads self.h",
                   write="writes self.h")
    assert "self.h" in msg
    assert type(m.h) is np.ndarray   # put back


def test_a_closure_array_read_after_its_copy_is_refused():
    c_h = gt.pinned_empty(1)

    @gt.graph(backend="sim")
    def step(s, x, y):
        s.copy(c_h, x[:1])                        # writes closure
        scale[1, 32, s](x, float(c_h[0]), y)      # reads closure
    _refused(step, _device(3.0), cuda.device_array(4), read="reads closure",
             write="writes closure")


@pytest.mark.parametrize("where", ["dict", "list", "attribute"])
def test_an_item_or_attribute_a_global_holds_read_after_its_copy_is_refused(where):
    @gt.graph(backend="sim")
    def step(s, x, y):
        h = CFG["h"] if where == "dict" else BUFS[0] if where == "list" else BOX.h
        s.copy(h, x[:2])                                    # writes held
        h = CFG["h"] if where == "dict" else BUFS[0] if where == "list" else BOX.h
        scale[1, 32, s](x, float(h[0]), y)                  # reads held
    _refused(step, _device(3.0), cuda.device_array(4), read="reads held", write="writes held")


def test_a_split_reduction_combined_on_the_host_after_its_copies_is_refused():
    """Partial sums copied into a global pinned buffer on two streams, then summed
    on the host: the sum was the previous call's."""
    @cuda.jit
    def psum(x, out):
        if cuda.grid(1) == 0:
            acc = 0.0
            for j in range(x.size):
                acc += x[j]
            out[0] = acc

    @gt.graph(backend="sim")
    def port(s, x, y, dp):
        sts = [s, s.fork()]
        for k in range(2):
            psum[1, 32, sts[k]](x[k * 4:(k + 1) * 4], dp[k:k + 1])
            sts[k].copy(PARTS[k:k + 1], dp[k:k + 1])     # writes parts
        s.join(sts[1])
        scale[1, 32, s](x, float(PARTS.sum()), y)        # reads parts
    _refused(port, _device(1.0, 8), cuda.device_array(8), cuda.device_array(2),
             read="reads parts", write="writes parts")


def test_a_host_callback_handed_the_array_counts_as_writing_it_unless_wrapped_in_In():
    def bump(h):
        h[0] += 1.0

    @gt.graph(backend="sim")
    def step(s, x, y):
        s.host(bump, H)                          # writes by callback
        scale[1, 32, s](x, float(H[0]), y)       # reads after callback
    _refused(step, _device(1.0), cuda.device_array(4), read="reads after callback",
             write="writes by callback")

    seen = []

    @gt.graph(backend="sim")
    def only_reads(s, x, y):
        s.host(lambda h: seen.append(float(h[0])), gt.In(H))
        scale[1, 32, s](x, float(H[0]), y)
    H[0] = 2.0
    y = cuda.device_array(4)
    only_reads(_device(1.0), y)
    assert seen == [2.0] and y.copy_to_host().tolist() == [2.0] * 4


def test_a_read_before_the_write_and_a_callback_reading_after_it_still_work():
    """Read a setting, launch, then copy results out and look at them in a host
    callback: each call uses this call's setting and the callback sees this call's
    results."""
    seen = []

    @gt.graph(backend="sim")
    def step(s, x, y):
        scale[1, 32, s](x, float(H[1]), y)     # read before any write
        s.copy(H[:1], y[:1])
        s.host(lambda h: seen.append(float(h[0])), H)
        s.copy(x[2:4], H)                       # a node reading it is fine
    x, y = _device(2.0), cuda.device_array(4)
    for v in (3.0, 5.0):
        H[1] = v
        step(x, y)
        assert y.copy_to_host()[0] == 2.0 * v
    assert seen == [6.0, 10.0]
    assert type(H) is np.ndarray


def test_the_names_hold_their_own_arrays_again_after_a_refused_trace():
    held = (H, CFG["h"], BUFS[0], BOX.h)

    @gt.graph(backend="sim")
    def step(s, x):
        for a in (H, CFG["h"], BUFS[0], BOX.h):
            s.copy(a, x[:2])
        float(BOX.h[0])
    with pytest.raises(gt.HostSyncError):
        step(_device(1.0))
    assert all(a is b for a, b in zip((H, CFG["h"], BUFS[0], BOX.h), held))
    assert all(type(a) is np.ndarray for a in held)
    H[0] = 4.0
    assert float(H[0]) == 4.0   # plain again after the trace


def test_a_written_array_read_only_after_the_call_gives_this_calls_values():
    @gt.graph(backend="sim")
    def step(s, x):
        s.copy(H, x[:2])
    for v in (2.0, 3.0):
        step(_device(v))
        assert H.tolist() == [v, v]


def test_an_argument_object_holding_the_written_global_array_is_refused_too():
    """``cfg.h`` of an argument object is keyed by value as ``H[0]`` is: the same
    array, written by the trace, reads as stale through it."""
    cfg = _Box()
    cfg.h = H

    @gt.graph(backend="sim")
    def step(s, x, y, cfg):
        s.copy(H, x[:2])                              # writes via global
        scale[1, 32, s](x, float(cfg.h[0]), y)       # reads via argument
    _refused(step, _device(3.0), cuda.device_array(4), cfg, read="reads via argument",
             write="writes via global")
    assert cfg.h is H


def test_a_read_after_a_callback_reading_the_array_by_its_own_name_is_refused():
    """Such a callback's arrays are read and written (it may change them when it
    runs): the trace's read after it may be stale, and says so."""
    def report():
        H[0] += 1.0

    @gt.graph(backend="sim")
    def step(s, x, y):
        s.host(report)                           # callback by name
        scale[1, 32, s](x, float(H[0]), y)       # reads after named callback
    msg = _refused(step, _device(1.0), cuda.device_array(4),
                   read="reads after named callback", write="callback by name")
    assert "host callback" in msg and "report" in msg


KEPT = []


def test_a_guarded_view_the_code_kept_is_a_plain_array_after_its_trace():
    """The code stored the guarded view somewhere the trace's end does not put
    back (``KEPT.append(H)`` after the write): another graph reading it later as
    a setting was refused with the first trace's message."""
    @gt.graph(backend="sim")
    def write(s, x):
        s.copy(H, x[:2])
        if not KEPT:
            KEPT.append(H)

    @gt.graph(backend="sim")
    def read(s, x, y):
        scale[1, 32, s](x, float(KEPT[0][0]), y)

    write(_device(5.0))
    y = cuda.device_array(4)
    read(_device(1.0), y)
    assert y.copy_to_host().tolist() == [5.0] * 4
    KEPT.clear()


def test_another_threads_trace_reads_a_host_array_this_trace_writes():
    """The guarded view is put in the global for the writing trace; a trace in
    another thread at the same time, reading the global as a setting, was refused
    with the writer's message."""
    import threading
    started, go = threading.Event(), threading.Event()

    @gt.graph(backend="sim")
    def write(s, x):
        s.copy(H, x[:2])
        started.set()
        go.wait(30)

    @gt.graph(backend="sim")
    def read(s, x, y):
        scale[1, 32, s](x, float(H[0]), y)

    H[:] = 3.0
    t = threading.Thread(target=write, args=(_device(5.0),))
    t.start()
    started.wait(30)
    y = cuda.device_array(4)
    try:
        read(_device(1.0), y)
    finally:
        go.set()
        t.join()
    assert y.copy_to_host().tolist() == [3.0] * 4


class _Holder:
    pass


HELD = _Holder()
HELD.h = gt.pinned_empty(2)


def _copy_then_read(s, x, y):
    s.copy(HELD.h, x[:2])                           # helper-write
    scale[1, 32, s](x, float(HELD.h[0]), y)         # helper-read


def test_an_attribute_of_a_global_object_read_in_a_helper_after_its_write():
    """The helper's array is labelled helper.HELD.h: its places were looked for
    under the name helper, found none, and the read baked in the value from
    before the call."""
    @gt.graph(backend="sim")
    def step(s, x, y):
        _copy_then_read(s, x, y)

    _refused(step, _device(5.0), cuda.device_array(4), read="helper-read",
             write="helper-write")
    assert type(HELD.h) is np.ndarray   # put back
