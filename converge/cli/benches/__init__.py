"""One module per benchmark family; each lists its benchmarks in BENCHES, which converge/cli/bench.py merges."""
