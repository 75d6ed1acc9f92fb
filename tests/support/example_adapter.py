"""The example adapter of docs/adapter-protocol.md, as printed, and the line that makes its LEFT joins pad: the
conformance kit's, adapter debugging's and `converge check --system`'s tests run it, and mutants of it made by
replacing a line."""

from __future__ import annotations

from tests.support.doc_examples import code_blocks

EXAMPLE = next(b.code for b in code_blocks() if b.page == "docs/adapter-protocol.md" and "CAPABILITIES" in b.code)
PADDING = 'keyword = "JOIN" if join["types"][0] == "inner" else "LEFT JOIN"'
