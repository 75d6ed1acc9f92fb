"""One module per group of benchmarks (what one subsystem or one question measures); each lists its benchmarks in
BENCHES, which converge/cli/bench.py merges."""
