"""The packaged NLI calibration pairs (OpenVINO int8) are the ones the sample traffic gives today:
`python -m citecheck.demo.nli_pairs` regenerates the file when the demo changes."""

from __future__ import annotations

from citecheck.demo.nli_pairs import PACKAGED, calibration_pairs, packaged_text
from citecheck.judges.nli import backends


def test_the_packaged_calibration_pairs_are_current():
    assert PACKAGED.read_text(encoding="utf-8") == packaged_text(), "run: python -m citecheck.demo.nli_pairs"


def test_the_judge_reads_them_without_the_demo_package():
    assert backends.calibration_pairs() == calibration_pairs(backends.CALIBRATION_PAIRS)
    assert backends.calibration_pairs(10) == calibration_pairs(10)
