"""How the docs runner reads a page: markers, commands and their continuations, fences."""

from __future__ import annotations

from tests.docs.examples import blocks, fence_problems, marker_before, shell_commands

PAGE = """# Title

<!-- not-run: needs a PostgreSQL server -->

```console
$ strata doctor --url postgresql://db/strata
```

```python
print("runs")
```
"""


def test_a_marker_on_the_last_non_blank_line_before_the_fence_gives_the_reason() -> None:
    lines = PAGE.splitlines()
    console, python = blocks(PAGE)
    assert marker_before(lines, console.line) == "needs a PostgreSQL server"
    assert marker_before(lines, python.line) is None


def test_commands_take_their_continuations_and_leave_the_output() -> None:
    text = "\n".join([
        "$ curl -s localhost:8420/v1/remember -d '{",
        '"text": "tea"}\'',
        '{"event_ids": []}',
        "$ ID=$(strata remember x --json |",
        "    jq -r '.memory_ids[0]')",
        "$ strata list \\",
        "--json",
        "$ cat <<END",
        "a line",
        "END",
        "done"])
    commands = shell_commands(text)
    assert [command for _, command, _ in commands] == [
        "curl -s localhost:8420/v1/remember -d '{\n\"text\": \"tea\"}'",
        "ID=$(strata remember x --json |\n    jq -r '.memory_ids[0]')",
        "strata list \\\n--json",
        "cat <<END\na line\nEND"]
    assert [shown for _, _, shown in commands] == [['{"event_ids": []}'], [], [], ["done"]]
    assert [offset for offset, _, _ in commands] == [0, 3, 5, 7]


def test_an_unclosed_fence_is_reported_where_it_opened() -> None:
    page = "```console\n$ strata stats\n### `strata next`\n\n```console\n$ strata list\n```\n"
    assert fence_problems(page, "docs/x.md") == [
        "docs/x.md:1: heading inside the fence, line 3",
        "docs/x.md:1: fence still open at line 5"]
    assert fence_problems("```console\n$ strata stats\n", "docs/x.md") == [
        "docs/x.md:1: fence never closed"]
