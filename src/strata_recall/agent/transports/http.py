"""The HTTP and WebSocket transport, for tests and integrations.

``POST /chat`` runs one message (``"stream": true`` answers the reply's pieces as
``text/plain`` chunks), ``POST /reactions`` applies a reaction (🗑️ undoes feedback),
``POST /proactive/tick`` runs due check-ins, ``POST /dream`` runs the dreaming cycle,
``GET /feed`` lists the dream-channel feed, ``GET /proposals`` the proposals awaiting a
human, ``WS /ws`` chats over a WebSocket. Who may call what: ``http_auth`` (local mode or
``strata serve``'s tokens).
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Iterator
from typing import Any

from fastapi import Depends, FastAPI, Request, WebSocket, WebSocketDisconnect
from fastapi.responses import JSONResponse, StreamingResponse
from pydantic import BaseModel

from strata_recall.agent.dreaming import Dreamer
from strata_recall.agent.runtime import Agent, Incoming, Turn
from strata_recall.agent.scheduler import ProactiveScheduler
from strata_recall.agent.transports.http_auth import AgentAuth, AuthMode
from strata_recall.agent.transports.port import dispatch
from strata_recall.errors import StrataError, Unauthenticated
from strata_recall.policy import Principal

__all__ = ["ChatIn", "build_app"]


class ChatIn(BaseModel):
    text: str
    user: str | None = None  # a user-pinned token's user when left out
    conversation: str = "default"
    message_id: str | None = None
    reply_to: str | None = None
    reply_to_bot: bool = False
    stream: bool = False

    def incoming(self, user: str) -> Incoming:
        return Incoming(self.text, user, self.conversation, self.message_id,
                        self.reply_to, self.reply_to_bot)


class ReactionIn(BaseModel):
    user: str | None = None
    emoji: str
    message_id: str


def build_app(agent: Agent, *, scheduler: ProactiveScheduler | None = None,
              dreamer: Dreamer | None = None, auth_mode: AuthMode = "local") -> FastAPI:
    app = FastAPI(title="Strata agent")
    feed: list[dict[str, Any]] = []
    lock = threading.Lock()  # one turn at a time: the agent serialises conversations
    auth = AgentAuth(agent.strata, agent.config.team, agent.config.name, auth_mode)

    @app.exception_handler(StrataError)
    async def on_error(request: Request, exc: StrataError) -> JSONResponse:
        headers = {"WWW-Authenticate": "Bearer"} if isinstance(exc, Unauthenticated) else None
        return JSONResponse({"error": {"code": exc.code, "message": exc.message}},
                            status_code=exc.http_status, headers=headers)

    def caller(request: Request) -> Principal:
        return auth.caller(request.headers.get("authorization"),
                           request.client.host if request.client else None)

    def operator(principal: Principal = Depends(caller)) -> Principal:
        auth.operator(principal)
        return principal

    def mirror(turn: Turn, message: Incoming | None) -> None:
        feed.append({**turn.to_dict(), "prompt": turn.prompt,
                     "user_message": message.text if message else None})

    agent.feed = mirror
    scheduler = scheduler or ProactiveScheduler(agent)
    dreamer = dreamer or Dreamer(agent)

    @app.post("/chat", response_model=None)
    def chat(body: ChatIn, principal: Principal = Depends(caller)) -> Any:
        user = auth.speaker(principal, body.user)
        if not body.stream:
            with lock:
                reply = dispatch(agent, body.incoming(user))
                scheduler.touch(user, body.conversation)
            return reply.to_dict()
        return StreamingResponse(_pieces(body, user), media_type="text/plain")

    def _pieces(body: ChatIn, user: str) -> Iterator[str]:
        pieces: queue.Queue[str | None] = queue.Queue()

        def work() -> None:
            try:
                with lock:
                    reply = dispatch(agent, body.incoming(user), on_piece=pieces.put)
                    scheduler.touch(user, body.conversation)
                if reply.turn is None or reply.turn.kind != "reply":
                    pieces.put(reply.text)
            finally:
                pieces.put(None)

        threading.Thread(target=work, daemon=True).start()
        while (piece := pieces.get()) is not None:
            yield piece

    @app.post("/reactions")
    def reaction(body: ReactionIn, principal: Principal = Depends(caller)) -> dict[str, Any]:
        user = auth.speaker(principal, body.user)
        with lock:
            effect = agent.react(user, body.message_id, body.emoji)
        return {"undone": effect == "feedback_undone", "effect": effect}

    @app.post("/proactive/tick", dependencies=[Depends(operator)])
    def tick() -> dict[str, Any]:
        with lock:
            before = len(feed)
            jobs = scheduler.tick()
            agent.strata.work()
            return {"jobs": jobs, "turns": [t for t in feed[before:]
                                            if t["kind"] in ("proactive", "wait")]}

    @app.post("/dream", dependencies=[Depends(operator)])
    def dream() -> dict[str, Any]:
        with lock:
            return dict(dreamer.run())

    @app.post("/work", dependencies=[Depends(operator)])
    def work() -> dict[str, int]:
        with lock:
            return {"ran": agent.strata.work()}

    @app.get("/feed", dependencies=[Depends(operator)])
    def get_feed() -> list[dict[str, Any]]:
        return feed

    @app.get("/proposals", dependencies=[Depends(operator)])
    def proposals() -> list[dict[str, Any]]:
        """The template and extraction proposals awaiting a human (``!approve`` merges)."""
        return [{"id": p.id, "version": p.version, **p.data} for p in agent.registry.pending()]

    @app.websocket("/ws")
    async def socket(ws: WebSocket) -> None:
        try:
            principal = auth.caller(ws.headers.get("authorization"),
                                    ws.client.host if ws.client else None)
        except StrataError as exc:
            await ws.close(code=1008, reason=exc.code)  # refuses the handshake (403)
            return
        await ws.accept()
        try:
            while True:
                body = ChatIn(**(await ws.receive_json()))
                try:
                    user = auth.speaker(principal, body.user)
                except StrataError as exc:
                    await ws.send_json({"error": {"code": exc.code, "message": exc.message}})
                    continue
                with lock:
                    reply = dispatch(agent, body.incoming(user))
                    scheduler.touch(user, body.conversation)
                await ws.send_json(reply.to_dict())
        except WebSocketDisconnect:
            return

    return app
