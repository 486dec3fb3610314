"""HTML as the markdown the chunker reads: headings as ``#`` lines, ``<pre>`` as fenced code,
every other block element as a paragraph; scripts, styles and navigation dropped. Pure
(the standard library's ``html.parser``). Spans of HTML chunks refer to this text."""

from __future__ import annotations

from html.parser import HTMLParser

HEADINGS = {f"h{n}": n for n in range(1, 7)}
BLOCKS = frozenset({"p", "div", "section", "article", "main", "li", "tr", "table", "ul", "ol",
                    "dl", "dt", "dd", "blockquote", "br", "header", "footer", "figure",
                    "figcaption", "hr", "body"})
SKIPPED = frozenset({"script", "style", "nav", "noscript", "template", "svg", "head"})


class _Converter(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.out: list[str] = []
        self.line: list[str] = []
        self.title: list[str] = []
        self.skipping = 0
        self.in_title = False
        self.pre = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in SKIPPED:
            self.skipping += 1
        elif tag == "title":
            self.in_title = True
        elif tag == "pre":
            self._flush()
            self.pre += 1
            self.out.append("```")
        elif tag in HEADINGS or tag in BLOCKS:
            self._flush()
        if tag in ("td", "th") and self.line:
            self.line.append(" | ")
        if tag == "li":
            self.line.append("- ")

    def handle_endtag(self, tag: str) -> None:
        if tag in SKIPPED:
            self.skipping = max(0, self.skipping - 1)
        elif tag == "title":
            self.in_title = False
        elif tag == "pre" and self.pre:
            self.out.append("".join(self.line).strip("\n"))
            self.line = []
            self.out.append("```\n")
            self.pre -= 1
        elif tag in HEADINGS:
            text = " ".join("".join(self.line).split())
            self.line = []
            if text:
                self.out.append(f"{'#' * HEADINGS[tag]} {text}\n")
        elif tag in BLOCKS:
            self._flush()

    def handle_data(self, data: str) -> None:
        if self.in_title:
            self.title.append(data)
        elif not self.skipping:
            self.line.append(data)

    def _flush(self) -> None:
        if self.pre:
            return
        text = " ".join("".join(self.line).split())
        self.line = []
        if text and text != "-":
            self.out.append(text + "\n")


def html_text(html: str) -> tuple[str, str | None]:
    """The markdown text of ``html`` and its ``<title>`` (None if it has none)."""
    converter = _Converter()
    converter.feed(html)
    converter.close()
    converter._flush()
    title = " ".join("".join(converter.title).split()) or None
    return "\n".join(converter.out), title
