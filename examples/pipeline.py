"""A signal pipeline written as one sequential loop, run as parallel chains.

Each channel of a recording goes through three stages (gain, smoothing,
energy), and the code issues them channel after channel on one stream, as
eager code would. The channels are rows of one array, so graphtrace sees
that no stage of one channel touches another channel's bytes: the graph
holds one independent chain per channel, joined by the final sum. The
picture (pipeline.svg in the current folder, where Graphviz is installed)
shows the chains side by side, each edge labelled with the buffer that
orders it; gt.explain says why two stages are or are not ordered, and
f.profile where the time goes (node times on a GPU, the structure on the
CPU simulator). Runs on the GPU, or on the simulator where there is none.
"""
import numpy as np

import graphtrace as gt          # before numba: without a GPU it selects the simulator
from numba import cuda

THREADS = 128


@cuda.jit
def gain(x, g, out):
    i = cuda.grid(1)
    if i < x.size:
        out[i] = g * x[i]


@cuda.jit
def smooth(x, out):              # a three-point average, the ends held
    i = cuda.grid(1)
    n = x.size
    if i < n:
        out[i] = x[i] if i == 0 or i == n - 1 else (x[i - 1] + x[i] + x[i + 1]) / 3


@cuda.jit
def energy(x, out):              # out[0] += sum of squares (out zeroed before)
    i = cuda.grid(1)
    if i < x.size:
        cuda.atomic.add(out, 0, x[i] * x[i])


@cuda.jit
def total(energies, out):
    if cuda.grid(1) == 0:
        acc = 0.0
        for c in range(energies.size):
            acc += energies[c]
        out[0] = acc


@gt.graph
def pipeline(s, signal, work, smoothed, energies, result, g):
    blocks = (signal.shape[1] + THREADS - 1) // THREADS
    for c in range(signal.shape[0]):                 # channel after channel, on one stream
        gain[blocks, THREADS, s](signal[c], g, work[c])
        smooth[blocks, THREADS, s](work[c], smoothed[c])
        s.memset(energies[c:c + 1], 0)
        energy[blocks, THREADS, s](smoothed[c], energies[c:c + 1])
    total[1, 1, s](energies, result)


def reference(signal, g):
    w = g * signal
    sm = w.copy()
    sm[:, 1:-1] = (w[:, :-2] + w[:, 1:-1] + w[:, 2:]) / 3
    return sm, (sm * sm).sum(axis=1)


def main():
    channels, n = (8, 1 << 16) if gt.backend.default_backend() == "gpu" else (4, 256)
    rng = np.random.default_rng(0)
    signal0 = rng.standard_normal((channels, n))
    signal = cuda.to_device(signal0)
    work, smoothed = cuda.device_array((channels, n)), cuda.device_array((channels, n))
    energies, result = cuda.device_array(channels), cuda.device_array(1)
    args = (signal, work, smoothed, energies, result, 0.5)

    graph = pipeline.trace(*args)
    print(graph)
    gains = [n for n in graph.nodes if n.kind == "kernel" and n.target.name == "gain"]
    starts = [n for n in graph.nodes if not n.deps]
    assert set(gains) <= set(starts), "a channel's chain waits for another channel"
    print(f"{len(gains)} channels, one chain each: nothing orders "
          f"{', '.join(f'%{n.index}' for n in gains)} (the first stages)")
    try:
        graph.picture(buffers=True).save("pipeline.svg")
        print("wrote pipeline.svg")
    except gt.MissingDependencyError as e:
        print(f"no picture: {e.message}")

    why = gt.explain(graph)
    print(why.why(gains[0], gains[1]))               # two channels' first stages
    print(why.why(gains[0], graph.nodes[-1]))        # a first stage and the final sum

    pipeline(*args)
    cuda.synchronize()
    sm, e = reference(signal0, 0.5)
    assert np.allclose(smoothed.copy_to_host(), sm), "wrong smoothing"
    assert np.allclose(energies.copy_to_host(), e), "wrong energies"
    assert np.isclose(result.copy_to_host()[0], e.sum()), "wrong total"

    print(pipeline.profile(*args))                   # runs like one more call
    cuda.synchronize()
    assert np.isclose(result.copy_to_host()[0], e.sum()), "wrong total after the profile"
    print("results match numpy")


if __name__ == "__main__":
    main()
