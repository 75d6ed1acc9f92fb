"""converge's streaming join engine: changelog model, keyed state, Flink's join operators, runtimes."""
