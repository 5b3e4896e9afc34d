"""Intents of generated kernels: a parameter written through any chain of aliases is written.

Each kernel gives every array parameter a chain of aliases built from random
steps (views, tuples, starred and ``match`` bindings, loops, device functions
that return what they are given...), then a write or a read through the chain's
last name. The statements of all chains come shuffled inside a loop, so that a
later statement may feed an earlier one: the alias sets need several rounds to
settle. Kernels are written to a module file (``inspect.getsource`` needs one)
and only analysed, not run.
"""
import importlib.util
import random

import pytest

from graphtrace.ops._intents import analyze

HEADER = '''\
import cmath
import math
import numba
import numba.cuda as nc
import numpy as np
from numba import cuda, literal_unroll


@cuda.jit(device=True)
def row_of(a, i):
    return a[i]


@cuda.jit(device=True)
def pick(a, b, flag):
    return a if flag else b


@cuda.jit(device=True)
def second_of(a, b):
    return b


@cuda.jit(device=True)
def tail_of(a):
    return a[1:]


@cuda.jit(device=True)
def last_vararg(*arrays):
    return arrays[-1]


@cuda.jit(device=True)
def both(a, b):
    return b, a


@cuda.jit(device=True)
def dev_store(a, i, v):
    a[i] = v


@cuda.jit(device=True)
def dev_load(a, i):
    return a[i]
'''

# From an array alias ``{c}`` to a new name ``{n}``: (code, kind of {n}). A kind is
# "a" (an array or a view of one) or ("t", i): a tuple or list whose item i is {c}.
# ``z`` is a local array and ``c``, ``v`` scalar parameters: none aliases a parameter.
FROM_ARRAY = [
    ("{n} = {c}", "a"),
    ("{n} = {c}[1:]", "a"),
    ("{n} = {c}[0]", "a"),
    ("{n} = {c}[1:, 0]", "a"),
    ("{n} = {c}.T", "a"),
    ("{n} = {c}.reshape(4)", "a"),
    ("{n} = {c} if c else z", "a"),
    ("{n} = z if c else {c}", "a"),
    ("{n} = z or {c}", "a"),
    ("({n} := {c})", "a"),
    ("{n}: object = {c}", "a"),
    ("_, {n} = z, {c}", "a"),
    ("{n}, _ = ({c}, z)", "a"),
    ("[_, ({n}, _)] = z, [{c}, z]", "a"),
    ("{n} = row_of({c}, 0)", "a"),
    ("{n} = pick(z, {c}, c)", "a"),
    ("{n} = second_of(z, {c})", "a"),
    ("{n} = second_of(b={c}, a=z)[1:]", "a"),
    ("{n} = tail_of(tail_of({c}))", "a"),
    ("{n} = last_vararg(z, {c})", "a"),
    ("{n}, _ = both(z, {c})", "a"),
    ("{n} = next(iter({c}))", "a"),
    ("{n} = list({c})[0]", "a"),
    ("for {n} in ({c}, z):\n    pass", "a"),
    ("for _, {n} in enumerate({c}):\n    pass", "a"),
    ("for {n}, _ in zip({c}, z):\n    pass", "a"),
    ("for _, ({n}, _) in enumerate(zip({c}, z)):\n    pass", "a"),
    ("for {n} in literal_unroll((z, {c})):\n    pass", "a"),
    ("for {n} in reversed({c}):\n    pass", "a"),
    ("match {c}:\n    case {n}:\n        pass", "a"),
    ("match z, {c}:\n    case (_, {n}):\n        pass", "a"),
    ("match {c}:\n    case {{**{n}}}:\n        pass", "a"),
    ("*_, {n} = z, {c}", "a"),
    ("_, *_, {n} = z, z, {c}", "a"),
    ("{n}, _ = {c}", "a"),
    ("{n} = second_of(*(z, {c}))", "a"),
    ("{n} = (z, z) if c else {c}", "a"),
    ("for {n} in ((z,) if c else (z, {c})):\n    pass", "a"),
    ("for {n} in (({c}, z) if c else (z, z)):\n    pass", "a"),
    ("{n} = {{0: {c} for _ in range(1)}}[0]", "a"),
    ("*{n}, = {c}", ("t", 0)),
    ("{n} = (({c}, z), z)[0]", ("t", 0)),
    ("{n} = max(({c},), (z,))", ("t", 0)),
    ("{n} = ({c}, z)", ("t", 0)),
    ("{n} = [z, {c}]", ("t", 1)),
    ("{n} = (z,) + ({c},)", ("t", 1)),
    ("{n} = (z,)\n{n} += ({c},)", ("t", 1)),
    ("{n} = [{c}[{n}_j] for {n}_j in range(2)]", ("t", 0)),
    ("{n} = tuple({n}_r for {n}_r in {c})", ("t", 0)),
    ("_, *{n} = z, {c}", ("t", 0)),
    ("*{n}, _ = {c}, z", ("t", 0)),
    ("_, *{n}, _ = z, {c}, z", ("t", 0)),
    ("_, *{n} = z, *({c}, z)", ("t", 0)),
    ("match z, {c}:\n    case [_, *{n}]:\n        pass", ("t", 0)),
    ("{n} = both(z, {c})", ("t", 0)),
]
# From a tuple alias ``{c}`` whose item {i} is the array: back to an array alias.
FROM_TUPLE = [
    "{n} = {c}[{i}]",
    "{n} = {c}[{i}] if c else z",
    "{n} = ({c} + {c})[{i}]",
    "for {n} in {c}:\n    pass",
    "for {n} in literal_unroll({c}):\n    pass",
    "match {c}:\n    case [*_, {n}]:\n        pass",
]
# Through an array alias: writes (the mode they must give) and reads only.
WRITES = [
    ("{c}[0] = v", "w"),
    ("{c}[0, 1], z[0] = v, v", "w"),
    ("{c}.x = v", "w"),
    ("del {c}[0]", "w"),
    ("for {c}[0] in range(2):\n    pass", "w"),
    ("dev_store({c}, 0, v)", "w"),
    ("dev_store(v=v, i=0, a={c})", "w"),
    ("{c}[0] += v", "rw"),
    ("{c} += v", "rw"),
    ("cuda.atomic.add({c}, 0, v)", "rw"),
    ("numba.cuda.atomic.max({c}, 0, v)", "rw"),
    ("nc.atomic.cas({c}, 0, v, v)", "rw"),
    ("cuda.stcg({c}, 0, v)", "rw"),
    ("np.add(z, v, {c})", "rw"),
    ("cuda.atomic.add(ary={c}, idx=0, val=z[1])", "rw"),
    ("cuda.intrinsic_not_listed({c}, z)", "rw"),   # unknown to the analysis: may write
]
READS = [
    "z[0] = {c}[0]",
    "z[0] = dev_load({c}, 0) + dev_load(i=1, a={c})",
    "z[0] = {c}[0, 1] + len({c}) + {c}.shape[0] + {c}.size",
    "for {c}_e in {c}:\n    z[0] += {c}_e",
    "z[0] = cuda.atomic.add(z, 0, {c}[0])",
    "z[0] = nc.atomic.max(z, 0, {c}[0])",
    "cuda.stcg(z, 0, {c}[0])",
    "z[0] = math.sqrt({c}[0]) + min({c}[0], v) + np.float32({c}[0])",
    "z[0] = cuda.ldcg({c}, 0) + nc.shfl_sync(-1, {c}[0], 0)",
    "z[0] = cuda.libdevice.fast_sinf({c}[0]) + cuda.fp16.hadd({c}[0], v)",
    "np.add({c}, v, z)",
    "z[0] = cmath.sqrt({c}[0]).real + numba.float32({c}[0]) + cuda.selp(c, {c}[0], v)",
    "{c}_s = {c}.size\n{c}_s += 1\nz[0] = {c}_s",
    "match {c}:\n    case _:\n        z[0] = {c}[0]",
]


