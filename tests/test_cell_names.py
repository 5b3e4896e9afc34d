"""In IPython and Jupyter, graphtrace names a cell's line as IPython does (``Cell
In[2], line 3``), not by the temporary file it compiles the cell from
(``2242426270.py:3``); outside IPython, as ``file.py:12``."""
import os
import subprocess
import sys
import textwrap

import pytest

from graphtrace.errors import format_source

pytest.importorskip("IPython", reason="IPython names the cells")
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_CELLS = textwrap.dedent('''
    import numpy as np
    from IPython.core.interactiveshell import InteractiveShell
    shell = InteractiveShell.instance()
    if KERNEL:   # ipykernel's compiler: a cell's file is /tmp/ipykernel_1234/2242426270.py
        from ipykernel.compiler import XCachingCompiler
        shell.compile = XCachingCompiler()
    shell.run_cell("""
    import numpy as np
    import graphtrace as gt
    from numba import cuda
    @cuda.jit
    def k(x, out):
        i = cuda.grid(1)
        if i < x.size:
            out[i] = 2.0 * x[i]
    """, store_history=True)
    shell.run_cell("""
    @gt.graph
    def f(s, x, out):
        k[1, 64, s](x, out)
    x, y = cuda.to_device(np.ones(8)), cuda.device_array(8)
    print(f.trace(x, y))
    @gt.graph
    def wrong(s, x, out):
        k[1, 64, s](x)
    try:
        wrong(x, y)
    except Exception as e:
        print("ERROR", e)
    """, store_history=True)
''')


@pytest.mark.parametrize("kernel", [False, True], ids=["ipython", "ipykernel"])
def test_a_cell_is_named_as_ipython_names_it(kernel):
    if kernel:
        pytest.importorskip("ipykernel", reason="ipykernel names a cell's file")
    env = {**os.environ, "NUMBA_ENABLE_CUDASIM": "1", "GRAPHTRACE_BACKEND": "sim",
           "PYTHONPATH": ROOT + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-c", f"KERNEL = {kernel}\n" + _CELLS], env=env,
                          capture_output=True, text=True, timeout=300)
    out = done.stdout
    assert done.returncode == 0, done.stderr
    listing = next(line for line in out.splitlines() if "= kernel k[1, 64](x, out)" in line)
    assert listing.endswith("# Cell In[2], line 3"), out
    error = next(line for line in out.splitlines() if line.startswith("ERROR"))
    assert error.startswith("ERROR Cell In[2], line 8: numba kernel k takes 2 arguments"), out
    assert ".py:" not in out, out


def test_a_file_outside_ipython_is_named_by_its_base_name():
    assert format_source(("/some/where/prog.py", 12)) == "prog.py:12"
    assert format_source(None) == "<unknown>"
