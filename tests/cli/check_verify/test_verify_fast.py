"""`converge verify`'s DuckDB fast path: taken on the common JSON-lines form, equal to the strict path, and
never the source of a refusal or a divergence (those come from the strict path, with the same message)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from converge.cli.benches.verify_capture import QUERY, write_capture
from converge.engine.model.errors import BadInputError, DivergenceError
from converge.engine.model.flinksql import load_query
from converge.properties import verify_capture as strict_module
from converge.properties import verify_fast
from converge.properties.verify_capture import verify_capture
from tests.support.captures import LEFT_JOIN, left_join_capture


@pytest.fixture(scope="module")
def long_capture(tmp_path_factory) -> tuple[dict[str, Path], Path]:
    sources, output, outputs = write_capture(tmp_path_factory.mktemp("fast"), 1200)
    assert outputs > 2000
    return sources, output


def _outcome(query, sources, output, *, fast: bool, monkeypatch) -> object:
    """The result (seconds zeroed) or the refusal/divergence, with the fast path on or off."""
    with monkeypatch.context() as m:
        if not fast:
            m.setattr(strict_module, "fast_verify", lambda *args: None)
        try:
            result = verify_capture(query, sources, output)
        except (BadInputError, DivergenceError) as exc:
            return type(exc).__name__, str(exc)
    result.seconds = 0.0
    return result


def _both(query, sources, output, monkeypatch) -> tuple[object, object, bool]:
    """(fast-path outcome, strict outcome, whether the fast path confirmed the verify)."""
    before = verify_fast.taken
    fast = _outcome(query, sources, output, fast=True, monkeypatch=monkeypatch)
    taken = verify_fast.taken > before
    return fast, _outcome(query, sources, output, fast=False, monkeypatch=monkeypatch), taken


def test_the_fast_path_is_taken_and_gives_the_strict_result(long_capture, monkeypatch) -> None:
    sources, output = long_capture
    fast, strict, taken = _both(load_query(QUERY), sources, output, monkeypatch)
    assert taken and fast == strict
    assert (fast.mode, fast.input_events, fast.notes) == ("prefix", 1200, [])
    assert fast.output_records == len(output.read_text().splitlines()) and fast.checkpoints > 100


def test_a_passing_fast_verify_never_walks_the_output(long_capture, monkeypatch) -> None:
    def refuse(*args, **kwargs):
        raise AssertionError("the strict walk ran")
    monkeypatch.setattr(strict_module, "_compare_history", refuse)
    sources, output = long_capture
    assert verify_capture(load_query(QUERY), sources, output).mode == "prefix"


def test_the_small_left_join_capture_is_taken_and_equal(tmp_path: Path, monkeypatch) -> None:
    orders, payments, out, outputs = left_join_capture(tmp_path)
    fast, strict, taken = _both(load_query(LEFT_JOIN), {"orders": orders, "payments": payments}, out, monkeypatch)
    assert taken and fast == strict and fast.output_records == len(outputs)
    # positions where the answer or the output changes, by hand from tests/support/captures.py::left_join_events (the
    # residual condition is paid >= amount): 0 (order 1, padded), 2 (payment 101 joins), 3 (the update to 2.00
    # joins payment 100 too), 4 (101 retracted), 6 (100 deleted: padded again), 7 (order 2, padded, the last);
    # not 1 (3.00 < 5.00) nor 5 (1.00 < 2.00)
    assert fast.checkpoints == 6


def _edit(output: Path, tmp_path: Path, edit) -> tuple[Path, list[dict]]:
    records = [json.loads(line) for line in output.read_text().splitlines()]
    edited = edit(records)
    path = tmp_path / "output.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in edited))
    return path, records


def _pick(records: list[dict], kind: str = "+I") -> int:
    """An output record two thirds in whose row is held (later records exist after it)."""
    n = len(records) * 2 // 3
    while records[n]["op"] != kind or records[n]["carrier"] is None or records[n]["pos"] == records[n - 1]["pos"]:
        n += 1
    return n


def _show(r: dict) -> str:
    return f"(order_id={r['order_id']}, amount={r['amount']}, paid={r['paid']}, carrier={r['carrier']!r})"


def test_a_changed_value_is_found_where_the_strict_path_finds_it(long_capture, tmp_path, monkeypatch) -> None:
    sources, output = long_capture
    records = [json.loads(line) for line in output.read_text().splitlines()]
    n = _pick(records)
    changed = dict(records[n], carrier="nobody")
    path, _ = _edit(output, tmp_path, lambda rs: rs[:n] + [changed] + rs[n + 1:])
    fast, strict, taken = _both(load_query(QUERY), sources, path, monkeypatch)
    assert not taken and fast == strict and fast[0] == "DivergenceError"
    pos = records[n]["pos"]  # write_capture gives each input record its index as position
    assert f"after input record {pos} (pos {pos}," in fast[1]
    assert f"1 extra: {_show(changed)}  (output lines [{n + 1}]" in fast[1]
    assert f"1 missing: {_show(records[n])}" in fast[1]


def test_a_dropped_record_is_found(long_capture, tmp_path, monkeypatch) -> None:
    sources, output = long_capture
    records = [json.loads(line) for line in output.read_text().splitlines()]
    n = _pick(records)
    path, _ = _edit(output, tmp_path, lambda rs: rs[:n] + rs[n + 1:])
    fast, strict, taken = _both(load_query(QUERY), sources, path, monkeypatch)
    assert not taken and fast == strict and fast[0] == "DivergenceError"
    assert f"after input record {records[n]['pos']} (pos {records[n]['pos']}," in fast[1]
    assert f"1 missing: {_show(records[n])}" in fast[1]


def test_a_duplicated_record_is_found(long_capture, tmp_path, monkeypatch) -> None:
    sources, output = long_capture
    records = [json.loads(line) for line in output.read_text().splitlines()]
    n = _pick(records)
    path, _ = _edit(output, tmp_path, lambda rs: rs[:n + 1] + [rs[n]] + rs[n + 1:])
    fast, strict, taken = _both(load_query(QUERY), sources, path, monkeypatch)
    assert not taken and fast == strict and fast[0] == "DivergenceError"
    assert f"after input record {records[n]['pos']} (pos {records[n]['pos']}," in fast[1]
    assert f"1 extra: {_show(records[n])}  (output lines [{n + 1}, {n + 2}]" in fast[1]


def test_a_retraction_without_its_insert_is_found(long_capture, tmp_path, monkeypatch) -> None:
    sources, output = long_capture
    records = [json.loads(line) for line in output.read_text().splitlines()]
    n = _pick(records)
    ghost = dict(records[n], op="-D", order_id=10**9)  # a row no record ever inserted
    path, _ = _edit(output, tmp_path, lambda rs: rs[:n] + [ghost] + rs[n:])
    fast, strict, taken = _both(load_query(QUERY), sources, path, monkeypatch)
    assert not taken and fast == strict and fast[0] == "DivergenceError"
    assert (f"1 missing (the output retracts it at line {n + 1} without holding it): {_show(ghost)}  "
            f"(output lines [{n + 1}])") in fast[1]


def test_a_position_out_of_order_is_refused(long_capture, tmp_path, monkeypatch) -> None:
    sources, output = long_capture
    records = [json.loads(line) for line in output.read_text().splitlines()]
    n = _pick(records)
    early = dict(records[n], pos=records[n - 1]["pos"] - 1)  # before the record above it
    path, _ = _edit(output, tmp_path, lambda rs: rs[:n] + [early] + rs[n + 1:])
    fast, strict, taken = _both(load_query(QUERY), sources, path, monkeypatch)
    assert not taken and fast == strict
    assert fast == ("BadInputError", f"{path}:{n + 1}:1: positions go backwards")


_FORMS = [
    ('"op": "+I"', '"op": "INSERT"', True),                   # a kind by its RowKind name
    ('"op": "+I"', '"op": "+i"', True),                       # a kind in lower case
    ('"order_id": 1,', '"Order_ID": 1,', True),               # a case-folded column name
    ('"amount": "5.00"', '"amount": "5.0"', True),            # a DECIMAL at another scale
    ('"amount": "5.00"', '"amount": "5.001"', True),          # ... rounded HALF_UP to the same value
    ('"amount": "5.00"', '"amount": "05.00"', True),          # ... with a leading zero
    ('"amount": "5.00"', '"amount": 5', True),                # ... as a JSON integer
    ('"amount": "5.00"', '"amount": 5.00', True),             # ... as a JSON number
    ('"order_id": 1,', '"order_id": "1",', True),             # a string where a number goes
    ('"order_id": 1,', '"order_id": 7, "order_id": 1,', True),  # a duplicate key (the last wins)
    ('"method": null}', '"method": null, "note": "x"}', True),  # a key the query does not have
    ('{"op": "-D", "pos": 2,', '{"pos": 2, "op": "-D",', True),  # keys in another order than the first line's
    ('"cash"', '"\\u0063ash"', True),                        # an escape in a string
    ('{"op"', '\ufeff{"op"', True),                           # a byte-order mark
    ('\n', '\n\n', True),                                     # a blank line
    ('\n', '\r\n', True),                                     # a CRLF line end
    ('"payment_id": 101', '"payment_id": 9223372036854775808', False),  # out of BIGINT's range
    ('"order_id": 1,', '"order_id": true,', False),           # a boolean where a number goes
    ('"pos": 0', '"pos": 0.0', False),                        # a position that is not an integer
    ('"paid": "6.00"', '"paid": NaN', False),                 # NaN, which json.loads reads
    ('"amount": "5.00"', '"amount": "123456789.00"', False),  # more digits than DECIMAL(10, 2) holds
]


@pytest.mark.parametrize("old, new, passes", _FORMS)
def test_records_outside_the_common_form_get_the_strict_result(tmp_path: Path, monkeypatch, old: str, new: str,
                                                               passes: bool) -> None:
    orders, payments, out, _ = left_join_capture(tmp_path)
    text = out.read_text(encoding="utf-8")
    assert old in text
    out.write_text(text.replace(old, new, 1), encoding="utf-8", newline="")
    fast, strict, taken = _both(load_query(LEFT_JOIN), {"orders": orders, "payments": payments}, out, monkeypatch)
    assert not taken and fast == strict
    assert isinstance(fast, strict_module.VerifyResult) == passes, fast


@pytest.mark.parametrize("bad", [b"\xff", b"\xed\xa0\x80", b"\xc0\x80"])  # a stray byte, a surrogate, overlong
def test_a_non_utf8_byte_is_refused_by_the_strict_reader(tmp_path: Path, monkeypatch, bad: bytes) -> None:
    orders, payments, out, _ = left_join_capture(tmp_path)
    data = out.read_bytes().replace(b'"cash"', b'"ca' + bad + b'sh"', 1)
    out.write_bytes(data)
    fast, strict, taken = _both(load_query(LEFT_JOIN), {"orders": orders, "payments": payments}, out, monkeypatch)
    assert not taken and fast == strict
    line = data.split(b"\n")[2]  # the first "cash" is on the third line
    assert fast == ("BadInputError", f"{out}:3:{line.index(bad) + 1}: not UTF-8 text (byte {bad[0]:#04x})")


def test_compact_json_and_non_ascii_strings_are_taken(tmp_path: Path, monkeypatch) -> None:
    orders, payments, out, _ = left_join_capture(tmp_path)
    for path in (payments, out):
        text = path.read_text(encoding="utf-8").replace('"cash"', '"caśh€"')
        path.write_text(text.replace('": ', '":').replace(', "', ',"'), encoding="utf-8")
    assert out.read_text(encoding="utf-8").startswith('{"op":"+I","pos":0,"order_id":1,')
    fast, strict, taken = _both(load_query(LEFT_JOIN), {"orders": orders, "payments": payments}, out, monkeypatch)
    assert taken and fast == strict and isinstance(fast, strict_module.VerifyResult)


def test_the_oracles_changes_wrapped_and_unordered_are_the_same_rows(tmp_path: Path) -> None:
    """The fast path's form of the oracle query (a CREATE in front, no ORDER BY) holds the same changes."""
    from converge.oracle.history_intervals import IntervalOracle, bulk_connection, intervals_sql
    from tests.support.captures import left_join_events
    scenario = load_query(LEFT_JOIN).scenario(left_join_events())
    ordered = [(p, d, *row) for p, d, row in IntervalOracle(bulk_connection()).changes(scenario)]
    assert [p for p, *_ in ordered] == sorted(p for p, *_ in ordered) and len(ordered) >= 8
    wrapped = intervals_sql(scenario, "changes", prefix="SELECT * FROM (", suffix=") AS q", ordered=False)
    assert wrapped.startswith("SELECT * FROM (WITH ") and "ORDER BY" not in wrapped.rsplit("GROUP BY", 1)[1]
    assert sorted(bulk_connection().execute(wrapped).fetchall(), key=repr) == sorted(ordered, key=repr)
