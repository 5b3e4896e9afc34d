"""A host callback reading device memory in a comprehension (a list, set or dict
comprehension, a generator expression, a ``map`` of a lambda) over the device
arrays it reaches is refused at its ``s.host`` line, as the same ``for`` loop is:
3.12 inlines a comprehension in its function (PEP 709), 3.11 makes it a function
of its own called with the iterator; one over host arrays or numbers runs."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

SEEN = []


class _Bufs:
    def __init__(self, *bufs):
        self.bufs, self.nums = list(bufs), [1.0, 2.0]

    def listed(self):
        SEEN.extend([d.copy_to_host() for d in self.bufs])

    def generated(self):
        SEEN.extend(d.copy_to_host() for d in self.bufs)

    def as_set(self):
        SEEN.append({float(d.copy_to_host()[0]) for d in self.bufs})

    def as_dict(self):
        SEEN.append({id(d): d.copy_to_host() for d in self.bufs})

    def mapped(self):
        SEEN.append(list(map(lambda d: d.copy_to_host(), self.bufs)))

    def looped(self):
        for d in self.bufs:
            SEEN.append(d.copy_to_host())

    def numbers(self):   # items that are numbers
        SEEN.append([x * 2 for x in self.nums])

    def counted(self):   # items only compared
        SEEN.append(sum(1 for d in self.bufs if d is not None))


@pytest.mark.parametrize("method", ["listed", "generated", "as_set", "as_dict", "mapped",
                                    "looped"])
def test_a_callback_reading_device_arrays_in_a_comprehension_is_refused_at_its_line(method):
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(_Bufs(d), method))                    # comprehension-over-devices
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "comprehension-over-devices"), str(e.value)
    assert f"host callback _Bufs.{method} holds device memory (d) by attribute 'bufs': " \
        "a callback cannot touch the GPU" in str(e.value), str(e.value)


class _Hosts:
    def __init__(self, *bufs):
        self.bufs = list(bufs)

    def listed(self):
        SEEN.extend([h.copy() for h in self.bufs])

    def generated(self):
        SEEN.extend(h.copy() for h in self.bufs)

    def as_set(self):
        SEEN.append({float(h[0]) for h in self.bufs})

    def as_dict(self):
        SEEN.append({id(h): h.copy() for h in self.bufs})

    def mapped(self):
        SEEN.append(list(map(lambda h: h.copy(), self.bufs)))


@pytest.mark.parametrize("method", ["listed", "generated", "as_set", "as_dict", "mapped"])
def test_a_callback_reading_pinned_arrays_in_a_comprehension_runs(method):
    held = _Hosts(gt.pinned_empty(8), np.full(8, 3.0))
    held.bufs[0][:] = 3.0
    SEEN.clear()

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(held, method))
    f(cuda.to_device(np.ones(8)))
    assert SEEN, method


@pytest.mark.parametrize("method", ["numbers", "counted"])
def test_a_callback_with_a_comprehension_over_numbers_or_compared_devices_runs(method):
    held = _Bufs(cuda.to_device(np.ones(8)))
    SEEN.clear()

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(held, method))
    f(cuda.to_device(np.ones(8)))
    assert SEEN[-1] in ([2.0, 4.0], 1)


class _Local:
    def __init__(self, *bufs):
        self.bufs = list(bufs)

    def looped(self):
        bufs = self.bufs
        for d in bufs:
            SEEN.append(d.copy_to_host())

    def listed(self):
        bufs = self.bufs
        SEEN.extend([d.copy_to_host() for d in bufs])

    def counted(self):   # items only compared
        bufs = self.bufs
        SEEN.append(sum(1 for d in bufs if d is not None))


@pytest.mark.parametrize("method", ["looped", "listed"])
def test_a_callback_reading_device_arrays_through_a_local_in_a_loop_is_refused(method):
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(_Local(d), method))                   # loop-over-local
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "loop-over-local"), str(e.value)
    assert f"host callback _Local.{method} holds device memory (d) by attribute 'bufs': " \
        "a callback cannot touch the GPU" in str(e.value), str(e.value)


def test_a_callback_only_comparing_device_arrays_through_a_local_runs():
    held = _Local(cuda.to_device(np.ones(8)))
    SEEN.clear()

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(held.counted)
    f(cuda.to_device(np.ones(8)))
    assert SEEN[-1] == 1
