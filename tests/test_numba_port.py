"""numba's stream and event API kept by a literal port, inside a trace.

Code ported from eager numba keeps numba's spellings: ``ev.record(s)``,
``x.copy_to_device(h, stream=s)``, ``s.wait_event(ev)``, ``REAL.synchronize()``.
None of them records a node: each is an error at the user's line that names
the proxy stream's spelling, instead of work that runs once, now (or, for an
event, an order silently dropped).
"""
import numpy as np
import pytest
import sys

from numba import cuda

import graphtrace as gt
from graphtrace import _guards
from helpers import line_of


@cuda.jit
def fill(y, v):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = v


@cuda.jit
def copy_k(src, dst):
    i = cuda.grid(1)
    if i < src.size:
        dst[i] = src[i]


def refused(kind, body, marker, *args, deps="data"):
    f = gt.graph(deps=deps, backend="sim")(body)
    with pytest.raises(kind) as e:
        f(*(args or (cuda.device_array(8),)))
    assert e.value.source[1] == line_of(__file__, marker), str(e.value)
    return str(e.value)


# --- numba's events on proxy streams -------------------------------------------------
def record_numba_event(s, y, z):
    t = s.fork()
    ev = cuda.event()
    fill[1, 8, s](y, 1.0)
    ev.record(s)   # numba record
    ev.wait(t)
    copy_k[1, 8, t](y, z)


def wait_numba_event(s, y, z):
    t = s.fork()
    ev = cuda.event()
    s.record(object())
    ev.wait(stream=t)   # numba wait
    copy_k[1, 8, t](y, z)


@pytest.mark.parametrize("deps", ["streams", "data"])
def test_a_numba_event_recorded_on_a_proxy_stream_is_refused_at_its_line(deps):
    text = refused(gt.StreamError, record_numba_event, "numba record",
                   cuda.device_array(8), cuda.device_array(8), deps=deps)
    assert "ev.record(s)" in text and "s.record(ev)" in text and "t.wait(ev)" in text
    assert "t.join(s)" in text


def test_a_numba_event_waited_on_by_a_proxy_stream_is_refused_at_its_line():
    text = refused(gt.StreamError, wait_numba_event, "numba wait",
                   cuda.device_array(8), cuda.device_array(8), deps="streams")
    assert "ev.wait(stream=t)" in text and "t.wait(ev)" in text


class DriverEvent:
    """Stands for numba-cuda's ``driver.Event`` (the simulator's driver module has
    none): the guards wrap that class where its module holds it."""

    def record(self, stream=0):
        stream.handle   # numba-cuda asks the stream for its handle

    def wait(self, stream=0):
        stream.handle

    def synchronize(self):
        pass


@pytest.fixture
def driver_event(monkeypatch):
    monkeypatch.setattr(sys.modules["numba.cuda.cudadrv.driver"], "Event",
                        type("Event", (DriverEvent,), {}), raising=False)
    _guards.install()
    return sys.modules["numba.cuda.cudadrv.driver"].Event()


def test_numba_cudas_own_event_class_is_guarded_as_the_simulators_is(driver_event):
    ev = driver_event

    def body(s, y):
        ev.record(s)   # driver record
    text = refused(gt.StreamError, body, "driver record")
    assert "s.record(ev)" in text


def test_a_numba_event_on_a_real_stream_outside_a_trace_still_works():
    ev = cuda.event()
    ev.record(cuda.stream())
    ev.wait(cuda.stream())
    ev.synchronize()


# --- synchronisations of numba's own streams and events ------------------------------
REAL = cuda.stream()
EV = cuda.event()


def real_stream_sync(s, y):
    REAL.synchronize()   # real stream sync


def event_sync(s, y):
    EV.synchronize()   # event sync


def default_stream_sync(s, y):
    cuda.default_stream().synchronize()   # default stream sync


def real_auto_sync(s, y):
    with REAL.auto_synchronize():   # real auto sync
        pass


@pytest.mark.parametrize("body, marker", [
    (real_stream_sync, "real stream sync"), (event_sync, "event sync"),
    (default_stream_sync, "default stream sync"), (real_auto_sync, "real auto sync")])
def test_synchronising_a_numba_stream_or_event_inside_a_trace_is_refused(body, marker):
    assert "synchronisation" in refused(gt.HostSyncError, body, marker)


def test_numba_cudas_own_event_synchronize_is_guarded(driver_event):
    ev = driver_event

    def body(s, y):
        ev.synchronize()   # driver event sync
    refused(gt.HostSyncError, body, "driver event sync")


def test_numba_synchronisations_outside_a_trace_still_work():
    REAL.synchronize()
    EV.synchronize()
    cuda.default_stream().synchronize()
    with REAL.auto_synchronize():
        pass


# --- transfers given the proxy stream: name the op of the proxy ----------------------
def upload_into(s, x, h):
    x.copy_to_device(h, stream=s)   # upload into


def download_into(s, y, h):
    y.copy_to_host(h, stream=s)   # download into


def upload_new(s, x, h):
    d = cuda.to_device(h, stream=s)   # upload new
    fill[1, 8, s](d, 1.0)


def allocate(s, x, h):
    d = cuda.device_array(8, stream=s)   # allocate
    fill[1, 8, s](d, 1.0)


def assign_all(s, y, h):
    y[:] = 0   # assign all


@pytest.mark.parametrize("body, marker, wanted", [
    (upload_into, "upload into", "s.copy(x, h)"),
    (download_into, "download into", "s.copy(h, y)"),
    (upload_new, "upload new", "s.copy(d, h)"),
    (assign_all, "assign all", "s.memset(y, 0)")])
def test_a_transfer_inside_a_trace_names_the_proxy_streams_op(body, marker, wanted):
    text = refused(gt.HostSyncError, body, marker, cuda.device_array(8),
                   gt.pinned_empty(8))
    assert wanted in text, text


def test_a_device_array_allocated_on_the_proxy_stream_is_refused_where_it_is_made():
    text = refused(gt.StreamError, allocate, "allocate", cuda.device_array(8),
                   gt.pinned_empty(8))
    assert "s.empty(" in text, text


def test_a_device_array_allocated_outside_a_trace_still_takes_a_stream():
    st = cuda.stream()
    d = cuda.device_array(8, stream=st)
    d.copy_to_device(np.ones(8), stream=st)
    assert d.copy_to_host(stream=st).sum() == 8


# --- numba's stream methods on the proxy --------------------------------------------
def wait_event_method(s, y):
    s.wait_event(object())   # wait_event


def add_callback(s, y):
    s.add_callback(lambda st, status, arg: None, 1)   # add_callback


def auto_synchronize(s, y):
    with s.auto_synchronize():   # auto_synchronize
        pass


@pytest.mark.parametrize("body, marker, wanted", [
    (wait_event_method, "wait_event", "s.wait(ev)"),
    (add_callback, "add_callback", "s.host(fn, "),
    (auto_synchronize, "auto_synchronize", "no synchronisation")])
def test_numbas_stream_methods_on_the_proxy_name_its_own(body, marker, wanted):
    assert wanted in refused(gt.StreamError, body, marker), wanted
