"""Build graphtrace's optional compiled tracing path in place, for a checkout
run from its own directory (PYTHONPATH), as ``pip install`` builds it for an
install. Without a C compiler graphtrace runs in pure Python.

    python3 tools/build_speedups.py
"""
import os
import sys

from setuptools import Distribution, Extension
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    os.chdir(ROOT)
    dist = Distribution({"name": "graphtrace", "ext_modules": [
        Extension("graphtrace._speedups", ["graphtrace/_speedups.c"])]})
    cmd = build_ext(dist)
    cmd.inplace = True
    cmd.ensure_finalized()
    cmd.run()
    print("built", os.path.relpath(cmd.get_ext_fullpath("graphtrace._speedups")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
