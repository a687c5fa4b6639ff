"""Hostile profiles: deep nesting is one line, never a RecursionError; warnings reach print mode too."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from tractui.cli.main import main

DEEP_TABLES = 'provider = "demo"\nmodel = "demo"\n[settings' + ".a" * 500 + "]\nx = 1\n"
DEEP_INLINE = 'provider = "demo"\nmodel = "demo"\nx = ' + "{a = " * 500 + "1" + "}" * 500 + "\n"
DEEP_ARRAY = 'provider = "demo"\nmodel = "demo"\nx = ' + "[" * 2000 + "]" * 2000 + "\n"
DEEP_TOP = 'provider = "demo"\nmodel = "demo"\n[extra' + ".a" * 500 + "]\nx = 1\n"


@pytest.fixture
def config(tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("TRACTUI_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("TRACTUI_CONFIG_DIR", str(tmp_path / "config"))
    folder = tmp_path / "config" / "profiles"
    folder.mkdir(parents=True)
    return folder


def run(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = main(list(argv), out=out, err=err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize(
    "text", [DEEP_TABLES, DEEP_INLINE, DEEP_ARRAY, DEEP_TOP], ids=["tables", "inline", "array", "top"]
)
def test_a_deeply_nested_profile_is_one_line(config, text):
    (config / "deep.toml").write_text(text)
    code, out, err = run("-p", "hi", "--profile", "deep", "--json")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "deep.toml" in err and "nested" in err


@pytest.mark.parametrize("kind", ["folder", "dangling link"])
def test_a_profile_that_is_a_folder_or_a_dangling_link_says_so(config, kind):
    """Not "no profile named 'x' (available: …, x, …)", naming it in the list it says it is not in."""
    if kind == "folder":
        (config / "x.toml").mkdir()
    else:
        (config / "x.toml").symlink_to(config / "gone.toml")
    code, out, err = run("-p", "hi", "--profile", "x")
    what = "a folder" if kind == "folder" else "a link to nothing"
    assert code == 2 and out == "" and err == f"tractui: cannot load profile 'x': {config / 'x.toml'} is {what}\n"


@pytest.mark.parametrize(
    "text", [DEEP_TABLES, DEEP_INLINE, DEEP_ARRAY, DEEP_TOP], ids=["tables", "inline", "array", "top"]
)
def test_a_mistyped_name_beside_a_deep_profile_is_one_line(config, text):
    (config / "deep.toml").write_text(text)
    code, out, err = run("-p", "hi", "--profile", "deeq", "--json")
    assert code == 2 and out == ""
    assert len(err.splitlines()) == 1 and "no profile named 'deeq'" in err


def test_print_mode_warns_about_unknown_keys_and_a_pasted_key(config):
    (config / "odd.toml").write_text(
        'provider = "demo"\nmodel = "demo"\ncolour = "blue"\ndescription = "sk-proj-abcdefghijklmnopqrstuvwxyz012345"\n'
        '[settings]\nreasoning.efort = "high"\n'
    )
    code, _out, err = run("-p", "hi", "--profile", "odd", "--json")
    assert code == 0, err
    assert "unknown key 'colour'" in err
    assert "looks like an API key" in err
    assert "reasoning.efort" in err
    assert "sk-proj-abcdefghijklmnopqrstuvwxyz012345" not in err
