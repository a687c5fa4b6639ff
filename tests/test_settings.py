"""The settings registry: every key, every parse rule, every refusal."""

from __future__ import annotations

import pytest

from tractui.core.settings import REGISTRY, SPECS, Settings, format_value, parse_int, spec_for
from tractui.errors import SettingError

DESIGN_KEYS = {
    "reasoning.enabled": True,
    "reasoning.includeInContext": False,
    "reasoning.includeInResponse": True,
    "reasoning.effort": None,
    "reasoning.maxTokens": None,
    "reasoning.format": "field",
    "reasoning.stripFromContext": "none",
}
ISSUE_KEYS = {
    "reasoning.fieldName": "reasoning_content",
    "reasoning.summary": "auto",
    "context-limit": 128000,
    "compression-threshold": 0.85,
    "max-tokens": None,
    "temperature": None,
    "retries": 3,
    "timeout": 60.0,
    "reasoning.tags": ("think",),
    "reasoning.startsInThinking": False,
}

# A valid non-default value for every key: proves each one can be set and read back.
SAMPLE_VALUES: dict[str, tuple[str, object]] = {
    "reasoning.enabled": ("off", False),
    "reasoning.includeInContext": ("on", True),
    "reasoning.includeInResponse": ("false", False),
    "reasoning.effort": ("HIGH", "high"),
    "reasoning.maxTokens": ("8k", 8192),
    "reasoning.format": ("Native", "native"),
    "reasoning.mode": ("Adaptive", "adaptive"),
    "reasoning.efforts": ("max,low, high", ("low", "high", "max")),
    "reasoning.display": ("omitted", "omitted"),
    "reasoning.off": ("between_tools", "between_tools"),
    "reasoning.stripFromContext": ("allbutlast", "allButLast"),
    "reasoning.fieldName": ("reasoning", "reasoning"),
    "reasoning.summary": ("detailed", "detailed"),
    "reasoning.tags": ("<think>, thinking", ("think", "thinking")),
    "reasoning.tagsAnywhere": ("true", True),
    "reasoning.startsInThinking": ("on", True),
    "context-limit": ("200k", 204800),
    "compression-threshold": ("0.7", 0.7),
    "max-tokens": ("16k", 16384),
    "max-output": ("64k", 65536),
    "temperature": ("0.6", 0.6),
    "retries": ("5", 5),
    "timeout": ("120", 120.0),
    "system-prompt": ("Be terse.", "Be terse."),
    "system-prompt-as": ("Developer", "developer"),
    "compaction.auto": ("off", False),
    "tools.enabled": ("off", False),
    "tools.maxSteps": ("5", 5),
    "tools.maxResultTokens": ("2k", 2048),
    "compaction.model": ("gpt-4o-mini", "gpt-4o-mini"),
    "compaction.profile": ("deepseek", "deepseek"),
    "compaction.keepTurns": ("2", 2),
    "compaction.keepFraction": ("0.3", 0.3),
    "ui.markdown": ("public", "public"),
}


def test_registry_has_the_keys_and_defaults_the_design_names():
    for key, default in {**DESIGN_KEYS, **ISSUE_KEYS}.items():
        assert REGISTRY[key].default == default, key
    assert set(SAMPLE_VALUES) == set(REGISTRY), "every key needs a sample value in this test"
    assert all(spec.help and spec.help.endswith(".") for spec in SPECS)


@pytest.mark.parametrize("key", sorted(SAMPLE_VALUES))
def test_every_key_sets_reads_back_and_unsets(key):
    raw, expected = SAMPLE_VALUES[key]
    settings = Settings()
    assert settings.set(key, raw) == expected
    assert settings.get(key) == expected
    assert settings.changed() == {key: expected}
    assert settings.is_changed(key)
    settings.unset(key)
    assert settings.get(key) == REGISTRY[key].default
    assert settings.changed() == {}


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("true", True), ("false", False), ("on", True), ("off", False), ("TRUE", True), ("Off", False), (True, True)],
)
def test_booleans_parse_as_typed(raw, expected):
    settings = Settings()
    assert settings.set("reasoning.includeInContext", raw) is expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("8k", 8192),
        ("8K", 8192),
        ("1.5k", 1536),
        ("0.5M", 524288),
        ("0.5m", 524288),
        ("2048", 2048),
        ("16_000", 16000),
        (4096, 4096),
        ("99999999999999999999999", 99999999999999999999999),  # exactly: not rounded through a float
        ("12345678901234567.5k", 12641975194864197120),
    ],
)
def test_sizes_use_k_equals_1024(raw, expected):
    assert Settings().set("reasoning.maxTokens", raw) == expected
    assert parse_int(str(raw)) == expected


