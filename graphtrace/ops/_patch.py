"""Rebinding kernel nodes by rewriting the words that hold addresses.

A call that brings other arrays of the same signature changes, in each kernel
node that uses them, only the argument words holding their addresses (every
other byte a kernel is packed with: shapes, strides, numbers, stays). So each
node keeps packed arguments and a parameter struct of its own (shared by the
nodes that launch alike), and knows which 8-byte words hold which argument's
address, as an offset from it. A rebind writes those words and hands the
nodes to the driver: no packing, no Buffer objects, one driver call per node
(the driver's own cost is about 0.4 to 0.7 us a node on an H200; packing
every node again cost 3 to 4 us more).

The words are found by packing the node three times: as it is, with every
argument moved by a distinct amount, and with each moved by another amount
that checks the first finding (``plan``). A node whose bytes change otherwise
(a packing that is not a plain function of the addresses), or that runs on
another GPU, is not planned and is updated by packing it again
(``KernelOp.update``). New numbers (dynamic scalars) are packed again, once
per shared image (``repack``).
"""
from __future__ import annotations

import ctypes

from ..buffers import Buffer
from ..errors import EmitError, KernelArgumentError
from ..ir import describe
from ..scalar import Scalar
from ..tree import leaves
from ._driver_nodes import _bytes, arrange

__all__ = ["Patches", "nodes_in", "union"]

MASK = (1 << 64) - 1
# Probe moves: argument r moves by (r + 1) * STEP, then by (r + 1) * CHECK. Both
# change an address's low bits as well as its high ones, so that a packing that
# reads only some of them (a 32-bit part, an alignment) is seen to change bytes
# other than whole address words, and refused.
STEP, CHECK = (1 << 36) + (1 << 12) + 8, (3 << 37) + (5 << 14) + 24


