"""Arrays a host callback keeps past its call, after the graph was rebound.

After a rebind the callback's arrays were numpy views made from the new
addresses that held nothing of the caller's arrays: once the caller dropped
an array, a view the callback kept pointed at freed memory. An argument is
now handed as itself, and a view of one keeps the argument alive.
"""
import gc
import weakref

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt


@cuda.jit
def _bump(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] += 1


def test_arrays_a_callback_keeps_after_a_rebind_keep_the_callers_arrays_alive():
    kept_after_rebind("sim")


def kept_after_rebind(backend):
    """The check itself, on ``backend`` (``tests/gpu/test_ops.py`` runs it on the GPU)."""
    kept = []

    def keep(whole, part):
        kept.append((whole, part))

    @gt.graph(backend=backend)
    def f(s, d, h):
        _bump[1, 4, s](d)
        s.copy(h, d)
        s.host(keep, h, h[1:3])

    d = cuda.to_device(np.zeros(4))
    first = gt.pinned_empty(4, np.float64)
    f(d, first)
    second = gt.pinned_empty(4, np.float64)
    f(d, second)
    cuda.synchronize()                                 # the callback has run
    assert f.cache_info().misses == 1                  # rebound, not traced again
    whole, part = kept[-1]
    assert whole is second                             # the argument as itself
    alive = weakref.ref(second)
    del second, whole
    gc.collect()
    assert alive() is not None                         # the view keeps it alive
    assert part.tolist() == [2.0, 2.0]
    del part
    third = gt.pinned_empty(4, np.float64)
    f(d, third)                                        # the graph bound to another
    cuda.synchronize()
    f(d, third)   # a GPU graph keeps an earlier binding's arrays until a later launch
    cuda.synchronize()   # finds its launches done
    kept.clear()
    gc.collect()
    assert alive() is None                             # and nothing else holds it


def test_a_callback_takes_the_binding_of_its_own_launch():
    """A host node's callbacks run once per launch, in launch order, possibly long
    after the host launched and rebound again: each takes the arguments bound when
    its launch was made (the launch counts the clock; a rebinding applies from the
    next launch on, and replaces one no launch was made with)."""
    from graphtrace.ops._host_calls import Calls
    seen, clock = [], [0]
    calls = Calls(lambda *a: seen.append(a), ("a",), clock, [], ("f.py", 1))
    want = []

    def launch():
        want.append(calls.args)
        clock[0] += 1
    launch(), launch()
    calls.rebind(("b",))
    calls.rebind(("c",))      # no launch with b
    launch()
    calls()                   # the first launch runs only now
    launch()
    calls.rebind(("d",))
    calls(), calls()
    launch(), launch()
    calls.rebind(("e",))
    calls(), calls(), calls()
    assert seen == want == [("a",), ("a",), ("c",), ("c",), ("d",), ("d",)]
    assert calls.args == ("e",) and len(calls.runs) == 2   # d's launches ran: only d, e kept


def test_a_callback_made_after_launches_counts_from_them():
    """A host node emitted into a graph launched before (its clock past 0) takes the
    binding of each launch from the first one it runs for."""
    from graphtrace.ops._host_calls import Calls
    seen, clock = [], [3]
    calls = Calls(lambda *a: seen.append(a), ("x",), clock, [], ("f.py", 1))
    clock[0] += 1             # launch 3, with x
    calls.rebind(("y",))
    clock[0] += 1             # launch 4, with y
    calls(), calls()
    assert seen == [("x",), ("y",)]


def test_a_callback_that_raises_is_raised_by_the_next_launch():
    """A callback runs on the driver's thread, which prints what it raises and goes
    on: the run is kept, with its launch, and the next launch raises the first
    (launching nothing), with a note naming the callback and the launch; then
    the callbacks run on as before."""
    from graphtrace.ops._host_calls import Calls, raise_failed
    seen, clock, failed = [], [0], []

    def cb(v):
        if v == "bad":
            raise RuntimeError("callback failed")
        seen.append(v)
    calls = Calls(cb, ("a",), clock, failed, ("prog.py", 7))
    clock[0] += 1
    calls.rebind(("bad",))
    clock[0] += 1
    calls.rebind(("c",))
    clock[0] += 1
    calls()
    with pytest.raises(RuntimeError, match="callback failed"):
        calls()   # what the driver's thread sees (and prints)
    calls()
    assert seen == ["a", "c"] and len(failed) == 1
    with pytest.raises(RuntimeError, match="callback failed") as e:
        raise_failed(failed, "step")
    note = "\n".join(getattr(e.value, "__notes__", []))
    assert "host callback" in note and "cb" in note and "prog.py:7" in note
    assert "launch 2 of graph step" in note and "test_host_keep.py" in note   # where it raised
    assert failed == []
