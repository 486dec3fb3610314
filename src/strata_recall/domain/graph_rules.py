"""The knowledge graph's pure half ([003] §6.4, §13): canonical names, what one memory
contributes to the graph, which entities a query names, and the recall bonus.

Entities merge by canonical name within a team (NFKC, case-folded, diacritics and punctuation
dropped, a leading article and a trailing possessive removed); relations merge by
``(source, relation, target)``. A memory *mentions* an entity; counts are the number of live
memories that mention an entity (or state a relation), so forgetting a memory lowers them and
recovering it restores them. Stores keep the rows; everything that decides lives here.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from strata_recall.domain.text import STOPWORDS, index_tokens

#: Longer "entities" are sentence fragments a rule extractor took for an object, not names.
MAX_ENTITY_WORDS = 5
MAX_ENTITY_CHARS = 120
#: Query n-grams tried against stored canonical names.
MAX_QUERY_NGRAM = 3
MAX_QUERY_KEYS = 64
MAX_DEPTH = 3
_ARTICLES = frozenset({"the", "a", "an"})
#: Stop words a name may hold ("Bank of America", "Tom and Jerry"); any other marks a phrase
#: ("Alice in Paris last June"), which is not one entity.
_NAME_GLUE = frozenset({"of", "and", "de", "s"})
_USER = "user"  # what extractors call the speaker ("User lives in Berlin")
_RELATION = re.compile(r"[^\w]+")


@dataclass(frozen=True, slots=True)
class EntityRef:
    """An entity as one memory names it."""

    name: str  # as written (first spelling wins when entities merge)
    canonical: str  # the merge key
    type: str = "thing"


@dataclass(frozen=True, slots=True)
class RelationRef:
    """A relation as one memory states it, between canonical names."""

    source: str
    relation: str
    target: str
    confidence: float = 1.0


@dataclass(frozen=True, slots=True)
class GraphFacts:
    """What one memory contributes to the graph. Every relation endpoint is an entity."""

    entities: tuple[EntityRef, ...] = ()
    relations: tuple[RelationRef, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.entities)


def facts_to_dict(memory_id: str, facts: GraphFacts) -> dict[str, Any]:
    """A memory's graph links as an export record: names, not ids (ids are the store's)."""
    return {
        "memory_id": memory_id,
        "entities": [{"name": e.name, "canonical": e.canonical, "type": e.type}
                     for e in sorted(facts.entities, key=lambda e: e.canonical)],
        "relations": [{"source": r.source, "relation": r.relation, "target": r.target,
                       "confidence": r.confidence}
                      for r in sorted(facts.relations,
                                      key=lambda r: (r.source, r.relation, r.target))],
    }


def facts_from_dict(data: Mapping[str, Any]) -> GraphFacts:
    return GraphFacts(
        entities=tuple(EntityRef(str(e["name"]), str(e["canonical"]), str(e["type"]))
                       for e in data["entities"]),
        relations=tuple(RelationRef(str(r["source"]), str(r["relation"]), str(r["target"]),
                                    float(r["confidence"])) for r in data["relations"]),
    )


@dataclass(frozen=True, slots=True)
class Entity:
    """A stored entity; ``mentions`` counts the live memories (visible to the reader) that
    mention it."""

    id: str
    name: str
    canonical_name: str
    type: str
    mentions: int
    created_at: datetime

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "name": self.name, "canonical_name": self.canonical_name,
                "type": self.type, "mentions": self.mentions,
                "created_at": self.created_at.isoformat()}


@dataclass(frozen=True, slots=True)
class Edge:
    """A stored relation; ``mentions`` counts the live memories (visible) that state it."""

    id: str
    source_id: str
    relation: str
    target_id: str
    mentions: int
    confidence: float

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "source_id": self.source_id, "relation": self.relation,
                "target_id": self.target_id, "mentions": self.mentions,
                "confidence": self.confidence}


@dataclass(frozen=True, slots=True)
class Neighborhood:
    """An entity and what is reachable from it within ``depth`` relations."""

    entity: Entity
    depth: int
    entities: tuple[tuple[Entity, int], ...]  # (entity, hops from the root), nearest first
    edges: tuple[Edge, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "entity": self.entity.to_dict(), "depth": self.depth,
            "neighbors": [{**e.to_dict(), "hops": hops} for e, hops in self.entities],
            "relations": [e.to_dict() for e in self.edges],
        }


def canonical_name(name: str) -> str:
    """The merge key: ``"The Berlin office"`` and ``"berlin office"`` are one entity;
    ``"Caroline's"`` is ``"caroline"``. Empty when nothing name-like is left."""
    tokens = index_tokens(name)
    if len(tokens) > 1 and tokens[-1] == "s" and re.search(r"['’]s\W*$", name):
        tokens = tokens[:-1]
    while tokens and tokens[0] in _ARTICLES:
        tokens = tokens[1:]
    return " ".join(tokens)


def relation_name(predicate: str) -> str:
    """``"works at"`` → ``"works_at"``: one spelling per relation."""
    return _RELATION.sub("_", predicate.strip().casefold()).strip("_")[:60] or "related_to"


def entity_ref(name: str, *, person: str | None = None) -> EntityRef | None:
    """The entity a name stands for, or None if it is not name-like. ``User`` (how the
    extractors call the speaker) becomes ``person`` when it is known."""
    if name.strip().casefold() == _USER:
        if person is None:
            return EntityRef("User", _USER, "person")
        name = person
        kind = "person"
    else:
        kind = "thing"
    key = canonical_name(name)
    words = key.split()
    if (not words or len(words) > MAX_ENTITY_WORDS or len(name) > MAX_ENTITY_CHARS
            or words[0] in _NAME_GLUE or words[-1] in _NAME_GLUE
            or any(w in STOPWORDS and w not in _NAME_GLUE for w in words)):
        return None
    return EntityRef(name.strip(), key, kind)


def graph_facts(
    entities: Iterable[str], relations: Iterable[tuple[str, str, str, float]], *,
    person: str | None = None,
) -> GraphFacts:
    """A memory's entities and relations from an extractor's names and ``(source, predicate,
    target, confidence)`` triples; a relation whose ends are not name-like is dropped."""
    refs: dict[str, EntityRef] = {}
    kept: dict[tuple[str, str, str], RelationRef] = {}
    for name in entities:
        ref = entity_ref(name, person=person)
        if ref is not None:
            refs.setdefault(ref.canonical, ref)
    for source, predicate, target, confidence in relations:
        start, end = entity_ref(source, person=person), entity_ref(target, person=person)
        if start is None or end is None or start.canonical == end.canonical:
            continue
        refs.setdefault(start.canonical, start)
        refs.setdefault(end.canonical, end)
        key = (start.canonical, relation_name(predicate), end.canonical)
        previous = kept.get(key)
        if previous is None or previous.confidence < confidence:
            kept[key] = RelationRef(*key, confidence=float(confidence))
    return GraphFacts(tuple(refs.values()), tuple(kept.values()))


def query_keys(query: str) -> list[str]:
    """Canonical names a query may name: its 1- to 3-word runs that neither start nor end
    with a stop word, longest first."""
    tokens = index_tokens(query)
    keys: dict[str, None] = {}
    for size in range(MAX_QUERY_NGRAM, 0, -1):
        for start in range(len(tokens) - size + 1):
            gram = tokens[start:start + size]
            if gram[0] in STOPWORDS or gram[-1] in STOPWORDS:
                continue
            keys.setdefault(" ".join(gram), None)
    return list(keys)[:MAX_QUERY_KEYS]


def check_depth(depth: object) -> int:
    from strata_recall.errors import InvalidInput

    if isinstance(depth, bool) or not isinstance(depth, int) or not 1 <= depth <= MAX_DEPTH:
        raise InvalidInput(f"depth must be an integer from 1 to {MAX_DEPTH}")
    return depth


# -- the recall signal ----------------------------------------------------------------------


def entity_weight(mentions: int) -> float:
    """An entity named in every memory tells little: 1 for a rare entity, less for hubs."""
    return 1.0 / (1.0 + math.log(max(mentions, 1)))


def graph_scores(
    links: Sequence[tuple[str, str]], weight_of: Mapping[str, float],
) -> dict[str, float]:
    """Per memory: the sum of the weights of the entities it mentions (``links`` are
    ``(memory id, entity id)`` pairs; ``weight_of`` holds the resolved and neighbour
    entities, neighbours already discounted)."""
    scores: dict[str, float] = {}
    for memory_id, entity_id in dict.fromkeys(links):
        if entity_id in weight_of:
            scores[memory_id] = scores.get(memory_id, 0.0) + weight_of[entity_id]
    return scores


def favour_linked(
    scores: Mapping[str, float], linked: Mapping[str, float], weight: float,
) -> dict[str, float]:
    """Add ``weight`` × half the candidates' score range × (graph score / best graph score);
    unchanged when no candidate, or every candidate, is linked (then it tells nothing apart)."""
    inside = {key: linked[key] for key in scores if linked.get(key, 0.0) > 0}
    if weight <= 0 or not inside or len(inside) == len(scores):
        return dict(scores)
    lift = weight * 0.5 * (max(scores.values()) - min(scores.values()))
    best = max(inside.values())
    return {key: value + lift * inside.get(key, 0.0) / best for key, value in scores.items()}


_SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
_NAME_RUN = re.compile(r"\b[A-Z][\w'’.+#-]*(?:\s+(?:of\s+|de\s+)?[A-Z][\w'’.+#-]*)*")
_NOT_NAMES = frozenset({"i", "i'm", "i've", "i'll", "i'd", "ok", "okay", "user", "mr", "mrs",
                        "ms", "dr"})
#: Words that open a sentence without being part of a name that follows ("Then Bob left").
_OPENERS = STOPWORDS | frozenset({"yesterday", "today", "tomorrow", "also", "well", "oh", "hey",
                                  "hi", "hello", "thanks", "yes", "yeah", "ok", "okay", "wow",
                                  "maybe", "sure", "last", "next", "tonight"})


def proper_names(text: str) -> list[str]:
    """Capitalised runs that do not open a sentence ("we met Anna in New York" → Anna,
    New York): the names a rule extractor does not turn into slot values."""
    found: dict[str, None] = {}
    for sentence in _SENTENCE.split(text):
        for match in _NAME_RUN.finditer(sentence.strip()):
            name = match.group(0).strip(" .'’")
            if match.start() == 0:  # capitalised anyway: a name only after an opener word
                first, _, rest = name.partition(" ")
                name = rest if first.casefold() in _OPENERS else ""
            if name and name.casefold() not in _NOT_NAMES:
                found.setdefault(name, None)
    return list(found)