def chain(rng, p, length):
    """Statements binding a chain of ``length`` aliases of ``p``; its last name."""
    stmts, cur, kind = [], p, "a"
    for k in range(length):
        n = f"{p}_{k}"
        if kind == "a":
            code, kind = rng.choice(FROM_ARRAY)
        else:
            code, kind = rng.choice(FROM_TUPLE).replace("{i}", str(kind[1])), "a"
        stmts.append(code.format(c=cur, n=n))
        cur = n
    if kind != "a":
        stmts.append(f"{p}_{length} = {cur}[{kind[1]}]")
        cur = f"{p}_{length}"
    return stmts, cur


def kernel(rng, name, nparams):
    """Source of one kernel and, per parameter, the mode it must get."""
    params = [f"p{j}" for j in range(nparams)]
    roles = [rng.choice(("write", "read")) for _ in params]
    stmts, want = [], {}
    for p, role in zip(params, roles):
        body, last = chain(rng, p, rng.randrange(5))
        if role == "write":
            sink, want[p] = rng.choice(WRITES)
        else:
            sink, want[p] = rng.choice(READS), "r"
        stmts += body + [sink.format(c=last)]
    rng.shuffle(stmts)
    body = "\n".join(stmts).replace("\n", "\n        ")
    src = (f"\n\n@cuda.jit\ndef {name}({', '.join(params)}, c, v):\n"
           f"    z = cuda.local.array(4, np.float32)\n"
           f"    for _ in range(3):\n        {body}\n")
    return src, want


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    rng = random.Random(1)
    cases = [(f"k{i}",) + kernel(rng, f"k{i}", rng.randrange(1, 5)) for i in range(300)]
    path = tmp_path_factory.mktemp("kernels") / "generated_kernels.py"
    path.write_text(HEADER + "".join(src for _, src, _ in cases))
    spec = importlib.util.spec_from_file_location("generated_kernels", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return [(getattr(module, name), src, want) for name, src, want in cases]


def test_written_through_any_chain_means_written_read_through_any_means_read_only(generated):
    for k, src, want in generated:
        got = analyze(k.py_func)
        params = got.params[:-2]
        assert got.params[-2:] == ["c", "v"] and got.modes[-2:] == ["r", "r"], src
        for p, mode in zip(params, got.modes):
            if want[p] == "r":
                assert mode == "r", (p, src)
            else:
                assert set(want[p]) <= set(mode), (p, src)
