"""The percentile every figure of the project uses (test reports, docs/reliability.md,
docs/benchmarks.md, the expiry benchmark).

Definition: nearest rank. The p-th percentile of n values is the smallest value
that at least p % of the values are less than or equal to: sorted, the value at
rank ceil(p / 100 * n) (1-based), and the smallest value for p = 0. It is always
one of the measured values, never interpolated; p = 100 is the maximum.

(The figures wrk and the services' Prometheus histograms report are theirs:
wrk's own percentiles, and histogram bucket bounds written "≤".)"""
import math


def percentile(values, p):
    """The nearest-rank p-th percentile (0 ≤ p ≤ 100) of a non-empty collection of numbers."""
    if not 0 <= p <= 100:
        raise ValueError(f"percentile {p} outside 0…100")
    ordered = sorted(values)
    if not ordered:
        raise ValueError("percentile of no values")
    rank = max(1, math.ceil(p / 100 * len(ordered)))
    return ordered[rank - 1]
