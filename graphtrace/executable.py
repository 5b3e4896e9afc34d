"""The executable graph, instantiated with the driver.

Why not cuda.core's ``GraphDefinition.instantiate()``: measured on an H200
(bench/RESULTS.md, 16 independent chains of 32 kernels), the same graph
instantiated by cuda.core 1.2 replays 9% slower than instantiated by
``cuGraphInstantiate(graph, 0)``: 212 against 195 us, where stream capture
gives 193. A graph captured by cuda.core's builder and instantiated by it is
as slow, and the captured graph cloned and instantiated with the driver as
fast: the instantiation makes the difference, not how the graph was built.

``Executable`` owns its ``CUgraphExec`` (destroyed when it is collected; the
driver finishes launches in flight first) and offers what the compiled graph
uses: ``upload``, ``launch``, ``update`` from a definition, and setting the
executable node of a child graph.
"""
from __future__ import annotations

import weakref

from .ops._driver_nodes import check

__all__ = ["Executable"]


def _destroy(handle) -> None:
    from cuda.bindings import driver
    driver.cuGraphExecDestroy(handle)


class Executable:
    """``cuGraphInstantiate`` of a cuda.core ``GraphDefinition`` (kept alive: updates
    name its nodes)."""

    def __init__(self, definition):
        from cuda.bindings import driver
        self._driver = driver
        self.definition = definition
        self._graph = driver.CUgraph(int(definition.handle))
        self.handle = check(driver.cuGraphInstantiate(self._graph, 0), "cuGraphInstantiate")
        self._finalizer = weakref.finalize(self, _destroy, self.handle)
        self._streams: dict = {}   # id(cuda.core Stream) -> (it, its CUstream)

    def _stream(self, stream):
        hit = self._streams.get(id(stream))
        if hit is None or hit[0] is not stream:
            if len(self._streams) > 8:
                self._streams.clear()
            hit = self._streams[id(stream)] = \
                (stream, self._driver.CUstream(int(stream.handle)))
        return hit[1]

    def upload(self, stream) -> None:
        check(self._driver.cuGraphUpload(self.handle, self._stream(stream)), "cuGraphUpload")

    def launch(self, stream) -> None:
        check(self._driver.cuGraphLaunch(self.handle, self._stream(stream)), "cuGraphLaunch")

    def update(self, definition) -> None:
        """Every node from ``definition`` (the graph this was made from, changed)."""
        graph = self._graph if definition is self.definition else \
            self._driver.CUgraph(int(definition.handle))
        check(self._driver.cuGraphExecUpdate(self.handle, graph), "cuGraphExecUpdate")

    def set_child(self, node, child) -> None:
        """The executable node of child-graph node ``node`` (a handle) from ``child``
        (a ``GraphDefinition`` of the same shape)."""
        check(self._driver.cuGraphExecChildGraphNodeSetParams(
            self.handle, node, self._driver.CUgraph(int(child.handle))),
            "cuGraphExecChildGraphNodeSetParams")

    def close(self) -> None:
        self._finalizer()
