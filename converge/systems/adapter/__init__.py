"""Any engine behind the adapter protocol: the JSON-lines protocol, the client that runs an adapter, `cmd:`."""
