from pathlib import Path

from tractui.config.paths import shipped_dir
from tractui.ui.themes import OUR_VARIABLES, load_themes, variable_defaults


def test_shipped_themes_load_with_our_variables_and_readable_thinking():
    loaded = load_themes([shipped_dir("themes")])
    assert loaded.problems == []
    themes = {t.name: t for t in loaded.themes}
    assert {"tractui-dark", "tractui-light"} <= set(themes)
    for theme in themes.values():
        assert set(OUR_VARIABLES) <= set(theme.variables)
    assert themes["tractui-dark"].dark and not themes["tractui-light"].dark


def test_a_broken_theme_is_one_line_and_skipped(tmp_path: Path):
    (tmp_path / "bad.toml").write_text('name = "bad"\nprimary = "not-a-colour"\n')
    (tmp_path / "odd.toml").write_text('name = "odd"\nprimary = "#fff"\nsparkle = "#000"\n')
    (tmp_path / "ok.toml").write_text('name = "ok"\nprimary = "#336699"\n')
    loaded = load_themes([tmp_path])
    assert [t.name for t in loaded.themes] == ["ok"]
    assert len(loaded.problems) == 2 and all("\n" not in p for p in loaded.problems)
    assert any("bad.toml" in p for p in loaded.problems) and any("sparkle" in p for p in loaded.problems)


def test_a_colour_that_is_not_a_string_is_named_in_words(tmp_path: Path):
    """Not Python's words about the value (``'int' object has no attribute 'startswith'``)."""
    (tmp_path / "num.toml").write_text('name = "num"\nprimary = 12\nsecondary = true\n')
    loaded = load_themes([tmp_path])
    assert loaded.themes == []
    assert loaded.problems == ['theme num.toml: primary, secondary must be a colour string, like "#e0a030"']


def test_builtin_themes_get_thinking_shaded_the_right_way():
    from textual.theme import BUILTIN_THEMES

    for name, dark in (("textual-dark", True), ("textual-light", False)):
        generated = BUILTIN_THEMES[name].to_color_system().generate()
        defaults = variable_defaults(generated, dark)
        assert defaults["thinking-background"] == generated["surface-lighten-1" if dark else "surface-darken-1"]
