"""Device functions a kernel reaches as this module's attribute (``devfn_module.op``),
for tests/test_intents_module_attribute.py."""
from numba import cuda


@cuda.jit(device=True)
def writes_first(a, b, i):
    a[i] = b[i] * 3


@cuda.jit(device=True)
def writes_second(a, b, i):
    b[i] = a[i] * 2


op = writes_second
