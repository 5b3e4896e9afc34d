"""A numba kernel reaching a global device array is opaque whenever the global holds
one, not only where it did when graphtrace first met the kernel: a global holding
None or nothing yet then (an array allocated by init(), a gt.kernel declaration at
import, a device function defined further down) is looked at again at each trace.
Each test writes its own module (kernels need their source), so that no adapter is
shared with another test."""
import importlib.util
import itertools
import sys

import numpy as np
import pytest

import graphtrace as gt
from numba import cuda
from graphtrace.ops._intents import writes_outside

_names = itertools.count()


def load(tmp_path, src):
    """A module of this source, imported under a name of its own."""
    name = f"opaque_later_{next(_names)}"
    path = tmp_path / f"{name}.py"
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def line(graph, kernel_name):
    """The listing's line of the launch of ``kernel_name``, without its source."""
    return next(ln for ln in str(graph).splitlines()
                if f"kernel {kernel_name}[" in ln).split("#")[0]


@cuda.jit
def fill(t, v):
    i = cuda.grid(1)
    if i < t.size:
        t[i] = v


@cuda.jit
def reader(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * 10.0


LUT_MODULE = '''
from numba import cuda
import numpy as np
import graphtrace as gt
LUT = None     # set by init()

@cuda.jit
def apply(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = LUT[i] * x[i]

{declare}

def init(n):
    global LUT
    LUT = cuda.to_device(np.ones(n))
'''


def arrays(n=16):
    return cuda.to_device(np.ones(n)), cuda.to_device(np.zeros(n))


def test_kernel_traced_before_its_global_array_is_allocated(tmp_path):
    """Traced (which runs nothing) while LUT still held None: opaque, and after the
    node refreshing the table, once LUT holds its array."""
    mod = load(tmp_path, LUT_MODULE.format(declare=""))

    @gt.graph
    def step(s, lut, x, out, v):
        fill[1, 16, s](lut, v)
        mod.apply[1, 16, s](x, out)   # reads mod.LUT by its global name

    x, out = arrays()
    first = step.trace(cuda.to_device(np.zeros(16)), x, out, 2.0)
    assert "opaque" not in line(first, "apply")   # nothing to reach yet
    mod.init(16)
    g = step.trace(mod.LUT, x, out, 2.0)
    assert "opaque" in line(g, "apply") and "after(%0)" in line(g, "apply")
    for t in range(5):   # and the calls run in that order
        step(mod.LUT, x, out, float(t + 2))
        assert np.allclose(out.copy_to_host(), t + 2)


def test_kernel_declared_at_import_before_its_global_array(tmp_path):
    """gt.kernel(apply, ...) at import, before init(): the declaration and the plain
    kernel (which shares its adapter) are both opaque once LUT holds an array."""
    mod = load(tmp_path, LUT_MODULE.format(declare='apply_k = gt.kernel(apply, "in, out")'))
    mod.init(16)
    for kern in (mod.apply_k, mod.apply):
        @gt.graph
        def step(s, lut, x, out, v):
            fill[1, 16, s](lut, v)
            kern[1, 16, s](x, out)
        g = step.trace(mod.LUT, *arrays(), 2.0)
        assert "opaque" in line(g, "apply") and "after(%0)" in line(g, "apply"), str(g)


def test_atomic_into_a_global_counter_allocated_later(tmp_path):
    """cuda.atomic.add into a global CNT allocated after gt.kernel declared the kernel:
    the node reading the counter runs after it."""
    mod = load(tmp_path, '''
from numba import cuda
import numpy as np
import graphtrace as gt
CNT = None

@cuda.jit
def count(x):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(CNT, 0, x[i])

count_k = gt.kernel(count, "in")

def init():
    global CNT
    CNT = cuda.to_device(np.zeros(1))
''')
    mod.init()

    @gt.graph
    def step(s, cnt, x, out):
        s.memset(cnt, 0)
        mod.count_k[1, 16, s](x)
        reader[1, 1, s](cnt, out)

    x, out = cuda.to_device(np.ones(16)), cuda.to_device(np.zeros(1))
    g = step.trace(mod.CNT, x, out)
    assert "opaque" in line(g, "count") and "after(%1)" in line(g, "reader"), str(g)


LAYOUT_MODULE = '''
from numba import cuda
import numpy as np
import graphtrace as gt

@cuda.jit
def gather(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * weight(i)

gather_k = gt.kernel(gather, "in, out")

W = cuda.to_device(np.ones(16))

@cuda.jit(device=True)
def weight(i):
    return {body}
'''


def test_device_function_defined_below_the_declaration_reads_a_global_array(tmp_path):
    mod = load(tmp_path, LAYOUT_MODULE.format(body="W[i]"))

    @gt.graph
    def step(s, w, x, out, v):
        fill[1, 16, s](w, v)
        mod.gather_k[1, 16, s](x, out)

    g = step.trace(mod.W, *arrays(), 2.0)
    assert "opaque" in line(g, "gather") and "after(%0)" in line(g, "gather"), str(g)


def test_device_function_defined_below_reaching_no_array_stays_free(tmp_path):
    """Not every kernel naming what is not there yet is opaque: one whose device
    function, once defined, reaches no device array stays free of the others."""
    mod = load(tmp_path, LAYOUT_MODULE.format(body="2.0 * i"))

    @gt.graph
    def step(s, w, x, out, v):
        fill[1, 16, s](w, v)
        mod.gather_k[1, 16, s](x, out)

    g = step.trace(mod.W, *arrays(), 2.0)
    assert "opaque" not in line(g, "gather") and "0 edges" in str(g), str(g)


def test_declaration_follows_a_device_function_defined_again(tmp_path):
    """A device function defined again (its cell run again) to write a global device
    array makes the kernel opaque, its gt.kernel declaration too, and the graphs
    called before, holding the declaration, trace anew."""
    mod = load(tmp_path, '''
from numba import cuda
import numpy as np
SCR = cuda.to_device(np.zeros(16))

@cuda.jit(device=True)
def helper(i, v):
    return v

@cuda.jit
def k(y, z):
    i = cuda.grid(1)
    if i < y.size:
        z[i] = helper(i, y[i])
''')
    kd = gt.kernel(mod.k, "in, out")

    def build(kk):
        @gt.graph
        def g(s, scr, y, z, out):
            kk[1, 16, s](y, z)
            reader[1, 16, s](scr, out)
        return g

    gp, gd = build(mod.k), build(kd)
    y, z, out = cuda.to_device(np.arange(16.0) + 1), cuda.to_device(np.zeros(16)), \
        cuda.to_device(np.zeros(16))
    gp(mod.SCR, y, z, out)
    gd(mod.SCR, y, z, out)
    exec("@cuda.jit(device=True)\ndef helper(i, v):\n    SCR[i] = v\n    return v\n",
         mod.__dict__)
    for g in (gp, gd):
        listing = g.trace(mod.SCR, y, z, out)
        assert "opaque" in line(listing, "k") and "after(%0)" in line(listing, "reader"), \
            str(listing)
    misses = gd.cache_info().misses
    gd(mod.SCR, y, z, out)   # the graph of the old version is not replayed
    assert gd.cache_info().misses == misses + 1


def test_device_function_defined_again_without_its_read_keeps_the_kernel_opaque(tmp_path):
    """numba runs the old version where it compiled the kernel before, which reads
    TAB: the kernel stays opaque (what either version does)."""
    mod = load(tmp_path, '''
from numba import cuda
import numpy as np
TAB = cuda.to_device(np.ones(16))

@cuda.jit(device=True)
def weight(i):
    return TAB[i]

@cuda.jit
def gather(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] * weight(i)
''')

    @gt.graph
    def step(s, tab, x, out, v):
        fill[1, 16, s](tab, v)
        mod.gather[1, 16, s](x, out)

    x, out = cuda.to_device(np.arange(16.0)), cuda.to_device(np.zeros(16))
    assert "opaque" in line(step.trace(mod.TAB, x, out, 2.0), "gather")
    step(mod.TAB, x, out, 2.0)
    exec("@cuda.jit(device=True)\ndef weight(i):\n    return 1.0\n", mod.__dict__)
    g = step.trace(mod.TAB, x, out, 2.0)
    assert "opaque" in line(g, "gather") and "after(%0)" in line(g, "gather"), str(g)


def test_global_managed_array_is_device_memory(tmp_path):
    """numba-cuda's ManagedNDArray and MappedNDArray are numpy arrays with a
    __cuda_array_interface__, whose device pointer numba compiles in: a kernel
    reaching one by a global name touches device memory it is not given."""
    mod = load(tmp_path, '''
import numpy as np
from numba import cuda

class ManagedNDArray(np.ndarray):   # numba-cuda's: (DeviceNDArrayBase, np.ndarray)
    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "strides": None, "typestr": self.dtype.str,
                "data": (self.__array_interface__["data"][0], False), "version": 3}

CNT = np.zeros(1).view(ManagedNDArray)
HOST = np.zeros(1)

@cuda.jit
def count(x):
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(CNT, 0, x[i])

@cuda.jit
def constant(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = HOST[0]
''')
    assert writes_outside(mod.count.py_func) == {"CNT"}
    assert not writes_outside(mod.constant.py_func)   # a numpy array: a constant


PLACEHOLDER_MODULE = '''
from numba import cuda
import numpy as np
import graphtrace as gt
LUT = {placeholder}    # a placeholder till init()

@cuda.jit
def apply(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = {read} * x[i]

apply_k = gt.kernel(apply, "in, out")

def init(n):
    global LUT
    LUT = {filled}
'''


@pytest.mark.parametrize("placeholder, read, filled", [
    ("np.zeros(0)", "LUT[i]", "cuda.to_device(np.ones(n))"),     # a host array
    ("()", "LUT[0][i]", "(cuda.to_device(np.ones(n)),)"),          # an empty tuple
    ("(None,)", "LUT[0][i]", "(cuda.to_device(np.ones(n)),)"),     # a tuple of None
])
def test_placeholder_other_than_none_later_a_device_array(tmp_path, placeholder, read, filled):
    """A global holding a host array or a tuple (not None) when gt.kernel declared the
    kernel, and a device array (or a tuple of one) after init(): opaque, after the
    node refreshing the table, and the calls give what the table holds."""
    mod = load(tmp_path, PLACEHOLDER_MODULE.format(placeholder=placeholder, read=read,
                                                   filled=filled))
    mod.init(16)
    lut = mod.LUT if read == "LUT[i]" else mod.LUT[0]

    @gt.graph
    def step(s, lut, x, out, v):
        fill[1, 16, s](lut, v)
        mod.apply_k[1, 16, s](x, out)

    x, out = arrays()
    g = step.trace(lut, x, out, 2.0)
    assert "opaque" in line(g, "apply") and "after(%0)" in line(g, "apply"), str(g)
    for t in range(3):
        step(lut, x, out, float(t + 2))
        assert np.allclose(out.copy_to_host(), t + 2)


def test_device_function_held_in_a_tuple_reads_a_global_set_later(tmp_path):
    """FUNCS = (get,), get reading LUT = None till init(): the device functions a
    container holds are looked at too."""
    mod = load(tmp_path, '''
from numba import cuda
import numpy as np
import graphtrace as gt
LUT = None

@cuda.jit(device=True)
def get(i):
    return LUT[i]

FUNCS = (get,)

@cuda.jit
def apply(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = FUNCS[0](i) * x[i]

apply_k = gt.kernel(apply, "in, out")

def init(n):
    global LUT
    LUT = cuda.to_device(np.ones(n))
''')
    mod.init(16)

    @gt.graph
    def step(s, lut, x, out, v):
        fill[1, 16, s](lut, v)
        mod.apply_k[1, 16, s](x, out)

    g = step.trace(mod.LUT, *arrays(), 2.0)
    assert "opaque" in line(g, "apply") and "after(%0)" in line(g, "apply"), str(g)


def test_kernel_is_read_again_only_where_what_it_names_changed(tmp_path, monkeypatch):
    """A kernel reading an optional global (BIAS = None, tested with is not None) is
    not read again at each trace while BIAS holds what it held: the names it reaches
    are compared by identity. Once BIAS holds a device array, it is read once more,
    and opaque."""
    from graphtrace.ops import _numba
    mod = load(tmp_path, '''
from numba import cuda
import graphtrace as gt
BIAS = None

@cuda.jit
def shift(x, out):
    i = cuda.grid(1)
    if i < out.size:
        out[i] = x[i] + 1.0
        if BIAS is not None:
            out[i] += BIAS[i]

shift_k = gt.kernel(shift, "in, out")
''')
    read = []

    def counted(py_func):
        read.append(py_func)
        return writes_outside(py_func)

    monkeypatch.setattr(_numba, "writes_outside", counted)

    @gt.graph
    def step(s, x, out):
        mod.shift_k[1, 16, s](x, out)

    for _ in range(3):
        step.trace(*arrays())
    assert mod.shift.py_func not in read
    mod.BIAS = cuda.to_device(np.zeros(16))
    g = step.trace(*arrays())
    assert read.count(mod.shift.py_func) == 1 and "opaque" in line(g, "shift"), str(g)
    step.trace(*arrays())
    assert read.count(mod.shift.py_func) == 1   # opaque: no longer looked at


def test_kernel_naming_only_libraries_and_numbers_is_not_looked_at_again(tmp_path):
    """A kernel naming only libraries' objects (cuda.grid, math.sqrt) and numbers (a
    global, a factory's closure cell) has nothing a device array may come to be held
    by: it is left out of the look at each trace; one naming LUT = None is not."""
    from graphtrace.ops import _numba
    from graphtrace.ops._kernel_source import held_now
    mod = load(tmp_path, '''
import math
from numba import cuda
SCALE = 2.0
LUT = None

def make(k):
    @cuda.jit
    def scaled(x):
        i = cuda.grid(1)
        if i < x.size:
            x[i] = math.sqrt(x[i]) * SCALE * k
    return scaled

scaled = make(3.0)

@cuda.jit
def table(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = LUT[i]
''')
    assert held_now(mod.scaled.py_func) is None
    assert held_now(mod.table.py_func) is not None
    x = cuda.to_device(np.ones(16))

    @gt.graph
    def step(s, x):
        mod.scaled[1, 16, s](x)

    step.trace(x)
    assert id(mod.scaled) not in _numba._unsettled


class _AnswersAll:
    """An object of the program's own answering every attribute (py_func, intents and
    kernel too) with a number."""

    def __getattr__(self, name):
        return 0


ANSWERS = _AnswersAll()


def test_a_global_answering_every_attribute_is_no_kernel():
    """The walk took it for a gt.kernel declaration (it has intents) and asked its
    kernel's py_func: AttributeError at the first call."""
    @gt.graph(backend="sim")
    def f(s, x):
        n = ANSWERS.anything % 4
        _fill_twice[1, 8, s](x[n:n + 4])

    x = cuda.to_device(np.zeros(8))
    f(x)
    assert list(x.copy_to_host()[:4]) == [2.0] * 4


@cuda.jit
def _fill_twice(x):
    i = cuda.grid(1)
    if i < x.size:
        x[i] = 2.0


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))
