"""Rebinding kernel nodes by rewriting address words (ops/_patch.py), on the CPU.

A node is planned by packing it with its arguments moved; a rebind then writes
only the words found. These tests hold the rewritten image against packing the
node afresh for the new addresses, with numba's real packing of arrays, tuples
and scalars, and check that packings that are not plain functions of the
addresses are refused (they are packed again on rebinding instead).
"""
from __future__ import annotations

import ctypes

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numba.core import types

import graphtrace as gt
from graphtrace.buffers import Buffer
from graphtrace.ops._driver_nodes import _bytes, arrange
from graphtrace.ops._numba import flatten
from graphtrace.ops._patch import Patches, nodes_in
from graphtrace.scalar import Scalar


class Params:
    kernelParams = 0


class Driver:
    """What Patches calls of cuda.bindings' driver: records the nodes it sets."""

    def __init__(self):
        self.set, self.exec_set = [], []

    def cuGraphKernelNodeSetParams(self, handle, params):
        self.set.append((handle, params.kernelParams))
        return (0,)

    def cuGraphExecKernelNodeSetParams(self, executable, handle, params):
        self.exec_set.append((executable, handle))
        return (0,)


class Node:
    """What Patches reads of a kernel node (and its listing text, for errors)."""
    kind = "kernel"

    class op:
        @staticmethod
        def describe(node, namer):
            return f"k({len(node.args)} arguments)"

    def __init__(self, index, args):
        self.index, self.args, self.source = index, args, ("x.py", 1)


class Binding:
    """Roots at ``ptrs`` now; views move with their root (as ``binding.Binding``)."""

    def __init__(self, roots, svals=()):
        self.roots = roots
        self.slot = {id(r): i for i, r in enumerate(roots)}
        self.ptrs = [r.ptr for r in roots]
        self.svals = list(svals)

    def value_of(self, x):
        if isinstance(x, Buffer) and id(x.base) in self.slot:
            return x.moved(self.ptrs[self.slot[id(x.base)]] - x.base.ptr)
        if isinstance(x, Scalar):
            return self.svals[x.slot]
        return x


def root(ptr, n=1024, dtype=np.float32):
    b = Buffer(ptr, (n,), None, np.dtype(dtype), 0, None)
    b.base = b
    return b


def view(r, start, n, step=1):
    item = r.dtype.itemsize
    b = Buffer(r.ptr + start * item, (n,), (step * item,), r.dtype, 0, None)
    b.base = r
    return b


def image_bytes(image) -> bytes:
    return bytes(image.block)


