"""Build graphtrace's optional compiled parts (the tracing path, the emitter,
the dependency search) in place, for a checkout run from its own directory
(PYTHONPATH), as ``pip install`` builds them for an install. Without a C
compiler graphtrace runs in pure Python.

    python3 tools/build_speedups.py
"""
import os
import sys

from setuptools import Distribution, Extension
from setuptools.command.build_ext import build_ext

MODULES = ("_speedups", "_emitter", "_reduce", "_buffers")   # as setup.py lists them
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def main() -> int:
    os.chdir(ROOT)
    dist = Distribution({"name": "graphtrace", "ext_modules": [
        Extension(f"graphtrace.{name}", [f"graphtrace/{name}.c"]) for name in MODULES]})
    cmd = build_ext(dist)
    cmd.inplace = True
    cmd.ensure_finalized()
    cmd.run()
    for name in MODULES:
        print("built", os.path.relpath(cmd.get_ext_fullpath(f"graphtrace.{name}")))
    return 0


if __name__ == "__main__":
    sys.exit(main())
