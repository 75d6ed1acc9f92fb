"""One module per benchmark family; each lists its benchmarks in BENCHES, which reports/tooling/bench.py merges."""