def packed_bytes(values) -> bytes:
    parts = [_bytes(v) for v in values]
    offsets, size = arrange(parts)
    out = bytearray(-(-max(size, 1) // 8) * 8)
    for b, at in zip(parts, offsets):
        out[at:at + len(b)] = b
    return bytes(out)


def numba_pack(sig, args):
    def pack(value_of):
        out = []
        for ty, a in zip(sig, args):
            flatten(ty, a, value_of, out)
        return out
    return pack


F32 = types.Array(types.float32, 1, "A")


def plan(patches, binding, index, pack, args, key=None):
    node = Node(index, args)
    key = (("node", index), None) if key is None else key
    ok = patches.plan(node, key, pack, binding.slot, binding.ptrs, binding.value_of,
                      f"handle{index}", Params)
    return node, ok


def test_a_rebind_writes_the_new_addresses_and_nothing_else():
    x, y = root(1 << 32), root(2 << 32)
    b = Binding([x, y])
    args = (view(x, 8, 64), np.int32(7), view(y, 0, 64, 2), 2.5)
    sig = (F32, types.int32, F32, types.float64)
    patches = Patches(Driver())
    node, ok = plan(patches, b, 0, numba_pack(sig, args), args)
    assert ok and patches.has(node)
    b.ptrs = [(5 << 32) + 256, (9 << 32) + 512]
    images = patches.rewrite([0, 1], b.ptrs)
    assert len(images) == 1
    assert image_bytes(images[0]) == packed_bytes(numba_pack(sig, args)(b.value_of))
    patches.set_definition(images)
    patches.set_executable(images, "exec")
    assert patches.driver.set == [("handle0", images[0].params.kernelParams)]
    assert nodes_in(images) == 1
    assert patches.driver.exec_set == [("exec", "handle0")]


def test_only_the_nodes_of_the_moved_arguments_are_touched_each_once():
    x, y = root(1 << 32), root(2 << 32)
    b = Binding([x, y])
    patches = Patches(Driver())
    both = (view(x, 0, 8), view(x, 8, 8), view(y, 0, 8))
    only_y = (view(y, 4, 4),)
    plan(patches, b, 0, numba_pack((F32, F32, F32), both), both)
    plan(patches, b, 1, numba_pack((F32,), only_y), only_y)
    b.ptrs[0] += 4096
    touched = patches.rewrite([0], b.ptrs)
    assert [node.index for im in touched for node, _ in im.members] == [0]
    assert image_bytes(touched[0]) == packed_bytes(numba_pack((F32, F32, F32), both)(b.value_of))


def test_nodes_that_launch_alike_share_one_image_and_are_each_set():
    x = root(1 << 32)
    b = Binding([x])
    patches = Patches(Driver())
    args = (view(x, 0, 8),)
    pack = numba_pack((F32,), args)
    key = ((1, 2, 3), args)
    for k in range(3):
        plan(patches, b, k, pack, args, key)
    assert patches.planned[0] is patches.planned[1] is patches.planned[2]
    b.ptrs[0] += 1 << 20
    images = patches.rewrite([0], b.ptrs)
    assert len(images) == 1 and nodes_in(images) == 3
    assert image_bytes(images[0]) == packed_bytes(pack(b.value_of))
    patches.set_definition(images)
    assert [h for h, _ in patches.driver.set] == ["handle0", "handle1", "handle2"]


def test_packings_that_are_not_plain_in_the_addresses_are_refused():
    x = root(1 << 32)
    b = Binding([x])
    patches = Patches(Driver())
    halved = (view(x, 0, 8),)
    _, ok = plan(patches, b, 0, lambda v: [v(halved[0]).ptr >> 1], halved)
    assert not ok                      # a word that moves by half the move
    _, ok = plan(patches, b, 1, lambda v: [ctypes.c_uint32(v(halved[0]).ptr & 0xFFFF_FFFF)],
                 halved)
    assert not ok                      # a 32-bit part of an address: bytes change otherwise
    _, ok = plan(patches, b, 2, lambda v: [v(halved[0]).ptr, len(str(v(halved[0]).ptr))],
                 halved)
    assert not ok                      # a number that depends on the address
    _, ok = plan(patches, b, 3, lambda v: [1, 2.0], (3,))
    assert not ok                      # no argument array nor number: nothing changes
    assert not patches.planned and patches.refused == {0, 1, 2, 3}


def test_new_numbers_are_packed_again_once_per_image():
    x = root(1 << 32)
    dt, n = Scalar("dt", 0.5, 0), Scalar("n", 7, 1)
    b = Binding([x], [0.5, 7])
    patches = Patches(Driver())
    args = (view(x, 4, 8), dt, n)
    sig = (F32, types.float32, types.int32)
    pack = numba_pack(sig, args)
    calls = []

    def counted(value_of):
        calls.append(1)
        return pack(value_of)
    for k in range(3):   # three nodes that launch alike: one image
        plan(patches, b, k, counted, args, ((7,), args))
    only_numbers = (dt,)
    plan(patches, b, 3, numba_pack((types.float64,), only_numbers), only_numbers)
    assert set(patches.planned) == {0, 1, 2, 3}
    b.svals, b.ptrs = [0.25, 9], [(3 << 32) + 64]
    calls.clear()
    images = patches.repack([0, 1], b.value_of) + patches.rewrite([0], b.ptrs)
    assert len(calls) == 1                       # one packing for the shared image
    shared = patches.planned[0]
    assert image_bytes(shared) == packed_bytes(pack(b.value_of))
    assert image_bytes(patches.planned[3]) == \
        packed_bytes(numba_pack((types.float64,), only_numbers)(b.value_of))
    assert nodes_in([im for im in {id(i): i for i in images}.values()]) == 4


ARG_TYPES = [("array", F32), ("i32", types.int32), ("f64", types.float64),
             ("u8", types.uint8), ("c64", types.complex64), ("bool", types.boolean),
             ("pair", types.UniTuple(F32, 2)), ("ptr", types.CPointer(types.float32))]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(ARG_TYPES), st.integers(0, 3), st.integers(0, 100)),
                min_size=1, max_size=8),
       st.lists(st.integers(1, 1 << 20), min_size=4, max_size=4))
