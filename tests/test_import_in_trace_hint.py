"""An allocation or upload at the top level of a module that the traced code imports
for the first time (``import helpers`` inside the graph function) is refused at the
module's line, saying to import the module at the top of the file, before any trace,
rather than to make the module's constant on the proxy stream."""
import importlib
import sys
import textwrap

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt

pytestmark = pytest.mark.usefixtures("both_launch_paths")


@cuda.jit
def add(x, y):
    i = cuda.grid(1)
    if i < x.size:
        y[i] += x[i]


@pytest.fixture
def module(tmp_path, monkeypatch, request):
    """Write a module of the given body under a name of its own, importable from here."""
    monkeypatch.syspath_prepend(str(tmp_path))
    names = []

    def write(body):
        name = f"imported_in_trace_{request.node.name.split('[')[-1].strip(']')}_{len(names)}"
        name = "".join(c if c.isalnum() else "_" for c in name)
        path = tmp_path / f"{name}.py"
        path.write_text(textwrap.dedent(body))
        names.append(name)
        importlib.invalidate_caches()
        return name, str(path)
    yield write
    for name in names:
        sys.modules.pop(name, None)


def _graph(name):
    @gt.graph
    def f(s, x):
        helpers = importlib.import_module(name)   # imported inside the trace
        add[1, 32, s](helpers.VALUES, x)
    return f


VALUES = None


@pytest.mark.parametrize("made, error, what", [
    ("cuda.device_array(4)", gt.ArgumentError, "numba.cuda.device_array() inside a trace"),
    ("cuda.to_device(np.arange(4.0))", gt.HostSyncError,
     "numba.cuda.to_device() inside a trace")])
def test_a_module_constant_made_at_its_first_import_says_to_import_it_first(
        module, made, error, what):
    name, path = module(f"""\
        import numpy as np
        from numba import cuda
        VALUES = {made}
        """)
    with pytest.raises(error) as e:
        _graph(name)(cuda.to_device(np.ones(4)))
    msg = str(e.value)
    assert e.value.source == (path, 3), msg
    assert what in msg, msg
    assert f"this line is the top level of module {name}, run now because the graph " \
        "function imports it for the first time. Import it at the top of the file, outside " \
        "the graph function, so that it runs once, before any trace, and bind its array to " \
        f"a global name there, from {name} import VALUES, for the graph function to read" \
        in msg, msg
    assert "s.empty" not in msg and "Move it after the call" not in msg, msg


def test_following_the_advice_works(module, monkeypatch):
    """The module imported first, its array bound to a global name the graph reads."""
    name, _ = module("""\
        from numba import cuda
        import numpy as np
        VALUES = cuda.to_device(np.arange(4.0))
        """)
    monkeypatch.setitem(globals(), "VALUES", importlib.import_module(name).VALUES)

    @gt.graph
    def f(s, x):
        add[1, 32, s](VALUES, x)
    y = cuda.to_device(np.ones(4))
    f(y)
    assert list(y.copy_to_host()) == [1.0, 2.0, 3.0, 4.0]


def test_a_trace_run_by_a_module_being_imported_keeps_the_advice_of_its_body(module):
    """The graph function's own allocation, traced while some module's top level runs
    (the program's module calling it at import): the usual advice, not the import's."""
    name, _ = module("""\
        import numpy as np
        from numba import cuda
        import graphtrace as gt

        @gt.graph
        def f(s, x):
            t = cuda.device_array(4)
            s.copy(t, x)

        f(cuda.to_device(np.ones(4)))
        """)
    with pytest.raises(gt.ArgumentError) as e:
        importlib.import_module(name)
    assert "t = s.empty(4)" in str(e.value) and "top level of module" not in str(e.value)
