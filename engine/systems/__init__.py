"""Systems under test other than converge's own engine, each behind the adapter protocol."""
