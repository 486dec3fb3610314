"""The tenancy sweep (issue 14, must show): every operation of the HTTP API's OpenAPI spec and
every MCP tool, called with a token of team A that names team B (in the body, the query, the
path's ids, import records, job ids, session ids, the ``X-Strata-*`` headers), answers 403 or
404 and changes nothing of team B: a snapshot of team B (its export, jobs, entities, counts
and the history horizon) is the same after every call. The same sweep runs for a token of
user alice naming user carol of the same team (``PAIRS``).

The cases are generated from the spec and the tool list, so a new route or tool is swept as
soon as it exists. An operation for which no generator finds a way to name team B fails the
test unless it is in ``NO_SCOPE_INPUT`` (it takes no scope, ids or records at all); every
operation is also called as team A's own, valid request (maintenance for real, with and
without ``dry_run`` and ``background``), which must not change team B either.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from fastapi.testclient import TestClient
from mcp import Client

from strata_recall.api.app import create_app
from strata_recall.domain.models import Scope
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata
from strata_recall.mcp.server import TOOLS, Caller, build_server
from strata_recall.policy import owns
from strata_recall.testing import FakeClock

Schema = dict[str, Any]
A, B = "a", "b"
#: Each party's city: a graph entity of its own (the other entities are shared by name).
CITIES = {"a": "Oslo", "b": "Lima", "alice": "Oslo", "carol": "Lima"}
#: Who names whom: (attacker, its scope), (victim, its scope), and the scopes that name the
#: victim (in bodies, queries, headers and import records).
PAIRS: dict[str, tuple[tuple[str, dict[str, str]], tuple[str, dict[str, str]],
                       tuple[dict[str, str], ...]]] = {
    "team a names team b": (("a", {"team": A}), ("b", {"team": B}),
                            ({"team": B}, {"team": B, "user": "carol"})),
    "alice names carol in team a": (("alice", {"team": A, "user": "alice"}),
                                    ("carol", {"team": A, "user": "carol"}),
                                    ({"user": "carol"}, {"team": A, "user": "carol"})),
}
#: Operations that take no scope, id or record: the team is the token's. Their "own" call
#: (team A's, valid) is the case that shows they leave team B alone.
NO_SCOPE_INPUT = frozenset({
    "GET /healthz", "GET /metrics", "GET /v1/export",
    "POST /v1/maintenance/tiers", "POST /v1/maintenance/decay", "POST /v1/maintenance/retention",
    "GET /v1/whoami", "GET /v1/jobs", "POST /v1/jobs/purge",  # the UI's; the desk refuses tokens
    # mem0's shape names a user (``user_id``), never a team: the token's team is the one
    "POST /mem0/v1/memories/", "GET /mem0/v1/memories/", "DELETE /mem0/v1/memories/",
    "POST /mem0/v1/memories/search/",
})
REFUSED = frozenset({403, 404})
REFUSED_CODES = frozenset({"scope_denied", "not_found"})
PATH_IDS = {"memory_id": "memory", "job_id": "job", "entity_id": "entity",
            "version_id": "version"}


# -- the two teams ------------------------------------------------------------------------------


@dataclass
class Team:
    """One team's token and the ids of what it holds: a live, a pinned and a deleted memory,
    a representation version, a graph entity, a job and a capture session."""

    name: str
    scope: dict[str, str]
    headers: dict[str, str]
    ids: dict[str, str] = field(default_factory=dict)
    memories: list[str] = field(default_factory=list)


def seed(api: TestClient, facade: Strata, name: str, scope: dict[str, str]) -> Team:
    _, secret = facade.create_token("admin", **scope)
    team = Team(name, scope, {"Authorization": f"Bearer {secret}"})

    def remember(text: str, **fields: Any) -> str:
        answer = api.post("/v1/remember", headers=team.headers, json={"text": text, **fields})
        assert answer.status_code == 200, answer.text
        memory_id: str = answer.json()["memory_ids"][0]
        team.memories.append(memory_id)
        return memory_id

    team.ids["memory"] = remember(f"Team {name} roadmap: I moved to {CITIES[name]} with Zed "
                                  "last spring.")
    team.ids["pinned"] = remember(f"Team {name} always deploys on Tuesdays.", pinned=True)
    team.ids["deleted"] = remember(f"Team {name} old plan for the launch.")
    api.delete(f"/v1/memories/{team.ids['deleted']}", headers=team.headers,
               params={"reason": "old"})
    compressed = api.post(f"/v1/memories/{team.ids['memory']}/compress", headers=team.headers,
                          json={})
    assert compressed.status_code == 200, compressed.text
    versions = api.get(f"/v1/memories/{team.ids['memory']}/versions", headers=team.headers)
    team.ids["version"] = versions.json()["items"][0]["id"]
    queued = api.post("/v1/remember", headers=team.headers,
                      json={"text": f"Team {name} later note.", "mode": "async"})
    team.ids["job"] = queued.json()["job_id"]
    team.ids["entity"] = next(e.id for e in facade.graph_entities(scope=scope, limit=100)
                              if e.name == CITIES[name])
    team.ids["session"] = f"session-{name}"
    facade.remember(messages=[{"role": "user", "content": f"Team {name} session talk."}],
                    scope=scope, conversation_id=team.ids["session"])
    return team


def snapshot(facade: Strata, scope: dict[str, str]) -> dict[str, Any]:
    """Everything of ``scope`` a call could change (a team's: also its entities and counts,
    which its users share)."""
    whose = Scope(**scope)
    jobs = [job.to_dict() for job in facade.store.jobs(limit=1000) if owns(whose, job.scope)]
    shot = {
        "export": list(facade.export(scope=whose)),
        "jobs": sorted(jobs, key=lambda job: str(job["id"])),
        "horizon": facade.history_horizon(),
    }
    if set(scope) == {"team"}:
        shot["entities"] = [e.to_dict() for e in facade.graph_entities(scope=scope, limit=100)]
        shot["stats"] = facade.stats(team=scope["team"]).to_dict()
    return shot


@dataclass
class World:
    facade: Strata
    api: TestClient
    clock: FakeClock
    a: Team
    b: Team
    naming: tuple[dict[str, str], ...]  # the scopes that name b
    preview_token: str = ""


def open_store(path: Path, clock: FakeClock) -> Strata:
    """A SQLite store whose jobs run when the test says (``work``), purging tombstones and
    history after a day: with ``clock`` moved on, every maintenance sweep finds work."""
    return Strata.open(path, embedder=HashingEmbedder(), clock=clock, embedded_worker=False,
                       retention_tombstone_days=1, retention_history_days=1)


@pytest.fixture(params=sorted(PAIRS))
def world(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[World]:
    (attacker, its_scope), (victim, victim_scope), naming = PAIRS[request.param]
    clock = FakeClock()
    facade = open_store(tmp_path, clock)
    with TestClient(create_app(facade, auth_mode="token")) as api:
        a = seed(api, facade, attacker, its_scope)
        b = seed(api, facade, victim, victim_scope)
        facade.work()  # the jobs the seeding queued: done before the sweep starts
        # Old enough for every sweep to find work: idle memories, due tombstones and history.
        clock.advance(days=400)
        world = World(facade, api, clock, a, b, naming)
        preview = api.post("/v1/forget", headers=a.headers,
                           json={"mode": "preview", "query": "roadmap plan"})
        world.preview_token = preview.json()["preview_token"]
        yield world
    facade.close()


# -- sample requests from the spec ---------------------------------------------------------------


def resolve(spec: Schema, schema: Schema) -> Schema:
    while "$ref" in schema:
        schema = spec["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    return schema


def branches(spec: Schema, schema: Schema) -> list[Schema]:
    """The object shapes a body may take (each branch of a union; ``null`` left out)."""
    schema = resolve(spec, schema)
    union = schema.get("oneOf") or schema.get("anyOf")
    if union:
        return [b for s in union for b in branches(spec, s)]
    return [] if schema.get("type") == "null" else [schema]


def sample(spec: Schema, schema: Schema, name: str, world: World) -> Any:
    """A valid value for a field of team A's own request."""
    named: dict[str, Any] = {
        "reason": "sweep", "query": "roadmap plan", "text": "sweep note",
        "content": "sweep note", "preview_token": world.preview_token, "to_version": 1,
        "at": "2999-01-01T00:00:00Z", "topic": "roadmap", "ids": [world.a.ids["memory"]],
        "messages": [{"role": "user", "content": "I prefer tea."}],
        "items": [{"id": world.a.ids["memory"], "reason": "sweep", "importance": 0.4}],
    }
    if name in named:
        return named[name]
    shapes = branches(spec, schema)
    if not shapes:
        return None
    shape = shapes[0]
    if "const" in shape or "enum" in shape:
        return shape.get("const", (shape.get("enum") or [None])[0])
    kind = shape.get("type")
    if kind == "object" or "properties" in shape:
        return {key: sample(spec, shape["properties"][key], key, world)
                for key in shape.get("required", ())}
    if kind == "array":
        return [sample(spec, shape["items"], name, world)] * shape.get("minItems", 0)
    return {"integer": shape.get("minimum", 1), "number": 0.5, "boolean": False,
            "string": "sweep"}.get(str(kind), "sweep")