@pytest.mark.parametrize("raw", ["1.5", "8q", "k", "-5", "lots", "", "1e3", True])
def test_bad_integers_name_what_is_allowed(raw):
    settings = Settings()
    with pytest.raises(SettingError) as err:
        settings.set("reasoning.maxTokens", raw)
    assert "reasoning.maxTokens" in str(err.value)
    assert "8k, 1.5k and 0.5M" in str(err.value)
    assert settings.get("reasoning.maxTokens") is None


COUNTS = ("compaction.keepTurns", "retries", "tools.maxSteps")  # numbers of things, not of tokens


@pytest.mark.parametrize("key", COUNTS)
@pytest.mark.parametrize("raw", ["1.5k", "2k", "0.01k", "0.5M", "1.5", "2.0", 2.0, "1e1", "-1", True])
def test_counts_take_whole_numbers_only(key, raw):
    """The k and M of token amounts make no count: 1.5k turns is an error, not 1536 turns."""
    settings = Settings()
    before = settings.get(key)
    with pytest.raises(SettingError) as err:
        settings.set(key, raw)
    assert f"for {key}: expected a whole number" in str(err.value) and "\n" not in str(err.value)
    assert settings.get(key) == before and not settings.is_changed(key)


@pytest.mark.parametrize("key", COUNTS)
def test_counts_take_whole_numbers_typed_or_from_toml(key):
    settings = Settings()
    assert settings.set(key, "5") == 5
    assert settings.set(key, 6) == 6
    assert settings.set(key, " 7 ") == 7


def test_every_integer_setting_is_a_count_or_a_token_amount():
    """Token amounts take 8k; the rest are counts (a new integer key must choose)."""
    amounts = {"context-limit", "max-tokens", "max-output", "reasoning.maxTokens", "tools.maxResultTokens"}
    assert {spec.key for spec in SPECS if spec.kind == "int"} == amounts
    assert {spec.key for spec in SPECS if spec.kind == "count"} == set(COUNTS)


def test_numbers_are_bounded_and_finite():
    settings = Settings()
    assert settings.set("temperature", "1.2") == 1.2
    for raw in ("2.5", "-0.1", "nan", "inf", "warm"):
        with pytest.raises(SettingError, match="temperature: expected a number from 0 to 2"):
            settings.set("temperature", raw)
    assert settings.get("temperature") == 1.2
    with pytest.raises(SettingError, match="context-limit"):
        settings.set("context-limit", "100")
    with pytest.raises(SettingError, match="compression-threshold"):
        settings.set("compression-threshold", "1.5")


@pytest.mark.parametrize("raw", ["allbutlast", "AllButLast", "ALLBUTLAST", "allButLast"])
def test_enum_values_match_case_insensitively_and_store_canonical_spelling(raw):
    settings = Settings()
    assert settings.set("reasoning.stripFromContext", raw) == "allButLast"
    assert settings.changed() == {"reasoning.stripFromContext": "allButLast"}


@pytest.mark.parametrize("effort", ["none", "minimal", "low", "medium", "high", "xhigh", "max"])
def test_effort_takes_every_documented_level(effort):
    assert Settings().set("reasoning.effort", effort.upper()) == effort


def test_bad_enum_value_lists_the_choices_and_changes_nothing():
    settings = Settings({"reasoning.effort": "low"})
    with pytest.raises(SettingError) as err:
        settings.set("reasoning.effort", "extreme")
    assert str(err.value) == (
        "bad value 'extreme' for reasoning.effort: expected none, minimal, low, medium, high, xhigh, max"
    )
    assert "\n" not in str(err.value)
    assert settings.get("reasoning.effort") == "low"


def test_unknown_key_suggests_the_closest_and_changes_nothing():
    settings = Settings()
    before = settings.changed()
    with pytest.raises(SettingError) as err:
        settings.set("reasoning.includeInContxt", "true")
    assert str(err.value) == "unknown setting 'reasoning.includeInContxt'; did you mean reasoning.includeInContext?"
    with pytest.raises(SettingError, match="did you mean"):
        settings.get("reasoning.efort")
    with pytest.raises(SettingError, match="/set lists every key"):
        settings.set("zzzz", "1")
    assert settings.changed() == before


def test_key_case_is_forgiven_but_stored_canonically():
    settings = Settings()
    settings.set("Reasoning.IncludeInContext", "on")
    assert settings.changed() == {"reasoning.includeInContext": True}
    assert spec_for("CONTEXT-LIMIT").key == "context-limit"


