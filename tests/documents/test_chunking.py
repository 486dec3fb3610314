"""Structure-aware chunking: sections, code fences, overlap, caps and spans."""

from __future__ import annotations

from itertools import pairwise

import pytest

from strata_recall.documents.chunking import chunk
from strata_recall.documents.html_text import html_text
from strata_recall.documents.service import match_chunks
from strata_recall.domain.text import estimate_tokens
from strata_recall.errors import InvalidInput

GUIDE = """# Guide

Intro paragraph.

## Install

Run the installer. It takes a minute.

```console
$ pip install strata
```

## Use

### Recall

Ask a question.
"""


def test_chunks_follow_headings_and_carry_their_path_and_span() -> None:
    chunks = chunk(GUIDE)
    assert [c.heading_path for c in chunks] == [
        ("Guide",), ("Guide", "Install"), ("Guide", "Use", "Recall")]
    install = chunks[1]
    assert "```console\n$ pip install strata\n```" in install.text
    start, end = install.char_span
    assert GUIDE[start:end].startswith("Run the installer.")
    assert GUIDE[start:end].endswith("```")
    assert install.line_span == (7, 11)


def test_a_long_code_block_is_split_into_fenced_pieces_under_the_cap() -> None:
    code = "\n".join(f"print({i})  # line {i} of the example" for i in range(200))
    chunks = chunk(f"# Code\n\n```python\n{code}\n```\n", max_tokens=120)
    assert len(chunks) > 3
    for piece in chunks:
        assert piece.text.startswith("```python\n") and piece.text.endswith("\n```")
        assert estimate_tokens(piece.text) <= 120
    lines = [line for c in chunks for line in c.text.split("\n")[1:-1]]
    assert lines == code.split("\n")  # nothing lost, nothing repeated in code
    assert chunks[1].line_span[0] > chunks[0].line_span[1] - 1


def test_long_prose_is_cut_at_sentences_with_overlap() -> None:
    text = " ".join(f"Sentence number {i} says something about topic {i}." for i in range(120))
    chunks = chunk(f"# Prose\n\n{text}\n", max_tokens=100, overlap_tokens=30)
    assert len(chunks) > 3
    for before, after in pairwise(chunks):
        overlap = after.text.split("\n\n")[0]  # the previous chunk's tail, whole sentences
        assert before.text.endswith(overlap) and overlap != after.text
        assert estimate_tokens(after.text) <= 100


def test_plain_text_has_no_headings_and_bad_caps_are_refused() -> None:
    chunks = chunk("# not a heading\n\nsecond paragraph\n", "text")
    assert chunks[0].heading_path == ()
    with pytest.raises(InvalidInput):
        chunk("x", max_tokens=5)
    with pytest.raises(InvalidInput):
        chunk("x", "pdf")


def test_html_becomes_headed_markdown_without_scripts() -> None:
    text, title = html_text("<html><head><title>T</title><script>evil()</script></head>"
                            "<body><h1>Top</h1><p>Hello <b>there</b>.</p><h2>Sub</h2>"
                            "<pre>x = 1\ny = 2</pre></body></html>")
    assert title == "T"
    chunks = chunk(text)
    assert [c.heading_path for c in chunks] == [("Top",), ("Top", "Sub")]
    assert "evil" not in text
    assert chunks[1].text == "```\nx = 1\ny = 2\n```"


def test_matching_keeps_equal_text_versions_same_heading_and_retires_the_rest() -> None:
    stored = [("a", ("H",)), ("b", ("H",)), ("c", ("Gone",))]
    new = [("a", ("H",)), ("b2", ("H",)), ("d", ("New",))]
    match = match_chunks(new, stored)
    assert match.unchanged == ((0, 0),)
    assert match.updated == ((1, 1),)
    assert match.added == (2,)
    assert match.retired == (2,)
