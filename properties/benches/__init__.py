"""One module per benchmark family; each registers its benchmarks with properties.bench.bench."""
