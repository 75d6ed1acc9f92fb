"""One module per benchmark family; each registers its benchmarks with reports.tooling.bench.bench."""
