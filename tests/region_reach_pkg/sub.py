"""The submodule of region_reach_pkg whose array a test sets (W)."""
W = None
