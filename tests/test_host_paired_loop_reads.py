"""A host callback reading device memory through a loop (or comprehension) whose
target unpacks pairs from ``enumerate``, ``zip`` or a dict's ``.items()`` /
``.values()`` over the device arrays it reaches is refused at its ``s.host``
line, as the plain ``for d in self.bufs`` loop is; one that only counts them, or
pairs host arrays, runs."""
import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

SEEN = []


class _Pairs:
    def __init__(self, *bufs):
        self.bufs, self.names = list(bufs), ["a"] * len(bufs)
        self.table = {f"k{i}": b for i, b in enumerate(bufs)}

    def enumerated(self):
        for i, d in enumerate(self.bufs):
            SEEN.append(d.copy_to_host())

    def enumerated_dict(self):
        SEEN.append({i: d.copy_to_host() for i, d in enumerate(self.bufs)})

    def enumerated_list(self):
        SEEN.append([d.copy_to_host() for i, d in enumerate(self.bufs, 1)])

    def zipped(self):
        for n, d in zip(self.names, self.bufs):
            SEEN.append(d.copy_to_host())

    def items(self):
        for k, d in self.table.items():
            SEEN.append(d.copy_to_host())

    def items_listed(self):
        SEEN.append([d.copy_to_host() for k, d in self.table.items()])

    def values(self):
        for d in self.table.values():
            SEEN.append(d.copy_to_host())

    def counted(self):   # the pairs' indices only
        SEEN.append([i for i, d in enumerate(self.bufs)])


@pytest.mark.parametrize("method", ["enumerated", "enumerated_dict", "enumerated_list",
                                    "zipped"])
def test_a_callback_reading_paired_device_arrays_is_refused_at_its_line(method):
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(_Pairs(d), method))                    # paired-devices
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "paired-devices"), str(e.value)
    assert f"host callback _Pairs.{method} holds device memory (d) by attribute 'bufs': " \
        "a callback cannot touch the GPU" in str(e.value), str(e.value)


@pytest.mark.parametrize("method", ["items", "items_listed", "values"])
def test_a_callback_reading_device_arrays_of_a_dict_view_is_refused_at_its_line(method):
    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(_Pairs(d), method))                    # dict-view-devices
    with pytest.raises(gt.ArgumentError) as e:
        f(cuda.to_device(np.ones(8)))
    assert e.value.source[1] == line_of(__file__, "dict-view-devices"), str(e.value)
    assert f"host callback _Pairs.{method} holds device memory (d)" in str(e.value), \
        str(e.value)
    assert "a callback cannot touch the GPU" in str(e.value), str(e.value)


class _HostPairs(_Pairs):
    def enumerated(self):
        for i, h in enumerate(self.bufs):
            SEEN.append(h.copy())

    def enumerated_dict(self):
        SEEN.append({i: h.copy() for i, h in enumerate(self.bufs)})

    def zipped(self):
        for n, h in zip(self.names, self.bufs):
            SEEN.append(h.copy())

    def items(self):
        for k, h in self.table.items():
            SEEN.append(h.copy())

    def values(self):
        for h in self.table.values():
            SEEN.append(h.copy())


@pytest.mark.parametrize("method", ["enumerated", "enumerated_dict", "zipped", "items",
                                    "values", "counted"])
def test_a_callback_reading_paired_host_arrays_runs(method):
    held = _HostPairs(gt.pinned_empty(8), np.full(8, 3.0))
    SEEN.clear()

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(getattr(held, method))
    f(cuda.to_device(np.ones(8)))
    assert SEEN, method


def test_a_callback_only_counting_paired_device_arrays_runs():
    held = _Pairs(cuda.to_device(np.ones(8)))
    SEEN.clear()

    @gt.graph(backend="sim")
    def f(s, d):
        s.memset(d, 0)
        s.host(held.counted)
    f(cuda.to_device(np.ones(8)))
    assert SEEN[-1] == [0]
