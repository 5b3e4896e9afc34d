"""A Python ``while``/``if`` on a device element inside a trace is refused, saying
to loop or branch on the device instead: ``s.while_loop(gt.cond(m[0:1]) > tol)``,
``s.if_then(gt.cond(flag[0:1]))``; the condition spelled with the user's names."""
import types

import numpy as np
import pytest
from numba import cuda

import graphtrace as gt
from helpers import line_of

pytestmark = pytest.mark.usefixtures("both_launch_paths")

F = __file__


@cuda.jit
def halve(x, m):
    i = cuda.grid(1)
    if i < x.size:
        x[i] *= 0.5
        cuda.atomic.max(m, 0, abs(x[i]))


def _refused(f, *args):
    with pytest.raises(gt.HostSyncError) as e:
        f(*args)
    return str(e.value), e.value.source


def test_a_python_while_on_a_device_element_names_the_device_loop():
    @gt.graph
    def g(s, x, m, tol):
        halve[1, 32, s](x, m)
        while m[0] > tol:                 # loop until converged
            halve[1, 32, s](x, m)
    msg, source = _refused(g, cuda.to_device(np.linspace(-10, 10, 32)),
                           cuda.device_array(1), 1.0)
    assert source == (F, line_of(F, "loop until converged"))
    assert "To loop on device data, loop on the device: with s.while_loop(gt.cond(m[0:1]) " \
        "> tol) as body:, launching the loop's work on body" in msg, msg


@pytest.mark.parametrize("marker, cond", [
    ("if-compare", "gt.cond(m[0:1]) > 0"), ("if-element", "gt.cond(m[0:1])"),
    ("elif", "gt.cond(m[1:2]) < 2.0"), ("if-expression", "gt.cond(m[0:1])")])
def test_a_python_if_on_a_device_element_names_the_device_branch(marker, cond):
    @gt.graph
    def g(s, x, m, which):
        if which == "if-compare":
            if m[0] > 0: halve[1, 32, s](x, m)   # if-compare
        elif which == "if-element":
            if m[0]:   # if-element
                halve[1, 32, s](x, m)
        elif which == "elif":
            if which == "never":
                pass
            elif m[1] < 2.0:   # elif
                halve[1, 32, s](x, m)
        else:
            halve[1, 32, s](x if m[0] else m, m)   # if-expression
    msg, source = _refused(g, cuda.to_device(np.ones(32)), cuda.device_array(2), marker)
    assert source == (F, line_of(F, marker))
    assert f"To branch on device data, branch on the device: with s.if_then({cond}) as " \
        "then:" in msg, msg


def test_a_device_read_outside_a_branch_test_gets_no_device_branch_advice():
    @gt.graph
    def g(s, x, m):
        v = m[0]   # plain read
        halve[1, 32, s](x, m)
        return v
    msg, source = _refused(g, cuda.to_device(np.ones(32)), cuda.device_array(1))
    assert source == (F, line_of(F, "plain read"))
    assert "while_loop" not in msg and "if_then" not in msg


LIMITS = [0.0, 0.1]


@pytest.mark.parametrize("marker, cond", [
    ("last", "gt.cond(m[-1:]) > tol"), ("float", "gt.cond(m[0:1]) > tol"),
    ("item", "gt.cond(m[1:2]) > tol"), ("host-list", "gt.cond(m[0:1]) > LIMITS[1]"),
    ("reversed", "tol < gt.cond(m[0:1])"), ("attribute", "gt.cond(st.m[0:1]) > tol")])
def test_a_while_test_spelled_otherwise_is_rewritten_exactly(marker, cond):
    @gt.graph
    def g(s, x, m, st, tol, which):
        if which == "last":
            while m[-1] > tol: halve[1, 32, s](x, m)   # last
        elif which == "float":
            while float(m[0]) > tol: halve[1, 32, s](x, m)   # float
        elif which == "item":
            while m[1].item() > tol: halve[1, 32, s](x, m)   # item
        elif which == "host-list":
            while m[0] > LIMITS[1]: halve[1, 32, s](x, m)   # host-list
        elif which == "reversed":
            while tol < m[0]: halve[1, 32, s](x, m)   # reversed
        else:
            while st.m[0] > tol: halve[1, 32, s](x, m)   # attribute
    m = cuda.device_array(2)
    msg, source = _refused(g, cuda.to_device(np.ones(32)), m, types.SimpleNamespace(m=m),
                           0.5, marker)
    assert source == (F, line_of(F, marker))
    assert f"loop on the device: with s.while_loop({cond}) as body:, launching" in msg, msg


@pytest.mark.parametrize("marker", [
    "index-var", "two-d", "and", "host-sum", "int-of-float", "device-bound", "chained"])
def test_a_while_test_not_rewritten_exactly_gets_a_generic_placeholder(marker):
    @gt.graph
    def g(s, x, m, m2, tol, which):
        i = 0
        if which == "index-var":
            while m[i] > tol: halve[1, 32, s](x, m)   # index-var
        elif which == "two-d":
            while m2[0, 0] > tol: halve[1, 32, s](x, m)   # two-d
        elif which == "and":
            while m[0] > tol and m[1] > tol: halve[1, 32, s](x, m)   # and
        elif which == "host-sum":
            while m.copy_to_host().sum() > tol: halve[1, 32, s](x, m)   # host-sum
        elif which == "int-of-float":
            while int(m[0]) > tol: halve[1, 32, s](x, m)   # int-of-float
        elif which == "device-bound":
            while m[0] > m[1]: halve[1, 32, s](x, m)   # device-bound
        else:
            while 0 < m[0] < tol: halve[1, 32, s](x, m)   # chained
    msg, source = _refused(g, cuda.to_device(np.ones(32)), cuda.device_array(2),
                           cuda.device_array((2, 2)), 0.5, marker)
    assert source == (F, line_of(F, marker))
    assert "with s.while_loop(gt.cond(<one-element device view>) > <bound>) as body: " \
        "(the condition: a one-element view of a 1-d device array" in msg, msg
    assert "gt.cond(m" not in msg and "gt.cond(x" not in msg, msg
