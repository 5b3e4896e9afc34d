"""Workloads 3 and 4: build cost per node, and the call path of a compiled graph."""
from __future__ import annotations

import itertools

import numpy as np

import graphtrace as gt
from common import KERNEL_SRC, host_us, interleaved_us

N = 1000


def _nothing(*arrays):
    """A host callback reading nothing of its arrays."""


def run():
    import cupy as cp
    from cuda.core import Device, Kernel, LaunchConfig
    from cuda.core.graph import GraphDefinition
    dev = Device()
    dev.set_current()
    mod = cp.RawModule(code=KERNEL_SRC)
    inc, k_inc, k_axpb = mod.get_function("inc"), gt.kernel(mod, name="inc"), \
        gt.kernel(mod, name="axpb")
    st = cp.cuda.Stream(non_blocking=True)
    core_st = dev.create_stream(st)
    sync = st.synchronize
    x1, x2 = cp.zeros(32, cp.float32), cp.zeros(32, cp.float32)
    rows = []

    def row(what, us, per_node=None, note=""):
        rows.append({"workload": "callpath", "what": what, "us": us,
                     "us_per_node": per_node, "note": note})
        extra = f"  ({per_node:.3f} us/node)" if per_node is not None else ""
        print(f"{what:<48} {us:10.2f} us{extra}  {note}", flush=True)

    @gt.graph(static=("n",))
    def chain(s, x, n):
        for _ in range(n):
            s.launch(k_inc, 1, 32, x, 32)

    @gt.graph(static=("n",))
    def scaled(s, x, a, n):
        for _ in range(n):
            s.launch(k_axpb, 1, 32, x, a, 32)

    # -- build cost per node (trace + emit + instantiate) -------------------
    def build_graphtrace():
        chain.clear_cache()
        chain.compile(x1, N)

    def build_capture():
        with st:
            st.begin_capture()
            for _ in range(N):
                inc((1,), (32,), (x1, np.int32(32)))
            st.end_capture()

    kern = Kernel.from_handle(inc.kernel.ptr)
    cfg = LaunchConfig(grid=1, block=32)

    def build_core():
        d = GraphDefinition()
        node = d.launch(cfg, kern, x1.data.ptr, np.int32(32))
        for _ in range(N - 1):
            node = node.launch(cfg, kern, x1.data.ptr, np.int32(32))
        d.instantiate()

    builds = (("build: graphtrace trace+emit+instantiate", build_graphtrace),
              ("build: cupy capture+instantiate", build_capture),
              ("build: cuda.core hand-built+instantiate", build_core))
    for (name, _), t in zip(builds, interleaved_us([fn for _, fn in builds], reps=31)):
        row(name, t, t / N)
    t = host_us(lambda: chain.trace(x1, N), reps=7, warmup=2)
    row("build: graphtrace trace alone", t, t / N)
    try:
        import torch
        tx = torch.zeros(32, device="cuda")
        tx.add_(1.0)
        torch.cuda.synchronize()

        def build_torch():
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                for _ in range(N):
                    tx.add_(1.0)
        t = host_us(build_torch, reps=5, warmup=1)
        row("build: torch capture+instantiate", t, t / N)
    except Exception as e:  # noqa: BLE001  (torch is optional)
        print(f"torch capture skipped: {e}")

    # -- call path -------------------------------------------------------------
    chain.clear_cache()
    compiled = chain.compile(x1, N)
    chain(x1, N, stream=st)
    sync()
    bare = host_us(lambda: compiled.graph.launch(core_st), sync=sync)
    row("bare Graph.launch, 1000 nodes", bare)
    cached = host_us(lambda: chain(x1, N, stream=st), sync=sync)
    row("cached call, same arguments", cached, note=f"overhead {cached - bare:.2f} us")
    # a function reaching a dict of arrays by name (model weights held in a global):
    # the graph uses one, so that its launch is short and the call path shows
    weights = {f"w{i}": cp.zeros(32, cp.float32) for i in range(1000)}

    @gt.graph
    def reaching(s):
        s.launch(k_inc, 1, 32, weights["w0"], 32)
    own = reaching.compile()
    reaching(stream=st)
    sync()
    bare_own, t = interleaved_us([lambda: own.graph.launch(core_st),
                                  lambda: reaching(stream=st)], reps=41, collect=False)
    row("cached call reaching a dict of 1000 arrays by name", t,
        note=f"overhead {t - bare_own:.2f} us over its bare launch ({bare_own:.2f} us); "
             "the graph uses one of them")
    # a decorated method of a model of four layers, called again on the same object:
    # its guard compares what the model and its classes hold by identity
    class Layer:
        def __init__(self):
            self.w, self.scale = cp.zeros(32, cp.float32), 0.5

        def forward(self, s):
            s.launch(k_axpb, 1, 32, self.w, self.scale, 32)

    class Model:
        def __init__(self):
            self.layers, self.lr = [Layer() for _ in range(4)], 0.1

        @gt.graph
        def step(self, s):
            for layer in self.layers:
                layer.forward(s)
    model = Model()
    own = model.step.compile()
    model.step(stream=st)
    sync()
    bare_own, t = interleaved_us([lambda: own.graph.launch(core_st),
                                  lambda: model.step(stream=st)], reps=41, collect=False)
    row("cached call of a method, a model of 4 layers", t,
        note=f"overhead {t - bare_own:.2f} us over its bare launch ({bare_own:.2f} us)")
    # host arrays passed to each call (a callback's output buffers): the shortcut reads
    # the geometry and, for arrays owning their memory, the address of each
    hs = [np.zeros(4) for _ in range(4)]

    @gt.graph
    def hosted(s, x, h0, h1, h2, h3):
        s.launch(k_inc, 1, 32, x, 32)
        s.host(_nothing, h0, h1, h2, h3)
    own = hosted.compile(x1, *hs)
    hosted(x1, *hs, stream=st)
    sync()
    # each launched onto an idle stream (a launch queued behind host callbacks waits)
    bare_own = host_us(lambda: own.graph.launch(core_st), sync=sync, every=1)
    t = host_us(lambda: hosted(x1, *hs, stream=st), sync=sync, every=1)
    row("cached call passing 4 host numpy arrays", t,
        note=f"overhead {t - bare_own:.2f} us over its bare launch ({bare_own:.2f} us), "
             "each onto an idle stream; a kernel and a host callback reading them")
    flip = itertools.cycle([x1, x2])
    call = host_us(lambda: chain(next(flip), N, stream=st), sync=sync, reps=60)
    row("call rebinding the array (all 1000 nodes)", call, (call - bare) / N)
    for route in ("node", "whole"):
        ptrs = itertools.cycle([(x1, x1.data.ptr), (x2, x2.data.ptr)])

        def rebind():
            o, p = next(ptrs)
            compiled.rebind([o], [p], [], route=route)
        t = host_us(rebind, reps=40, sync=sync)
        row(f"rebind route '{route}', 1000 kernel nodes", t, t / N)
    # the driver's own cost: the address words of prebuilt parameters written (the
    # array alternating, as in the call above), every node set, one whole update
    patches = compiled._patches()
    images = list({id(im): im for im in patches.planned.values()}.values())
    slot = next(i for i, p in enumerate(compiled._ptrs) if p in (x1.data.ptr, x2.data.ptr))
    alternate = itertools.cycle([x2.data.ptr, x1.data.ptr])
    ptrs = list(compiled._ptrs)

    def floor():
        ptrs[slot] = next(alternate)
        patches.set_definition(patches.rewrite([slot], ptrs))
        compiled.graph.update(compiled.definition)
    t = host_us(floor, reps=40, sync=sync)
    row("floor: definition sets of prebuilt params + whole update", t, t / N,
        note=f"{len(patches.planned)} nodes planned, {len(images)} images, "
             "the array alternating")


    def floor_in_flight():   # as a time-stepping loop has it: launches of the graph running
        floor()
        compiled.graph.launch(core_st)
    t = host_us(floor_in_flight, reps=60, sync=sync)
    row("floor, each update followed by a launch", t, (t - bare) / N,
        note="updates while earlier launches run; per node less the bare launch")
    patches.set_definition(patches.rewrite([slot], compiled._ptrs))   # the binding again
    compiled.graph.update(compiled.definition)
    # where a per-node update's time goes (one kernel node, packed arguments)
    gpu = compiled.gpu
    middle = compiled.ir.nodes[N // 2]
    handle, nodes = gpu.handle(middle), gpu.kernel_nodes
    kern_, _meta = gpu.state[middle.index]
    launch_ = (kern_, middle.target.handle_is_function, (1, 1, 1), (32, 1, 1), 0,
               [x2.data.ptr, np.int32(32)])
    row("exec node set params (driver)", host_us(
        lambda: nodes.set(handle, *launch_, executable=compiled.graph.handle), reps=50))
    row("definition node set params (driver)",
        host_us(lambda: nodes.set(handle, *launch_), reps=50))
    row("Graph.update(definition), 1000 nodes",
        host_us(lambda: compiled.graph.update(compiled.definition), reps=20), None)
    restore = [compiled.value_of(b).ptr for b in middle.reads][:1]
    nodes.set(handle, *launch_[:-1], restore + [np.int32(32)])
    compiled.graph.update(compiled.definition)   # back to the current binding
    scaled(x1, 1.0, N, stream=st)
    vals = itertools.cycle([1.0, 2.0])
    t = host_us(lambda: scaled(x1, next(vals), N, stream=st), sync=sync, reps=60)
    row("call rebinding a scalar (all 1000 nodes)", t, (t - bare) / N)
    sync()
    return rows


if __name__ == "__main__":
    run()
