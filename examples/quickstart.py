"""graphtrace in one page: two numba kernels, a copy and a host callback as one graph.

Runs on the GPU where there is one, and on the CPU simulator elsewhere
(GRAPHTRACE_BACKEND=gpu|sim chooses). Prints the traced graph, runs it
twice with different arrays and scalars, and checks the results with numpy.
"""
import numpy as np

import graphtrace as gt          # before numba: without a GPU it selects the simulator
from numba import cuda


@cuda.jit
def scale(x, a, out):            # graphtrace infers: x read, out written
    i = cuda.grid(1)
    if i < x.size:
        out[i] = a * x[i]


@cuda.jit
def add(x, y):                   # x read, y read and written
    i = cuda.grid(1)
    if i < x.size:
        y[i] += x[i]


@gt.graph
def step(s, x, y, tmp, a, host_out):
    scale[8, 128, s](x, a, tmp)          # numba launch syntax on the proxy stream
    s.launch(add, 8, 128, tmp, y)        # the same, spelled as a method
    s.memset(x[:16], 0)                  # may run beside `add`: it only waits for `scale`
    s.copy(host_out, y)                  # into pinned host memory
    s.host(report, gt.In(host_out))      # a Python callback inside the graph


def report(h):
    print(f"  host callback: sum(y) = {h.sum():.4f}")


def main():
    rng = np.random.default_rng(0)
    n = 1000
    x0, y0 = rng.standard_normal(n), rng.standard_normal(n)
    x, y, tmp = cuda.to_device(x0), cuda.to_device(y0), cuda.device_array(n)
    host_out = gt.pinned_empty(n)

    print(step.trace(x, y, tmp, 2.0, host_out))
    print(f"backend: {gt.backend.default_backend()}")

    step(x, y, tmp, 2.0, host_out)               # trace, build, run
    x2, y2 = cuda.to_device(y0), cuda.to_device(x0)
    step(x2, y2, tmp, 3.0, host_out)             # same signature: rebind and replay
    cuda.synchronize()

    expect_y = y0 + 2.0 * x0
    expect_x = x0.copy()
    expect_x[:16] = 0
    assert np.allclose(y.copy_to_host(), expect_y), "first call: wrong y"
    assert np.allclose(x.copy_to_host(), expect_x), "first call: wrong x"
    assert np.allclose(host_out, x0 + 3.0 * y0), "second call: wrong host copy"
    print("results match numpy")


if __name__ == "__main__":
    main()
