"""An HTTP client over a real facade on a real SQLite store, with the hashing embedder."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from strata_recall.api.app import create_app
from strata_recall.embedders.hashing import HashingEmbedder
from strata_recall.facade import Strata

Remember = Callable[..., str]


@pytest.fixture
def facade(tmp_path: Path) -> Iterator[Strata]:
    strata = Strata.open(tmp_path, embedder=HashingEmbedder())
    yield strata
    strata.close()


@pytest.fixture
def client(facade: Strata) -> Iterator[TestClient]:
    with TestClient(create_app(facade)) as http:
        yield http


@pytest.fixture
def remember(client: TestClient) -> Remember:
    """POST /v1/remember a text in team ``a`` (unless told otherwise); returns the memory id."""

    def call(text: str, team: str = "a", **fields: Any) -> str:
        response = client.post("/v1/remember", json={"text": text, "scope": {"team": team},
                                                     **fields})
        assert response.status_code == 200, response.text
        memory_id: str = response.json()["memory_ids"][0]
        return memory_id

    return call