@dataclass(frozen=True)
class Case:
    operation: str
    how: str
    url: str
    params: dict[str, Any] = field(default_factory=dict)
    body: Any = None
    content: bytes | None = None
    batch: bool = False  # a 200 whose every item is refused also counts as refused
    refusals: frozenset[int] = REFUSED
    #: Import records within team A that reuse team B's ids: re-scoped, not refused. They
    #: must answer exactly as the same records with ids nobody holds (an id's existence in
    #: another tenant is not observable) and change nothing of team B.
    rescoped: bool = False

    def send(self, world: World, headers: dict[str, str]) -> httpx.Response:
        method = self.operation.split(" ")[0]
        extra: dict[str, Any] = {"content": self.content} if self.content is not None else (
            {"json": self.body} if self.body is not None else {})
        named = {f"X-Strata-{k.title()}": v for k, v in world.naming[0].items()}
        return world.api.request(method, self.url, params=self.params,
                                 headers={**headers, **named}, **extra)


@dataclass(frozen=True)
class Operation:
    name: str  # "POST /v1/forget"
    spec: Schema  # the OpenAPI document
    op: Schema  # its operation object

    @property
    def path(self) -> str:
        return self.name.split(" ", 1)[1]

    def parameters(self, where: str) -> dict[str, Schema]:
        return {p["name"]: p for p in self.op.get("parameters", ()) if p["in"] == where}

    def bodies(self) -> list[Schema]:
        content = self.op.get("requestBody", {}).get("content", {})
        schema = content.get("application/json", {}).get("schema")
        return branches(self.spec, schema) if schema else []

    def takes_records(self) -> bool:
        return "application/x-ndjson" in self.op.get("requestBody", {}).get("content", {})

    def url(self, team: Team) -> str:
        url = self.path
        for name, kind in PATH_IDS.items():
            url = url.replace("{" + name + "}", team.ids[kind])
        return url

    def query(self, world: World) -> dict[str, Any]:
        return {name: sample(self.spec, p["schema"], name, world)
                for name, p in self.parameters("query").items() if p.get("required")}

    def body(self, shape: Schema, world: World, **override: Any) -> dict[str, Any]:
        body = {key: sample(self.spec, shape["properties"][key], key, world)
                for key in shape.get("required", ())}
        return {**body, **override}


