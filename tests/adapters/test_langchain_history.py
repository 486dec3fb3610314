"""``StrataChatMessageHistory`` against LangChain's contract: it answers like LangChain's
``InMemoryChatMessageHistory`` for the same calls, keeps sessions apart, survives a reopen of
the store, and its turns are Strata events in the session's scope."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

pytest.importorskip("langchain_core")

from langchain_core.chat_history import BaseChatMessageHistory, InMemoryChatMessageHistory
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage

from strata_recall.adapters.langchain import StrataChatMessageHistory
from strata_recall.domain.models import Scope
from strata_recall.facade import Strata
from strata_recall.settings import load_settings
from strata_recall.stores.sqlite import SQLiteStore
from tests.conftest import EMBEDDER

CONVERSATION: list[BaseMessage] = [
    SystemMessage("be brief"),
    HumanMessage("my cat is called Miso"),
    AIMessage("ok", tool_calls=[{"name": "remember", "args": {"text": "cat Miso"}, "id": "c1"}]),
    ToolMessage("stored", tool_call_id="c1"),
    AIMessage("ok"),
    HumanMessage("ok"),
    HumanMessage("ok"),
]


def _play(history: BaseChatMessageHistory) -> list[list[BaseMessage]]:
    seen = [list(history.messages)]
    history.add_user_message("hello")
    history.add_ai_message("hi there")
    seen.append(list(history.messages))
    history.add_messages(CONVERSATION)
    seen.append(list(history.messages))
    history.clear()
    seen.append(list(history.messages))
    history.add_message(HumanMessage("again"))
    seen.append(list(history.messages))
    return seen


def test_it_answers_like_langchains_in_memory_history(strata: Strata) -> None:
    assert _play(StrataChatMessageHistory(strata, "s1")) == _play(InMemoryChatMessageHistory())


def test_async_calls_answer_like_the_sync_ones(strata: Strata) -> None:
    async def run(history: BaseChatMessageHistory) -> list[BaseMessage]:
        await history.aadd_messages(CONVERSATION[:3])
        return await history.aget_messages()

    assert asyncio.run(run(StrataChatMessageHistory(strata, "s1"))) == CONVERSATION[:3]


def test_sessions_and_users_are_kept_apart(strata: Strata) -> None:
    alice = StrataChatMessageHistory(strata, "s1", scope={"user": "alice"})
    bob = StrataChatMessageHistory(strata, "s1", scope={"user": "bob"})
    other = StrataChatMessageHistory(strata, "s2", scope={"user": "alice"})
    alice.add_user_message("alice here")
    bob.add_user_message("bob here")
    assert [m.content for m in alice.messages] == ["alice here"]
    assert [m.content for m in bob.messages] == ["bob here"]
    assert other.messages == []
    bob.clear()
    assert [m.content for m in alice.messages] == ["alice here"]


def test_messages_are_events_in_the_session_scope_and_recallable(strata: Strata) -> None:
    StrataChatMessageHistory(strata, "s9", scope={"user": "alice"}).add_messages(CONVERSATION)
    session = Scope(user="alice", run="s9")
    hits = strata.recall("what is the cat called", scope=session).hits
    assert hits[0].memory.content == "human #1: my cat is called Miso"
    events = strata.evidence(hits[0].memory.id, scope=session)
    assert events[0].conversation_id == "s9" and events[0].role == "user"
    assert strata.recall("cat", scope=Scope(user="alice", run="other")).hits == ()


def test_the_history_survives_reopening_the_store(tmp_path: Path) -> None:
    def opened() -> Strata:
        store = SQLiteStore(tmp_path / "s.db", dim=EMBEDDER.dim, embedder_name=EMBEDDER.name)
        return Strata(store, EMBEDDER, settings=load_settings(home=Path("/nonexistent")))

    with opened() as first:
        StrataChatMessageHistory(first, "s1").add_messages(CONVERSATION)
    with opened() as second:
        assert StrataChatMessageHistory(second, "s1").messages == CONVERSATION