def test_rewritten_images_equal_fresh_packing_for_any_arguments(spec, moves):
    """Random numba signatures over views of four arguments: after moving the
    arguments anywhere, the rewritten image is the bytes packing gives."""
    roots = [root((k + 1) << 40) for k in range(4)]
    b = Binding(roots)
    sig, args = [], []
    for (name, ty), r, start in spec:
        sig.append(ty)
        args.append({"array": view(roots[r], start, 16), "i32": np.int32(start),
                     "f64": float(start) / 3, "u8": np.uint8(start),
                     "c64": complex(start, -start), "bool": start % 2 == 0,
                     "pair": (view(roots[r], start, 4), view(roots[(r + 1) % 4], 0, 8, 3)),
                     "ptr": 4096 + start}[name])
    args = tuple(args)
    pack = numba_pack(sig, args)
    patches = Patches(Driver())
    node, ok = plan(patches, b, 0, pack, args)
    uses = any(n in ("array", "pair") for (n, _), _, _ in spec)
    assert ok == uses
    if not ok:
        return
    b.ptrs = [p + 256 * m for p, m in zip(b.ptrs, moves)]
    images = patches.rewrite(range(4), b.ptrs)
    assert image_bytes(images[0]) == packed_bytes(pack(b.value_of))


def test_a_number_that_cannot_be_packed_is_an_error_at_its_line():
    x = root(1 << 32)
    n = Scalar("n", 7, 0)
    b = Binding([x], [7])
    patches = Patches(Driver())
    args = (view(x, 0, 8), n)
    pack = numba_pack((F32, types.int32), args)
    node, ok = plan(patches, b, 0, pack, args)
    assert ok
    b.svals = [2 ** 40]
    try:
        patches.repack([0], b.value_of)
    except gt.KernelArgumentError as e:   # as the first call refuses it
        assert "kernel node %0 kernel k(2 arguments), rebinding a new number" in str(e)
        assert "does not fit numba type int32" in str(e)
        assert e.source == ("x.py", 1)
    else:
        raise AssertionError("no error for a number out of range")


@pytest.mark.parametrize("value", [2.5, np.float32(-0.5), float("nan"), np.complex64(1 + 1j)])
def test_a_number_an_integer_parameter_would_cut_is_refused(value):
    """int32 <- 2.5 was packed as 2 (eager numba refuses it)."""
    with pytest.raises(gt.KernelArgumentError, match="which takes whole numbers: pass an int"):
        flatten(types.int32, value, lambda v: v, [])
    out = []
    flatten(types.int32, np.float64(3.0), lambda v: v, out)   # a whole number: taken
    assert out[0].value == 3


def test_a_packing_that_fails_for_moved_addresses_is_refused():
    x = root(1 << 32)
    b = Binding([x])
    patches = Patches(Driver())
    args = (view(x, 0, 8),)

    def picky(value_of):
        ptr = value_of(args[0]).ptr
        if ptr != x.ptr:
            raise ValueError("an address it was not traced with")
        return [ptr]
    _, ok = plan(patches, b, 0, picky, args)
    assert not ok and patches.refused == {0}
