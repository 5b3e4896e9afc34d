"""A host callback that hands a device item of its object or of a container it
holds only to a builtin answering from the host side (``len(self[0])``,
``isinstance(held[0], X)``, ``type``, ``id``, ``hasattr``, ``getattr`` of its
shape) reads no device memory, and runs; one reading the item through ``len`` of
what it copies to the host is still refused."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

SEEN = []


class _Bufs(list):
    def sized(self):
        SEEN.append(len(self[0]))

    def kind(self):
        SEEN.append(isinstance(self[0], np.ndarray))

    def typed(self):
        SEEN.append(type(self[0]) is not None)

    def named(self):
        SEEN.append(id(self[0]) != 0)

    def has(self):
        SEEN.append(hasattr(self[0], "shape"))

    def shaped(self):
        SEEN.append(getattr(self[0], "shape")[0])

    def copied(self):
        SEEN.append(len(self[0].copy_to_host()))


@pytest.mark.parametrize("method", ["sized", "kind", "typed", "named", "has", "shaped"])
def test_a_callback_sizing_its_device_item_runs(method):
    held = _Bufs([cuda.to_device(np.ones(8))])
    SEEN.clear()

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(held, method))
    f(cuda.to_device(np.ones(8)))
    assert SEEN[-1] in (8, True, False), SEEN


def test_a_closure_sizing_its_held_device_item_runs():
    held = [cuda.to_device(np.ones(8))]
    SEEN.clear()

    def cb():
        SEEN.append(len(held[0]))

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(cb)
    f(cuda.to_device(np.ones(8)))
    assert SEEN == [8], SEEN


def test_a_callback_copying_its_device_item_inside_len_is_refused():
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(_Bufs([d]).copied)               # copied-in-len
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "copied-in-len"), str(e.value)
