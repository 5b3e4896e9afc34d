"""A module a test hands to captured regions, whose array a test sets (W)."""
W = None
