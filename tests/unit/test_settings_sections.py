"""Every config section is checked when a run's settings are built, before extract: a typo in a
section that only the steps after publish read fails the run at once, not a day late."""

from __future__ import annotations

import pytest

from citecheck.core.config import ConfigError, config_from_mapping
from citecheck.job import JobSettings


@pytest.mark.parametrize(("section", "bad"), [
    ("monitor", {"history_dayz": 28}),
    ("monitor", {"thresholds": {"attachment_rate": {"abs": -1}}}),
    ("report", {"days": 0}),
    ("report", {"dayz": 7}),
])
def test_a_bad_step_section_fails_when_the_settings_are_built(section, bad):
    with pytest.raises(ConfigError, match=section):
        JobSettings(config=config_from_mapping({section: bad}))


def test_good_step_sections_build():
    config = config_from_mapping({"monitor": {"history_days": 20, "min_history": 10}, "report": {"days": 7}})
    assert JobSettings(config=config).config.extra["report"] == {"days": 7}


def test_the_cli_run_refuses_a_bad_section_before_touching_the_warehouse(tmp_path, monkeypatch):
    from citecheck.cli import main

    config = tmp_path / "bad.toml"
    config.write_text("[monitor]\nhistory_dayz = 28\n", encoding="utf-8")
    url = f"sqlite:///{tmp_path}/never.sqlite"
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", url)
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    assert main(["run", "--day", "2026-11-24"]) == 2
    assert not (tmp_path / "never.sqlite").exists()
