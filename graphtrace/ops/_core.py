"""The cuda.core ``Kernel`` adapter: arguments are passed as cuda.core packs them.

cuda.core's ``Kernel`` says nothing about what a parameter does to memory,
so every array argument is read and written unless ``gt.kernel(k, intents)``
or ``gt.In``/``gt.Out`` say otherwise. A Python float is passed as a double
and an int as an intptr_t, as ``cuda.core.launch`` does; pass numpy scalars
for other C types.
"""
from __future__ import annotations

from ..buffers import Buffer
from ..errors import KernelArgumentError
from .kernel import ADAPTERS, Adapter

__all__ = ["CoreAdapter"]


def _is_core_kernel(k) -> bool:
    return type(k).__name__ == "Kernel" and type(k).__module__.startswith("cuda.core")


class CoreAdapter(Adapter):
    library = "cuda.core"

    def __init__(self, k):
        super().__init__(k, "kernel", None, None)

    def validate(self, args) -> None:
        for i, a in enumerate(args):
            if isinstance(a, (list, tuple)):
                raise KernelArgumentError(
                    f"argument {self.param_name(i)} of cuda.core kernel {self.name} is a "
                    f"Python {type(a).__name__}, which cuda.core cannot pass: pass a device "
                    "array (cupy.asarray(values)), or the numbers one by one")

    def compile(self, args):
        return self.kernel, None

    def pack(self, meta, args, value_of) -> list:
        out = []
        for a in args:
            v = value_of(a)
            out.append(v.ptr if isinstance(v, Buffer) else v)
        return out


ADAPTERS.append((_is_core_kernel, CoreAdapter))
