"""Properties checked against a system under test (docs/systems.md): convergence to the batch answer, the
multi-way plan against the binary chain, and the system against converge's reference engine."""
