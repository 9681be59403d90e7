"""The config is closed (issue 35): every section belongs to a layer that reads it, an unknown
section or key is a `ConfigError` naming the nearest known name, and the CLI exits 2 on it before it
touches anything."""

from __future__ import annotations

import pytest

from citecheck.core import config as C
from citecheck.core.config import ConfigError, config_from_mapping
from citecheck.job import JobSettings
from citecheck.warehouse.naming import InvalidName


@pytest.mark.parametrize(("data", "message"), [
    ({"judge": {"model": "x"}}, "unknown section [judge]"),
    ({"validation": {"min_turns": 3}}, "unknown section [validation]"),
    ({"monitr": {}}, "unknown section [monitr] (did you mean [monitor]?)"),
    ({"segmentaton": {"abbreviations": []}}, "did you mean [segmentation]?"),
])
def test_an_unknown_section_is_an_error_with_the_nearest_known_name(data, message):
    with pytest.raises(ConfigError) as raised:
        config_from_mapping(data)
    assert message in str(raised.value)


@pytest.mark.parametrize(("data", "near"), [
    ({"segmentation": {"max_answer_char": 10}}, "segmentation.max_answer_chars"),
    ({"day": {"timezon": "UTC"}}, "day.timezone"),
    ({"claims": {"mod": "rules"}}, "claims.mode"),
    ({"languages": {"de": {"abbreviation": ["gem."]}}}, "languages.de.abbreviations"),
])
def test_an_unknown_key_of_a_core_section_names_the_nearest_key(data, near):
    with pytest.raises(ConfigError, match=f"did you mean {near}"):
        config_from_mapping(data)


@pytest.mark.parametrize(("section", "key", "near", "error"), [
    ("job", "lock_lease", "job.lock_lease_s", ConfigError),
    ("monitor", "alfa", "monitor.alpha", ConfigError),
    ("report", "dayz", "report.days", ConfigError),
    ("warehouse", "shema", "warehouse.schema", InvalidName),
])
def test_an_unknown_key_of_a_layer_section_fails_the_settings_with_the_nearest_key(section, key, near, error):
    config = config_from_mapping({section: {key: 1}})  # core keeps a layer's section for its layer
    with pytest.raises(error, match=f"unknown key {section}.{key} \\(did you mean {near}\\?\\)"):
        JobSettings(config=config)


def test_every_layer_section_is_registered_by_the_layer_that_reads_it():
    import citecheck.job.settings  # noqa: F401  (imports every reader of a layer section)

    registered = C.registered_sections()
    assert set(registered) == set(C.LAYER_SECTIONS)
    for section, keys in registered.items():
        assert keys, section
        config = config_from_mapping({section: {keys[0] + "_typo": 1}})
        with pytest.raises((ConfigError, InvalidName), match=f"did you mean {section}.{keys[0]}"):
            JobSettings(config=config)


def test_only_a_layer_section_can_be_registered():
    with pytest.raises(ValueError, match="not a layer section"):
        C.register_section("judge", ("model",))


@pytest.mark.parametrize("text", ["[judge]\nmodel = 'x'\n", "[validation]\nmin_turns = 1\n", "[job]\nlock_wait = 3\n",
                                  "[monitor]\nhistory_dayz = 3\n"])
@pytest.mark.parametrize("command", [["metrics", "--day", "2026-11-24"], ["stale", "--from", "2026-11-20",
                                                                            "--to", "2026-11-24"]])
def test_the_cli_exits_2_on_an_unknown_name_before_opening_the_warehouse(text, command, tmp_path, monkeypatch,
                                                                         capsys):
    from citecheck.cli import main

    config = tmp_path / "citecheck.toml"
    config.write_text(text, encoding="utf-8")
    monkeypatch.setenv("CITECHECK_WAREHOUSE_URL", f"sqlite:///{tmp_path}/never.sqlite")
    monkeypatch.setenv("CITECHECK_CONFIG", str(config))
    assert main(command) == 2
    assert "config: unknown" in capsys.readouterr().err
    assert not (tmp_path / "never.sqlite").exists()


def test_score_and_parse_exit_2_on_an_unknown_section(tmp_path, capsys):
    from citecheck.cli import main

    config = tmp_path / "citecheck.toml"
    config.write_text("[judge]\nmodel = 'x'\n", encoding="utf-8")
    turns = tmp_path / "turns.jsonl"
    turns.write_text("", encoding="utf-8")
    assert main(["parse", "--turns", str(turns), "--config", str(config)]) == 2
    assert "unknown section [judge]" in capsys.readouterr().err
