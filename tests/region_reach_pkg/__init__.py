"""A package a test hands to captured regions: its submodule holds the array."""
from . import sub  # noqa: F401
