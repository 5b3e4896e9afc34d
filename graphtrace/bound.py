"""A decorated method bound to its instance (``model.step``), as
``GraphFunction.__get__`` hands it out: calls, traces, compiles, signatures and
profiles with the instance first, and the function's other attributes."""
from __future__ import annotations

__all__ = ["BoundGraphFunction"]


class BoundGraphFunction:
    """A decorated method bound to its instance: ``model.step(x)``; ``function``,
    the ``GraphFunction``, whose ``trace`` gives a ``Graph`` and ``profile`` a
    ``Profile``."""

    __slots__ = ("function", "instance")
    _graphtrace_bound = True   # what owners._bound_to tells it by

    def __init__(self, function, instance):
        self.function, self.instance = function, instance

    def __call__(self, *args, **kwargs):
        return self.function(self.instance, *args, **kwargs)

    def trace(self, *args, **kwargs):
        return self.function.trace(self.instance, *args, **kwargs)

    def compile(self, *args, **kwargs):
        return self.function.compile(self.instance, *args, **kwargs)

    def signature(self, *args, **kwargs) -> tuple:
        return self.function.signature(self.instance, *args, **kwargs)

    def profile(self, *args, **kwargs):
        return self.function.profile(self.instance, *args, **kwargs)

    def __getattr__(self, name):
        if name in BoundGraphFunction.__slots__:   # not set yet (an object being copied)
            raise AttributeError(name)
        return getattr(self.function, name)

    def __reduce__(self):
        """As a bound method pickles and copies: the instance's attribute again."""
        return getattr, (self.instance, self.function.__name__)

    def __repr__(self):
        return f"<bound graphtrace.graph {self.function.__name__} of {self.instance!r}>"
