"""The optional compiled tracing path: built where a C compiler is present,
skipped (with a warning) where it is not; graphtrace then runs in pure Python."""
from setuptools import Extension, setup

setup(ext_modules=[Extension("graphtrace._speedups", ["graphtrace/_speedups.c"], optional=True)])