# -- the case generators: each a way of naming team B -------------------------------------------


def b_ids_in_the_path(op: Operation, world: World) -> Iterator[Case]:
    if "{" not in op.path:
        return
    bodies = op.bodies() or [None]
    for kind in ("memory", "pinned", "deleted"):
        ident = world.b.ids[kind]
        if op.path.startswith("/mem0/"):  # a mem0 id carries its scope: b's, named in full
            ident = "|".join((ident, world.b.scope.get("user", ""), "", ""))
        url = op.url(world.b).replace(world.b.ids["memory"], ident)
        for shape in bodies:
            body = op.body(shape, world) if shape is not None else None
            yield Case(op.name, f"b's {kind} ids in the path", url, op.query(world), body)


def b_in_the_query(op: Operation, world: World) -> Iterator[Case]:
    if "team" not in op.parameters("query"):
        return
    shapes = op.bodies() or [None]
    content = b'{"text": "sweep note"}\n' if op.takes_records() else None
    for shape in shapes:
        body = op.body(shape, world) if shape is not None else None
        for scope in world.naming:
            yield Case(op.name, f"{scope} in the query", op.url(world.a),
                       {**op.query(world), **scope}, body, content)


def b_in_the_body_scope(op: Operation, world: World) -> Iterator[Case]:
    for shape in op.bodies():
        if "scope" in shape.get("properties", {}):
            for scope in world.naming:
                yield Case(op.name, f"scope {scope} in the body", op.url(world.a),
                           op.query(world), op.body(shape, world, scope=scope))