def test_setting_the_default_back_is_not_a_change():
    settings = Settings()
    settings.set("retries", "5")
    settings.set("retries", "3")
    assert settings.changed() == {}


def test_optional_keys_unset_required_keys_refuse_nothing():
    settings = Settings({"reasoning.effort": "high"})
    settings.unset("reasoning.effort")
    assert settings.get("reasoning.effort") is None
    with pytest.raises(SettingError, match="cannot be unset"):
        settings.set("context-limit", None)


def test_changed_is_in_registry_order_and_copy_is_independent():
    settings = Settings()
    settings.set("temperature", "0.3")
    settings.set("reasoning.enabled", "off")
    assert list(settings.changed()) == ["reasoning.enabled", "temperature"]
    clone = settings.copy()
    clone.set("temperature", "1")
    assert settings.get("temperature") == 0.3


def test_listeners_hear_each_change_and_a_refused_one_changes_nothing():
    settings = Settings({"reasoning.effort": "low"})
    heard: list[str] = []
    settings.subscribe(heard.append)
    settings.set("reasoning.includeInResponse", "off")
    assert heard == ["reasoning.includeInResponse"]
    with pytest.raises(SettingError):
        settings.set("reasoning.effort", "bogus")
    assert settings.changed() == {"reasoning.effort": "low", "reasoning.includeInResponse": False}
    settings.unset("reasoning.effort")
    assert heard == ["reasoning.includeInResponse", "reasoning.effort"]


def test_toml_native_values_are_accepted_and_wrong_types_refused():
    settings = Settings({"reasoning.tags": ["think", "reasoning"], "context-limit": 262144, "timeout": 30})
    assert settings.get("reasoning.tags") == ("think", "reasoning")
    assert settings.get("timeout") == 30.0
    with pytest.raises(SettingError, match="system-prompt"):
        settings.set("system-prompt", 5)
    with pytest.raises(SettingError, match=r"reasoning\.tags"):
        settings.set("reasoning.tags", "not a tag!")


def test_format_value_reads_like_what_a_user_types():
    assert format_value(True) == "true"
    assert format_value(None) == "(unset)"
    assert format_value(("think", "thinking")) == "think,thinking"
    assert format_value(0.85) == "0.85"
    assert format_value(8192) == "8192"


def test_docs_settings_lists_every_key_as_the_registry_defines_it():
    from pathlib import Path

    doc = (Path(__file__).parent.parent / "docs" / "settings.md").read_text(encoding="utf-8")
    rows = {line.split("|")[1].strip().strip("`"): line for line in doc.splitlines() if line.startswith("| `")}
    rows = {k: v for k, v in rows.items() if not k.startswith("/")}
    assert set(rows) == set(REGISTRY), "docs/settings.md must list exactly the registry's keys"
    for spec in SPECS:
        cells = [c.strip() for c in rows[spec.key].split("|")[1:-1]]
        default = format_value(spec.default) if spec.default != "" else "(empty)"
        when = "at once" if spec.display else "next request"
        assert cells[1:4] == [spec.allowed(), default, when], spec.key
        assert cells[4], f"{spec.key} needs a meaning"


def test_the_typed_view_has_one_field_per_registered_key():
    from dataclasses import fields

    from tractui.core.settings_view import SettingsView, field_name

    assert {f.name for f in fields(SettingsView)} == {field_name(key) for key in REGISTRY}


def test_the_view_types_match_the_registry_and_follow_changes():
    import types
    import typing

    from tractui.core.settings_view import SettingsView, field_name

    hints = typing.get_type_hints(SettingsView)
    kinds = {"bool": bool, "int": int, "count": int, "float": float, "str": str, "enum": str, "tags": tuple}
    settings = Settings()
    for spec in SPECS:
        hint = hints[field_name(spec.key)]
        allowed = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
        if spec.optional:
            assert type(None) in allowed, spec.key
        if spec.kind == "enum":
            literal = next(a for a in allowed if typing.get_origin(a) is typing.Literal)
            assert set(typing.get_args(literal)) == set(spec.choices), spec.key
        else:
            assert any(typing.get_origin(a) is kinds[spec.kind] or a is kinds[spec.kind] for a in allowed), spec.key
        assert getattr(settings.view, field_name(spec.key)) == spec.default
    before = settings.view
    settings.set("context-limit", "8k")
    assert settings.view.context_limit == 8192 and before.context_limit == 128000
    settings.unset("context-limit")
    assert settings.view.context_limit == 128000