class _Image:
    """Packed arguments, their ``void*`` array and a parameter struct, shared by
    the kernel nodes (``members``: ``(node, handle)``) that launch alike;
    ``launch(value_of)`` packs them (for new numbers)."""

    __slots__ = ("members", "params", "block", "words", "keep", "launch", "offsets",
                 "sizes")

    def __init__(self, params, launch, parts: list[bytes], offsets: list[int], size: int):
        self.members: list[tuple] = []
        self.launch, self.offsets, self.sizes = launch, offsets, [len(b) for b in parts]
        self.block = (ctypes.c_uint64 * max(1, -(-size // 8)))()   # 8-aligned, zeroed
        self.words = self.block   # the block as 64-bit words: word k at byte 8 k
        base = ctypes.addressof(self.block)
        self.write(parts)
        self.keep = (ctypes.c_uint64 * max(1, len(parts)))(*[base + at for at in offsets])
        params.kernelParams = ctypes.addressof(self.keep)
        self.params = params

    def write(self, parts: list[bytes]) -> None:
        """Put packed arguments (of the sizes it was made with) in the block."""
        base = ctypes.addressof(self.block)
        for b, at in zip(parts, self.offsets):
            ctypes.memmove(base + at, b, len(b))


class Patches:
    """The planned kernel nodes of a compiled graph, and which words of which
    image hold the address of which argument (``Binding`` slots)."""

    def __init__(self, driver, compiled=None):
        self.driver = driver
        self.compiled = compiled   # the compiled emitter (_driver_nodes.emitter()), or None
        self.planned: dict[int, _Image] = {}    # node index -> its image
        self.refused: set[int] = set()          # node indices packed again instead
        self.by_root: dict[int, list] = {}      # slot -> [(image, word index, offset)]
        self.by_scalar: dict[int, list] = {}    # scalar slot -> [images packing it]
        self._images: dict = {}                 # launch key -> (image, what it holds)
        self._covered: set = set()              # slots, ("s", scalar slot)s, whose
                                                # every user is planned

    def has(self, node) -> bool:
        return node.index in self.planned

    def cover(self, slots, scalar_slots=()) -> None:
        """Say that every node using these argument and scalar slots is planned
        (set once, after planning)."""
        self._covered = set(slots) | {("s", j) for j in scalar_slots}

    def covers(self, slot: int) -> bool:
        """Whether moving argument ``slot`` needs nothing but ``rewrite``."""
        return slot in self._covered

    def covers_scalar(self, slot: int) -> bool:
        """Whether a new value of scalar ``slot`` needs nothing but ``repack``."""
        return ("s", slot) in self._covered

    def plan(self, node, key, launch, roots: dict[int, int], ptrs: list[int], value_of,
             handle, params) -> bool:
        """Plan ``node``: ``launch(value_of)`` packs its arguments as a list of values;
        ``roots`` maps ``id(root Buffer)`` to its slot, whose address is ``ptrs[slot]``
        in the binding ``value_of`` reads; ``handle``: the node's ``CUgraphNode``;
        ``params()``: a new parameter struct of its launch. Nodes of one ``key`` (the
        same kernel, configuration and argument objects, which ``key`` holds) pack
        alike and share an image."""
        if node.index in self.planned:
            return True
        if node.index in self.refused:
            return False
        hit = self._images.get(key[0])   # ids of objects the entry holds: the same ones
        if hit is not None:
            hit[0].members.append((node, handle))
            self.planned[node.index] = hit[0]
            return True
        values = list(leaves(node.args))
        slots = sorted({roots[id(v.base)] for v in values
                        if isinstance(v, Buffer) and id(v.base) in roots})
        scalars = sorted({v.slot for v in values if isinstance(v, Scalar)})
        if not slots and not scalars:   # nothing a call can change
            self.refused.add(node.index)
            return False
        parts = [_bytes(v) for v in launch(value_of)]
        try:
            found = self._find(launch, roots, value_of, parts, slots)
        except Exception:   # a packing that looks at the addresses it is given
            found = None
        if found is None:
            self.refused.add(node.index)
            return False
        offsets, size = arrange(parts)
        image = self.planned[node.index] = _Image(params(), launch, parts, offsets, size)
        image.members.append((node, handle))
        self._images[key[0]] = (image, key[1])
        for j in scalars:
            self.by_scalar.setdefault(j, []).append(image)
        for (k, at), slot in found.items():
            word = (offsets[k] + at) // 8
            self.by_root.setdefault(slot, []).append(
                (image, word, (image.words[word] - ptrs[slot]) & MASK))
        return True

    def _find(self, launch, roots, value_of, parts, slots):
        """``{(argument k, byte offset in it): slot}`` of the words holding addresses,
        or None if the packing changes otherwise when arrays move."""
        def moved(step):
            def value(x):
                v = value_of(x)
                if isinstance(x, Buffer):
                    slot = roots.get(id(x.base))
                    if slot is not None:
                        return v.moved((slot + 1) * step)
                return v
            return [_bytes(v) for v in launch(value)]

        found, first, second = {}, moved(STEP), moved(CHECK)
        if len(first) != len(parts) or len(second) != len(parts):
            return None   # as many values whatever the addresses, or not planned
        for k, (old, new) in enumerate(zip(parts, first)):
            if len(old) != len(new):
                return None
            for at in range(0, len(old) - len(old) % 8, 8) if len(old) >= 8 else ():
                a = int.from_bytes(old[at:at + 8], "little")
                b = int.from_bytes(new[at:at + 8], "little")
                if a != b:
                    slot, rest = divmod((b - a) & MASK, STEP)
                    if rest or slot - 1 not in slots:
                        return None
                    found[(k, at)] = slot - 1
            if len(old) % 8 or len(old) < 8:   # a tail or a short value: it must not change
                tail = len(old) - len(old) % 8 if len(old) >= 8 else 0
                if old[tail:] != new[tail:]:
                    return None
        # the check: what the found words predict for other moves is what packing gives
        for k, (old, new) in enumerate(zip(parts, second)):
            want = bytearray(old)
            for (j, at), slot in found.items():
                if j == k:
                    a = int.from_bytes(old[at:at + 8], "little")
                    want[at:at + 8] = ((a + (slot + 1) * CHECK) & MASK).to_bytes(8, "little")
            if bytes(want) != new:
                return None
        return found

    def rewrite(self, slots, ptrs) -> list[_Image]:
        """Write the addresses of arguments ``slots`` (now at ``ptrs``) into every
        image that holds them; the images changed, each once."""
        touched = {}
        for slot in slots:
            p = ptrs[slot]
            for image, word, offset in self.by_root.get(slot, ()):
                image.words[word] = (p + offset) & MASK
                touched[id(image)] = image
        return list(touched.values())

    def repack(self, scalar_slots, value_of) -> list[_Image]:
        """Pack again every image that takes one of these scalars (new values, read
        through ``value_of``): one packing per image, however many nodes share it."""
        touched = {id(im): im for j in scalar_slots for im in self.by_scalar.get(j, ())}
        for image in touched.values():
            node = image.members[0][0]
            try:
                parts = [_bytes(v) for v in image.launch(value_of)]
            except KernelArgumentError as e:   # a number the kernel cannot take: as the
                raise KernelArgumentError(          # first call refuses it, at its line
                    f"{getattr(e, 'message', e)} (kernel node %{node.index} "
                    f"{describe(node)}, rebinding a new number)", source=node.source) from e
            except Exception as e:   # anything else the packing raised, named at its line
                raise EmitError(f"failed to update kernel node %{node.index} "
                                f"{describe(node)} ({type(e).__name__}: "
                                f"{getattr(e, 'message', e)})", source=node.source) from e
            if [len(b) for b in parts] != image.sizes:
                raise EmitError(f"kernel node %{node.index} {describe(node)} packs its "
                                "new numbers to other sizes than it was built with; "
                                "pass numbers of the types of the first call",
                                source=node.source)
            image.write(parts)
        return list(touched.values())

    def set_definition(self, images) -> None:
        """Hand the images' nodes of the graph definition to the driver."""
        if self.compiled is not None:
            self._set_compiled(images, 0)
            return
        setp = self.driver.cuGraphKernelNodeSetParams
        for image in images:
            params = image.params
            for node, handle in image.members:
                err, = setp(handle, params)
                if err:
                    raise _failed(node, err)

    def set_executable(self, images, executable) -> None:
        """The same for the nodes of ``executable`` (a ``CUgraphExec``)."""
        if self.compiled is not None:
            self._set_compiled(images, int(executable))
            return
        setp = self.driver.cuGraphExecKernelNodeSetParams
        for image in images:
            params = image.params
            for node, handle in image.members:
                err, = setp(executable, handle, params)
                if err:
                    raise _failed(node, err)


    def _set_compiled(self, images, executable: int) -> None:
        """``set_definition`` (``executable`` 0) or ``set_executable``, each image's
        nodes set from compiled code (``_emitter.c``'s ``set_nodes``)."""
        for image in images:
            failed = self.compiled.set_nodes(image.members, image.params.getPtr(), executable)
            if failed is not None:
                position, err = failed
                raise _failed(image.members[position][0], self.driver.CUresult(err))


def nodes_in(images) -> int:
    return sum(len(image.members) for image in images)


def union(*groups) -> list[_Image]:
    """The images of several ``rewrite``/``repack`` results, each once."""
    return list({id(im): im for group in groups for im in group}.values())


def _failed(node, err) -> EmitError:
    return EmitError(f"failed to update kernel node %{node.index} {describe(node)} "
                     f"({getattr(err, 'name', err)})", source=node.source)