def b_ids_in_the_body(op: Operation, world: World) -> Iterator[Case]:
    for shape in op.bodies():
        properties = shape.get("properties", {})
        if "ids" in properties:
            # Ids outside the signed preview are refused before any lookup: the same 422
            # whatever the ids are.
            yield Case(op.name, "b's ids in the body", op.url(world.a), op.query(world),
                       op.body(shape, world, ids=world.b.memories), batch=True,
                       refusals=REFUSED | {422})
        if "items" in properties:
            items = [{"id": i, "reason": "sweep", "content": "mine now"}
                     for i in world.b.memories]
            yield Case(op.name, "b's ids in the body items", op.url(world.a), op.query(world),
                       op.body(shape, world, items=items), batch=True)


def b_user_in_mem0_fields(op: Operation, world: World) -> Iterator[Case]:
    """mem0's shape names a user by ``user_id`` (query or body); its team is the token's."""
    team = world.a.scope.get("team")
    users = dict.fromkeys(s["user"] for s in world.naming
                          if "user" in s and s.get("team", team) == team)
    in_query = "user_id" in op.parameters("query")
    for shape in op.bodies() or [None]:
        in_body = shape is not None and "user_id" in shape.get("properties", {})
        if not (in_query or in_body):
            continue
        for user in users:
            body = op.body(shape, world) if shape is not None else None
            if in_body:
                body = {**(body or {}), "user_id": user}
            params = {**op.query(world), **({"user_id": user} if in_query else {})}
            yield Case(op.name, f"user_id {user}", op.url(world.a), params, body)


def b_in_import_records(op: Operation, world: World) -> Iterator[Case]:
    if not op.takes_records():
        return
    for how, lines in hostile_records(world).items():
        content = "".join(json.dumps(line) + "\n" for line in lines).encode()
        yield Case(op.name, how, op.url(world.a), op.query(world), content=content,
                   rescoped=how in RESCOPED)


def hostile_records(world: World) -> dict[str, list[dict[str, Any]]]:
    """Import lines that name team B, each set one case."""
    exported = list(world.facade.export(scope=Scope(**world.b.scope)))
    b_memory = next(r for r in exported if r["record"] == "memory")
    history = next(r for r in exported if r["record"] == "history")
    own_history = next(r for r in world.facade.export(scope=Scope(**world.a.scope))
                       if r["record"] == "history")
    as_a = {**b_memory, "scope": world.a.scope, "content": "forged",
            "content_hash": FORGED_HASH}
    forged = {**history, "id": "forged-history", "memory_id": b_memory["id"],
              "actor": "mallory",
              "after": {**history["after"], "content": "forged", "scope": world.a.scope}}
    return {
        **{f"plain record scoped to {scope}": [{"text": "into b", "scope": scope}]
           for scope in world.naming},
        **({"plain record scoped to 'b'": [{"text": "into b", "scope": B}]}
           if world.b.scope == {"team": B} else {}),
        "exported memory of team b": [{**b_memory, "id": "new-in-b"}],
        "exported event of team b": [{**next(r for r in exported if r["record"] == "event"),
                                      "id": "new-event-in-b"}],
        "history of b's memory": [forged],
        "version of b's memory": [{"record": "version", "id": "forged-version",
                                   "memory_id": b_memory["id"], "level": 3,
                                   "kind": "summary", "content": "forged",
                                   "created_at": "2026-01-01T00:00:00+00:00"}],
        "graph links of b's memory": [{"record": "graph", "memory_id": b_memory["id"],
                                       "entities": [{"name": "Mallory",
                                                     "canonical": "mallory",
                                                     "type": "person"}],
                                       "relations": []}],
        "b's memory id re-scoped to a, then its history": [as_a, forged],
        "history of a's memory whose snapshot names team b": [{
            **own_history, "id": "snapshot-in-b",
            "after": {**own_history["after"], "scope": world.b.scope}}],
    }


FORGED_HASH = "f" * 64
RESCOPED = frozenset({"b's memory id re-scoped to a, then its history"})


GENERATORS: tuple[Callable[[Operation, World], Iterator[Case]], ...] = (
    b_ids_in_the_path, b_in_the_query, b_in_the_body_scope, b_ids_in_the_body,
    b_in_import_records, b_user_in_mem0_fields,
)


