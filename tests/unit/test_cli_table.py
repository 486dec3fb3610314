"""The plain table writer of the read commands: fits the width, wraps cells, keeps every
character of every cell, and never passes a control character to the terminal."""

from __future__ import annotations

import pytest

from strata_recall.cli.table import Table, cell_width, printable, wrap


def _column_text(rendered: str, column: int) -> str:
    """One column's text, top to bottom, without borders, padding or spaces."""
    rows = [line[1:-1].replace("┃", "│").split("│") for line in rendered.splitlines()
            if line[0] in "┃│"]
    return "".join(row[column].replace(" ", "") for row in rows)


def test_a_table_fits_the_width_and_keeps_every_character() -> None:
    table = Table(("id", "content"))
    memory_id = "01a20d06-fcae-7014-b78c-cddeb75035f4"
    content = "Chen joined a tennis league in Valparaiso and trains on weekends."
    table.add_row(memory_id, content)
    rendered = table.render(40)
    assert {cell_width(line) for line in rendered.splitlines()} == {40}
    assert _column_text(rendered, 0) == "id" + memory_id
    assert _column_text(rendered, 1) == "content" + content.replace(" ", "")


def test_a_wide_enough_table_draws_one_line_per_row() -> None:
    table = Table(("when", "kind"))
    table.add_row("2026-11-24T10:00:00", "ADD")
    table.add_row("2026-11-24T10:05:00", "UPDATE")
    lines = table.render(200).splitlines()
    assert lines == [
        "┏━━━━━━━━━━━━━━━━━━━━━┳━━━━━━━━┓",
        "┃ when                ┃ kind   ┃",
        "┡━━━━━━━━━━━━━━━━━━━━━╇━━━━━━━━┩",
        "│ 2026-11-24T10:00:00 │ ADD    │",
        "│ 2026-11-24T10:05:00 │ UPDATE │",
        "└─────────────────────┴────────┘",
    ]


def test_without_a_header_and_with_a_title() -> None:
    table = Table(("field", "value"), title="sqlite store", show_header=False)
    table.add_row("id", "m1")
    lines = table.render(80).splitlines()
    assert lines[0].strip() == "sqlite store"
    assert lines[1].startswith("┌") and "┃" not in "".join(lines)
    assert lines[2] == "│ id │ m1 │"


def test_the_widest_column_gives_way_first() -> None:
    table = Table(("a", "b"))
    table.add_row("x" * 10, "word " * 20)
    widths = [len(cell) - 2 for cell in table.render(40).splitlines()[1].split("┃")[1:-1]]
    assert widths == [10, 40 - 10 - 7]


def test_wrap_breaks_at_spaces_and_inside_long_words() -> None:
    assert wrap("one two three", 7) == ["one two", "three"]
    assert wrap("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert wrap("ab cdefghij", 4) == ["ab", "cdef", "ghij"]
    assert wrap("line one\nline two", 20) == ["line one", "line two"]


def test_wide_characters_take_two_columns() -> None:
    assert cell_width("東京") == 4
    assert cell_width("e\u0301") == 1
    table = Table(("city",))
    table.add_row("東京")
    assert {cell_width(line) for line in table.render(80).splitlines()} == {8}


def test_control_characters_are_shown_escaped_not_sent() -> None:
    assert printable("red \x1b[31mtext\x07") == "red \\x1b[31mtext\\x07"
    assert printable("a\tb\nc") == "a b\nc"
    table = Table(("content",))
    table.add_row("\x1b[2Jwiped")
    assert "\x1b" not in table.render(80)


def test_a_row_of_the_wrong_length_is_refused() -> None:
    with pytest.raises(ValueError, match="a row needs 2 cells, got 1"):
        Table(("a", "b")).add_row("only one")
