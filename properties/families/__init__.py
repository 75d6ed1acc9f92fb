"""One module per property family; each defines PROPERTIES (a list of PropertySpec)."""