def operations(spec: Schema) -> list[Operation]:
    return [Operation(f"{method.upper()} {path}", spec, op)
            for path, ops in spec["paths"].items() for method, op in ops.items()]


def own_cases(op: Operation, world: World) -> Iterator[Case]:
    """Team A's own valid request; again with each boolean flag of its body set (a
    maintenance run in the background, a compress run over ``everything``), and with all."""
    shapes = op.bodies() or [None]
    content = b'{"text": "own import"}\n' if op.takes_records() else None
    for shape in shapes:
        body = op.body(shape, world) if shape is not None else None
        yield Case(op.name, "a's own request", op.url(world.a), op.query(world), body, content)
        flags = [k for k, v in (shape or {}).get("properties", {}).items()
                 if resolve(op.spec, v).get("type") == "boolean"]
        chosen = [{flag: True} for flag in flags] + (
            [dict.fromkeys(flags, True)] if len(flags) > 1 else [])
        for flagged in chosen:
            yield Case(op.name, f"a's own request {flagged}", op.url(world.a),
                       op.query(world), {**(body or {}), **flagged})


# -- the sweep -------------------------------------------------------------------------------------


def refused(case: Case, response: httpx.Response, world: World) -> bool:
    if case.rescoped:
        unknown = unknown_ids(case, world).send(world, world.a.headers)
        return response.status_code == 200 and response.json() == unknown.json()
    if response.status_code in case.refusals:
        return True
    if case.batch and response.status_code == 200:
        items = response.json().get("items") or response.json().get("results") or []
        return bool(items) and all(not i["ok"] and i["error"]["code"] in REFUSED_CODES
                                   for i in items)
    return False


def unknown_ids(case: Case, world: World) -> Case:
    """``case`` with team B's ids swapped for ids nobody holds."""
    content = (case.content or b"").decode()
    for known in (*world.b.memories, "forged-history", FORGED_HASH):
        content = content.replace(known, uuid.uuid4().hex * 2 if known == FORGED_HASH
                                  else str(uuid.uuid4()))
    return replace(case, content=content.encode())


def test_every_operation_naming_team_b_is_refused_and_changes_nothing_of_team_b(
    world: World,
) -> None:
    spec = world.api.app.openapi()  # type: ignore[attr-defined]
    assert not uncovered(spec, world), "operations no case generator covers"
    failures: list[tuple[Any, ...]] = []
    before = snapshot(world.facade, world.b.scope)
    for op in operations(spec):
        for case in cases_of(op, world):
            response = case.send(world, world.a.headers)
            world.facade.work()
            sent = str(response.request.url) + response.request.content.decode()
            if not refused(case, response, world) or leaks(world, response.text, sent):
                failures.append((case.operation, case.how, response.status_code,
                                 response.text[:300]))
            after = snapshot(world.facade, world.b.scope)
            if after != before:
                failures.append((case.operation, case.how, "changed team b",
                                 changes(before, after)))
                before = after
    for op in operations(spec):
        for case in own_cases(op, world):
            response = case.send(world, world.a.headers)
            world.facade.work()
            assert response.status_code < 500, (case, response.text)
            after = snapshot(world.facade, world.b.scope)
            if after != before:
                failures.append((case.operation, case.how, "changed team b",
                                 changes(before, after)))
                before = after
    assert not failures, "\n".join(map(str, failures))


def cases_of(op: Operation, world: World) -> list[Case]:
    return [case for generate in GENERATORS for case in generate(op, world)]


def uncovered(spec: Schema, world: World) -> list[str]:
    """The operations no generator names team B in, and that take a scope, id or record."""
    return [op.name for op in operations(spec)
            if not cases_of(op, world) and op.name not in NO_SCOPE_INPUT]


def test_a_new_route_without_a_case_generator_fails_the_sweep(world: World) -> None:
    spec = world.api.app.openapi()  # type: ignore[attr-defined]
    new = {**spec, "paths": {**spec["paths"], "/v1/new": {"post": {"parameters": []}}}}
    assert uncovered(new, world) == ["POST /v1/new"]


def leaks(world: World, answer: str, sent: str = "") -> bool:
    """Whether an answer to team A shows team B's text or an id of team B it was not sent."""
    return f"Team {world.b.name} " in answer or any(
        i in answer for i in world.b.ids.values() if i not in sent)


