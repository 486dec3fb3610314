"""The API-token port (``TokenStore``), held to the same contract by every Store adapter."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from strata_recall.errors import DuplicateContent
from strata_recall.ports import Store, TokenRecord

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def record(token_id: str, token_hash: str, **fields: object) -> TokenRecord:
    values: dict[str, object] = {"role": "writer", "team": "a", "created_at": T0, **fields}
    return TokenRecord(id=token_id, token_hash=token_hash, **values)  # type: ignore[arg-type]


def test_a_stored_token_is_found_by_its_hash_with_every_field(store: Store) -> None:
    stored = record("t1", "h1", role="operator", user="u", agent="bot", label="ci")
    store.put_token(stored)
    assert store.token_by_hash("h1") == stored
    assert store.token_by_hash("h2") is None


def test_tokens_are_listed_oldest_first(store: Store) -> None:
    store.put_token(record("t2", "h2", created_at=T0 + timedelta(seconds=5)))
    store.put_token(record("t1", "h1"))
    assert [t.id for t in store.tokens()] == ["t1", "t2"]


def test_an_id_or_hash_cannot_be_stored_twice(store: Store) -> None:
    store.put_token(record("t1", "h1"))
    for duplicate in (record("t1", "other"), record("other", "h1")):
        with pytest.raises(DuplicateContent):
            store.put_token(duplicate)
    assert [t.id for t in store.tokens()] == ["t1"]


def test_revoking_marks_the_token_once(store: Store) -> None:
    store.put_token(record("t1", "h1"))
    at = T0 + timedelta(hours=1)
    assert store.revoke_token("t1", at) is True
    assert store.token_by_hash("h1") == record("t1", "h1", revoked_at=at)
    assert store.revoke_token("t1", at + timedelta(hours=1)) is False  # already revoked
    assert store.revoke_token("missing", at) is False
    assert store.token_by_hash("h1").revoked_at == at  # type: ignore[union-attr]
