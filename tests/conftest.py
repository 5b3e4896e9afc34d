"""Shared fixtures for the CPU tests."""
import os

import pytest

import graphtrace  # noqa: F401  (imported first: without a GPU numba then builds simulator kernels)
from helpers import FakeDeviceArray


@pytest.fixture
def fake():
    return FakeDeviceArray


def pytest_report_header(config):
    return f"numba simulator: {os.environ.get('NUMBA_ENABLE_CUDASIM', '0')}"