def changes(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """What differs between two snapshots, briefly (for the failure message)."""
    if before["export"] != after["export"]:
        old = {json.dumps(r, sort_keys=True) for r in before["export"]}
        new = {json.dumps(r, sort_keys=True) for r in after["export"]}
        return [f"-{r[:200]}" for r in old - new] + [f"+{r[:200]}" for r in new - old]
    return [f"{key}: {before[key]} -> {after[key]}" for key in before
            if before[key] != after[key]]


# -- the MCP tools ---------------------------------------------------------------------------------


def tool_cases(tool: Any, world: World) -> Iterator[tuple[str, dict[str, str],
                                                          dict[str, Any]]]:
    """(how, the scope the caller names, the arguments) for one tool."""
    properties = tool.input_schema.get("properties", {})
    mine = {name: tool_sample(name, spec, world.a, world)
            for name, spec in properties.items() if name in tool.input_schema.get("required", ())}
    for scope in world.naming:
        yield f"{scope} in the X-Strata headers", scope, mine
    ids = {name for name in properties if name in ("memory_id", "version_id")}
    if ids:
        theirs = {**mine, **{name: tool_sample(name, properties[name], world.b, world)
                             for name in ids}}
        yield "b's ids in the arguments", {}, theirs
    if "session_id" in properties:  # a host's session id is a name within the caller's scope
        yield HOST_SESSION, {}, {**mine, "session_id": world.b.ids["session"]}


HOST_SESSION = "b's host session id in the arguments (acts in a's scope)"


def tool_sample(name: str, spec: Schema, team: Team, world: World) -> Any:
    named: dict[str, Any] = {
        "memory_id": team.ids["memory"], "version_id": team.ids["version"],
        "session_id": team.ids["session"], "reason": "sweep", "query": "roadmap",
        "content": "sweep note", "to_version": 1, "level": "R1",
        "messages": [{"role": "user", "content": "sweep talk"}],
    }
    if name in named:
        return named[name]
    kind = spec.get("type") or next((s.get("type") for s in spec.get("anyOf", ())), "string")
    return {"integer": 1, "number": 0.5, "boolean": False, "array": []}.get(kind, "sweep")


def test_every_mcp_tool_naming_team_b_is_refused_and_changes_nothing_of_team_b(
    world: World,
) -> None:
    principal = world.facade.authenticate(world.a.headers["Authorization"].split(" ")[1])
    named: dict[str, Any] = {}  # the scope the current call names (the X-Strata-* headers)
    server = build_server(world.facade, lambda request: Caller(scope=dict(named),
                                                               principal=principal),
                          profiles="all")
    failures: list[tuple[Any, ...]] = []

    async def sweep() -> None:
        before = snapshot(world.facade, world.b.scope)
        async with Client(server) as client:
            for tool in (await client.list_tools()).tools:
                for how, scope, arguments in tool_cases(tool, world):
                    named.clear()
                    named.update(scope)
                    result = await client.call_tool(tool.name, arguments)
                    world.facade.work()
                    code = (result.structured_content or {}).get("error", {}).get("code")
                    answer = str(result.content)
                    if ((how != HOST_SESSION and (not result.is_error
                                                  or code not in REFUSED_CODES))
                            or leaks(world, answer, json.dumps(arguments))):
                        failures.append((tool.name, how, code, answer[:200]))
                    after = snapshot(world.facade, world.b.scope)
                    if after != before:
                        failures.append((tool.name, how, "changed team b",
                                         changes(before, after)))
                        before = after

    anyio.run(sweep)
    assert not failures, "\n".join(map(str, failures))


def test_an_mcp_session_of_team_b_is_not_found_for_team_a_on_every_tool(world: World) -> None:
    accept = {"Accept": "application/json, text/event-stream"}
    opened = world.api.post("/mcp", headers={**accept, **world.b.headers}, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "sweep", "version": "0"}}})
    session = {**accept, **world.a.headers, "mcp-session-id": opened.headers["mcp-session-id"]}
    tools = [name for name, _ in TOOLS]
    before = snapshot(world.facade, world.b.scope)
    answers = [world.api.post("/mcp", headers=session, json={
        "jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": name, "arguments": {}}}) for name in tools]
    answers += [world.api.get("/mcp", headers=session), world.api.delete("/mcp", headers=session)]
    assert [a.status_code for a in answers] == [404] * (len(tools) + 2)
    assert snapshot(world.facade, world.b.scope) == before
