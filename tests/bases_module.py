"""Base classes a test's classes derive from through a module attribute
(``bases_module.Base``), for ``test_held_forms.py``."""
from numba import cuda


@cuda.jit
def put(out, v):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = v


class Base:
    def __init__(self):
        self.lr = 1.0

    def update(self, s, w):
        put[1, 2, s](w, self.lr)


class Outer:
    class Base:   # a nested class
        def __init__(self):
            self.lr = 1.0

        def update(self, s, w):
            put[1, 2, s](w, self.lr)


SCALE = 1.0   # a setting a graph method reads off this module, imported inside it
