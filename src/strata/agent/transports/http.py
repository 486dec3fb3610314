"""The HTTP and WebSocket transport, for tests and integrations.

``POST /chat`` runs one message (``"stream": true`` answers the reply's pieces as
``text/plain`` chunks), ``POST /reactions`` applies a reaction (🗑️ undoes feedback),
``POST /proactive/tick`` runs due check-ins, ``POST /dream`` runs the dreaming cycle,
``GET /feed`` lists the dream-channel feed, ``WS /ws`` chats over a WebSocket.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from fastapi import FastAPI, WebSocket, WebSocketDisconnect
from fastapi.responses import StreamingResponse
from pydantic import BaseModel

from strata.agent.dreaming import Dreamer
from strata.agent.runtime import Agent, Incoming, Turn
from strata.agent.scheduler import ProactiveScheduler
from strata.agent.transports.port import dispatch

__all__ = ["ChatIn", "build_app"]


class ChatIn(BaseModel):
    text: str
    user: str
    conversation: str = "default"
    message_id: str | None = None
    reply_to: str | None = None
    reply_to_bot: bool = False
    stream: bool = False

    def incoming(self) -> Incoming:
        return Incoming(self.text, self.user, self.conversation, self.message_id,
                        self.reply_to, self.reply_to_bot)


class ReactionIn(BaseModel):
    user: str
    emoji: str
    message_id: str


def build_app(agent: Agent, *, scheduler: ProactiveScheduler | None = None,
              dreamer: Dreamer | None = None) -> FastAPI:
    app = FastAPI(title="Strata agent")
    feed: list[dict[str, Any]] = []
    lock = threading.Lock()  # one turn at a time: the agent serialises conversations

    def mirror(turn: Turn, message: Incoming | None) -> None:
        feed.append({**turn.to_dict(), "prompt": turn.prompt,
                     "user_message": message.text if message else None})

    agent.feed = mirror
    scheduler = scheduler or ProactiveScheduler(agent)
    dreamer = dreamer or Dreamer(agent)

    @app.post("/chat", response_model=None)
    def chat(body: ChatIn) -> Any:
        if not body.stream:
            with lock:
                reply = dispatch(agent, body.incoming())
                scheduler.touch(body.user, body.conversation)
            return reply.to_dict()
        return StreamingResponse(_pieces(body), media_type="text/plain")

    def _pieces(body: ChatIn) -> Iterator[str]:
        pieces: queue.Queue[str | None] = queue.Queue()

        def work() -> None:
            try:
                with lock:
                    reply = dispatch(agent, body.incoming(), on_piece=pieces.put)
                    scheduler.touch(body.user, body.conversation)
                if reply.turn is None or reply.turn.kind != "reply":
                    pieces.put(reply.text)
            finally:
                pieces.put(None)

        threading.Thread(target=work, daemon=True).start()
        while (piece := pieces.get()) is not None:
            yield piece

    @app.post("/reactions")
    def reaction(body: ReactionIn) -> dict[str, Any]:
        with lock:
            effect = agent.react(body.user, body.message_id, body.emoji)
        return {"undone": effect == "feedback_undone", "effect": effect}

    @app.post("/proactive/tick")
    def tick() -> dict[str, Any]:
        with lock:
            before = len(feed)
            jobs = scheduler.tick()
            agent.strata.work()
            return {"jobs": jobs, "turns": [t for t in feed[before:]
                                            if t["kind"] in ("proactive", "wait")]}

    @app.post("/dream")
    def dream() -> dict[str, Any]:
        with lock:
            return dict(dreamer.run())

    @app.post("/work")
    def work() -> dict[str, int]:
        with lock:
            return {"ran": agent.strata.work()}

    @app.get("/feed")
    def get_feed() -> list[dict[str, Any]]:
        return feed

    @app.websocket("/ws")
    async def socket(ws: WebSocket) -> None:
        await ws.accept()
        try:
            while True:
                body = ChatIn(**(await ws.receive_json()))
                with lock:
                    reply = dispatch(agent, body.incoming())
                    scheduler.touch(body.user, body.conversation)
                await ws.send_json(reply.to_dict())
        except WebSocketDisconnect:
            return

    return app
