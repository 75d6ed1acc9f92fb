"""The paced arrival's levers (converge/systems/flink/program/pacing.py; no JVM): the defaults measured in
docs/flink.md ("At campaign speed, on an idle machine") and how CONVERGE_FLINK_PACING overrides them."""

from __future__ import annotations

import pytest

from converge.systems.flink.environment import program_module

pacing = program_module("pacing")


def test_a_mini_batch_job_pauses_longer_than_a_plain_one() -> None:
    default = pacing.parse(None)
    assert default.pause(100) == 10          # 5 ms + 0.05 ms a record
    assert default.pause(100, True) == 45    # 40 ms: a barrier inside a round would split a bundle
    assert pacing.parse("bundle_pause_ms=5").pause(100, True) == 10
    assert pacing.parse("pause_ms=20,pause_per_record_ms=0.5").pause(10) == 25


@pytest.mark.parametrize(("text", "word"), [("pause=3", "expected key=value"), ("guard=1.5", "whole number"),
                                            ("bundle_pause_ms=x", "not a number"), ("interval_ms=5", "least")])
def test_a_bad_setting_names_what_is_wrong(text: str, word: str) -> None:
    with pytest.raises(pacing.PacingError, match=word):
        pacing.parse(text)
