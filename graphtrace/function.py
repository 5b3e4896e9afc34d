"""``@graph``: the decorated function, its arguments and its signature cache.

Arguments are flattened like a pytree: arrays, numbers, and lists, tuples
and dicts of them. Arrays are traced as they are; numbers become dynamic
``Scalar`` parameters unless named in ``static=``; bools and any other
hashable value are static. The cache key is the abstract signature: per
array its type, shape, strides, dtype and device; per number its type; per
static value the value itself.
"""
from __future__ import annotations

import functools
import inspect
import numbers

import numpy as np

from .buffers import as_buffer, is_array
from .deps import make_tracker
from .errors import ArgumentError, TraceError
from .ir import Graph, Scalar
from .trace import Stream, Tracer

__all__ = ["graph", "GraphFunction"]


def _is_number(v) -> bool:
    return isinstance(v, (numbers.Number, np.number)) and not isinstance(v, (bool, np.bool_))


def _hashable(v) -> bool:
    try:
        hash(v)
        return True
    except TypeError:
        return False


def walk(value, path: str, static: bool, leaf):
    """Rebuild ``value`` with ``leaf(kind, path, v)`` applied to every leaf.

    ``kind`` is ``"array"``, ``"scalar"`` or ``"static"``.
    """
    if is_array(value):
        return leaf("array", path, value)
    if isinstance(value, (list, tuple)) and not isinstance(value, str):
        items = [walk(v, f"{path}[{i}]", static, leaf) for i, v in enumerate(value)]
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, dict):
        return {k: walk(v, f"{path}[{k!r}]", static, leaf) for k, v in value.items()}
    if _is_number(value) and not static:
        return leaf("scalar", path, value)
    if not _hashable(value):
        raise ArgumentError(
            f"argument {path} of type {type(value).__name__} cannot be traced: pass "
            "arrays, numbers, or lists/tuples/dicts of them; any other value must be "
            "hashable, and is then static (a new value traces a new graph)")
    return leaf("static", path, value)


def _key_leaf(kind, path, v):
    if kind == "array":
        return (type(v), as_buffer(v).signature())
    if kind == "scalar":
        return type(v)
    return ("static", type(v), v)


class GraphFunction:
    """A function traced into a CUDA graph; made by ``@graph``."""

    def __init__(self, fn, deps: str = "data", static=()):
        make_tracker(deps)  # validates the mode
        self.fn, self.deps = fn, deps
        functools.update_wrapper(self, fn)
        self._sig = inspect.signature(fn)
        names = list(self._sig.parameters)
        if not names:
            raise TypeError(f"@graph function {fn.__name__} must take the proxy stream "
                            "as its first parameter")
        self._stream_param, self.params = names[0], names[1:]
        static = (static,) if isinstance(static, (str, int)) else tuple(static)
        self.static = set()
        for s in static:
            name = self.params[s] if isinstance(s, int) else s
            if name not in self.params:
                raise ValueError(f"static={s!r} names no parameter of {fn.__name__} "
                                 f"(parameters: {', '.join(self.params)})")
            self.static.add(name)

    def _bind(self, args, kwargs) -> inspect.BoundArguments:
        try:
            bound = self._sig.bind(None, *args, **kwargs)
        except TypeError as e:
            raise ArgumentError(f"{self.__name__}{self._sig}: {e}") from None
        bound.apply_defaults()
        return bound

    def signature(self, *args, **kwargs) -> tuple:
        """The cache key of a call with these arguments."""
        bound = self._bind(args, kwargs)
        return tuple(walk(v, k, k in self.static, _key_leaf)
                     for k, v in bound.arguments.items() if k != self._stream_param)

    def _trace(self, args, kwargs):
        """``(Graph, arrays, scalars)``: the IR and the argument leaves it uses."""
        bound = self._bind(args, kwargs)
        tracer = Tracer(self.__name__, self.params, self.deps)
        arrays, scalars = [], []

        def leaf(kind, path, v):
            if kind == "array":
                arrays.append(tracer.add_argument(path, v))
                return v
            if kind == "scalar":
                s = Scalar(path, v, len(scalars))
                scalars.append(s)
                return s
            return v

        with tracer:
            for k in self.params:
                bound.arguments[k] = walk(bound.arguments[k], k, k in self.static, leaf)
            self._label_closure(tracer)
            bound.arguments[self._stream_param] = Stream(tracer)
            result = self.fn(*bound.args, **bound.kwargs)
        if result is not None:
            raise TraceError(
                f"{self.__name__} returned {type(result).__name__}: a graph function "
                "returns nothing; write results into arrays passed in", source=None)
        return tracer.graph(), arrays, scalars

    def _label_closure(self, tracer: Tracer) -> None:
        """Name the arrays the function reaches through globals and closures."""
        code = self.fn.__code__
        cells = dict(zip(code.co_freevars, self.fn.__closure__ or ()))
        for name in code.co_freevars + code.co_names:
            try:
                v = cells[name].cell_contents if name in cells else self.fn.__globals__[name]
            except (KeyError, ValueError):
                continue
            if is_array(v):
                tracer.add_argument(name, v, argument=False)

    def trace(self, *args, **kwargs) -> Graph:
        """Trace with these arguments and return the IR; runs nothing on a GPU.

        >>> print(step.trace(x, y, 2.0))       # doctest: +SKIP
        """
        return self._trace(args, kwargs)[0]

    def __repr__(self):
        return f"<graphtrace.graph {self.__name__} deps={self.deps}>"


def graph(fn=None, *, deps: str = "data", static=()):
    """Turn a function into an explicit CUDA graph, traced on first call.

    The function receives a proxy stream as its first parameter; callers do
    not pass it. Ops issued on the proxy become graph nodes, ordered by the
    memory they touch (``deps="data"``) or by stream order as stream capture
    would (``deps="streams"``). ``static`` names parameters whose values are
    baked into the graph (a new value traces a new graph).

    >>> import graphtrace as gt
    >>> @gt.graph
    ... def step(s, x, y, a):
    ...     s.launch(scale, 64, 256, x, a, y)          # doctest: +SKIP
    """
    if fn is None:
        return lambda f: GraphFunction(f, deps, static)
    return GraphFunction(fn, deps, static)
