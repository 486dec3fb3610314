"""An exchange's episode when some of its turns stop being true (decision 0057). Pure.

An episode is the memory of a whole ``remember(messages=...)``: every line said, chit-chat
included. When a turn of it is superseded ("my flight is UA 482" … "no sorry, UA 842"), the
episode still said the old value, live and recallable, and so did the assistant's reply that
repeated it ("Tracking UA 482 now."). The episode gets a new version without the superseded
turns' lines and without the other speaker's reply right after each that repeats what the
turn said and its successor does not (a name, a number, a code). The raw events and the
episode's earlier versions keep every line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from strata_recall.domain.turn_succession import anchors, said_in


@dataclass(frozen=True, slots=True)
class Line:
    """One line of an episode: the event it says, who spoke, and what."""

    event_id: str
    role: str
    text: str


def stale_lines(lines: Sequence[Line], ended: Mapping[str, str]) -> set[str]:
    """The events whose lines an episode drops: each ended turn (``ended``: its event → the
    text of what replaced it), and the next line when another speaker said it and it repeats
    something specific of the ended turn that the replacement does not say."""
    dropped: set[str] = set()
    for index, line in enumerate(lines):
        if line.event_id not in ended:
            continue
        dropped.add(line.event_id)
        after = lines[index + 1] if index + 1 < len(lines) else None
        if after is None or after.role == line.role or after.event_id in ended:
            continue
        stale = anchors(line.text) - anchors(ended[line.event_id])
        if any(said_in(after.text, a) for a in stale):
            dropped.add(after.event_id)
    return dropped


def without(content: str, event_ids: Sequence[str], dropped: set[str],
            said: Sequence[str] | None = None) -> str | None:
    """The episode's text without the lines of ``dropped`` events (its lines follow its
    events, one each); ``""`` when at most one line would be left (an exchange of one line is
    no episode: it would only repeat that turn); ``None`` when the lines cannot be matched
    to the events. ``said``: each event's line as the episode was built with it, which may
    span several lines of text (a reply with paragraphs); used when the text is theirs."""
    lines = list(said) if said is not None and "\n".join(said) == content \
        else content.split("\n")
    if len(lines) != len(event_ids):
        return None
    kept = [text for text, event in zip(lines, event_ids, strict=True) if event not in dropped]
    return "\n".join(kept) if len(kept) > 1 else ""
