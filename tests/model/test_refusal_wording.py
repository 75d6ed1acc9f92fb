"""Issue 41 row 8: a refusal echoes the user's own text and helps with a typo."""

from __future__ import annotations

import pytest

from converge.engine.model.errors import BadInputError, UnsupportedError
from converge.engine.model.flinksql import parse_query

T = """CREATE TABLE orders (id INT, amount INT, ot TIMESTAMP(3), WATERMARK FOR ot AS ot)
  WITH ('connector' = 'kafka', 'format' = 'json');
CREATE TABLE rates (currency INT, rate INT, PRIMARY KEY (currency) NOT ENFORCED)
  WITH ('connector' = 'upsert-kafka', 'key.format' = 'json', 'value.format' = 'json');
"""


def _refusal(sql: str, error: type) -> str:
    with pytest.raises(error) as info:
        parse_query(T + sql, "q.sql")
    assert type(info.value) is error
    return str(info.value)


def test_a_temporal_join_is_echoed_as_written_not_as_sqlglot_prints_it() -> None:
    text = _refusal("SELECT o.id FROM orders o JOIN rates FOR SYSTEM_TIME AS OF o.ot AS r ON o.id = r.currency",
                    UnsupportedError)
    assert "`rates FOR SYSTEM_TIME AS OF o.ot AS r`" in text and "FOR TIMESTAMP" not in text


@pytest.mark.parametrize("written", ["UPPER", "upper", "Char_Length"])
def test_a_function_is_named_as_written(written: str) -> None:
    text = _refusal(f"SELECT o.id FROM orders o JOIN rates r ON o.id = {written}(r.rate)", UnsupportedError)
    assert text.startswith("q.sql:5:") and f"`{written}(r.rate)` {written} is outside the SQL subset" in text


@pytest.mark.parametrize("sql, hint", [
    ("SELECT o.id FROM orders o JOIN rates r ON o.id = r.curency", "'r' has no column 'curency'; did you mean "
                                                                   "'currency'?"),
    ("SELECT o.id FROM orders o JOIN rates r ON o.id = curency", "column 'curency' is unknown; did you mean "
                                                                 "'currency'?"),
    ("SELECT o.id FROM orders o JOIN rate r ON o.id = r.currency", "table 'rate' is not declared; did you mean "
                                                                   "'rates'?"),
    ("SELECT o.id FROM orders o JOIN rates r ON o.id = rr.currency", "unknown table or alias 'rr'; did you mean "
                                                                     "'r'?"),
])
def test_a_typo_gets_a_did_you_mean(sql: str, hint: str) -> None:
    assert hint in _refusal(sql, BadInputError)


def test_no_guess_for_a_name_like_none_of_them() -> None:
    assert "did you mean" not in _refusal("SELECT o.id FROM orders o JOIN rates r ON o.id = r.zzz", BadInputError)


def test_a_stray_comma_before_a_join_is_named_as_such() -> None:
    text = _refusal("SELECT o.id FROM orders o, LEFT JOIN rates r ON o.id = r.currency", BadInputError)
    assert text.startswith("q.sql:5:28: `LEFT` LEFT is read as a table name here: is there a stray comma before it?")
    assert "is not declared" not in text and "\n" not in text  # one refusal, not a second one about scope
