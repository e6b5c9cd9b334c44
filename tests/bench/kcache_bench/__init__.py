"""kcache-bench: kcache against its peers, side by side in one run (docs/benchmarks.md)."""
