"""The terminal chat, scripted: a reply streams, feedback and the bin are out of band, the
dream sees both and the owner merges its proposal."""

from __future__ import annotations

import io

from strata_recall.agent.dreaming import Dreamer
from strata_recall.agent.runtime import Agent, AgentConfig
from strata_recall.agent.transports.terminal import TerminalChat
from strata_recall.facade import Strata


def test_a_scripted_terminal_session(local_strata: Strata) -> None:
    agent = Agent(local_strata, config=AgentConfig(owners=frozenset({"ana"})))
    dreamer = Dreamer(agent)
    lines = iter(["tell me about dragons", "/feedback fewer words please", "/bin", "/dream",
                  "!proposals", "/quit"])
    out = io.StringIO()
    TerminalChat(agent, user="ana", conversation="t", read=lambda _: next(lines), out=out,
                 dream=lambda: str(dreamer.run())).run()
    text = out.getvalue()
    assert "bot> You said: tell me about dragons" in text
    assert "feedback noted, not part of the conversation" in text
    assert "on the last reply, noted for the next dream" in text
    assert "'signals': {'undo': 1}" in text and "'feedback': 1" in text
    assert "chat (from v1, 1 feedback items, signals: 1 undo)" in text
    assert agent.recent_turns("ana", "t", 10) == ["user: tell me about dragons",
                                                  "bot: You said: tell me about dragons"]
