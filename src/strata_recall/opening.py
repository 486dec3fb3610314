"""What ``Strata.open`` needs before it composes the facade: the settings from its arguments
and the environment, the embedder and the store they name, and the process-wide BLAS cap."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from strata_recall.settings import Settings, load_settings

if TYPE_CHECKING:
    from strata_recall.ports import Embedder, Store


def open_parts(path: str | Path | None, *, url: str | None, embedder: Embedder | str | None,
               settings: dict[str, Any], vector_math: bool = True
               ) -> tuple[Store, Embedder, Settings]:
    """The store, embedder and settings for ``Strata.open(path, url=..., embedder=...)``.
    ``vector_math=False`` (a reader of rows) skips the BLAS cap, and so numpy."""
    if isinstance(embedder, str):
        settings["embedder"] = embedder
        embedder = None
    if url is not None:
        settings["database_url"] = url
    if path is not None:
        target = Path(path)
        key = "database_path" if target.suffix in {".db", ".sqlite", ".sqlite3"} else "home"
        settings.setdefault(key, target)
    config = load_settings(**settings)
    if vector_math:
        _limit_blas_threads(config.blas_threads)
    from strata_recall.embedders import make_embedder
    from strata_recall.stores.factory import open_store

    chosen = embedder or make_embedder(
        config.embedder, cache_dir=config.model_cache, cache_size=config.embed_cache_size
    )
    store = open_store(config.database_url, dim=chosen.dim, embedder_name=chosen.name,
                       settings=config)
    return store, chosen, config


def _limit_blas_threads(threads: int | None) -> None:
    """Cap BLAS threads process-wide. Measured at 100k memories: OpenBLAS workers spinning
    after each matmul took the second core from SQLite and the model (recall p95 48 → 24 ms
    with 1 thread; docs/architecture.md)."""
    if threads is not None:
        import numpy  # noqa: F401  (threadpoolctl caps the BLAS already loaded: numpy's)
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=threads, user_api="blas")



def with_install_defaults(settings: Settings, policy: Mapping[str, Any]) -> Settings:
    """[003] §27.3: ``local_only`` defaults to true for new installs; a store that already
    held data at its first open under a recorded policy (an existing install) keeps the old
    default, false, unless the settings say otherwise."""
    from strata_recall.retention import NEW_INSTALL

    if "local_only" in settings.explicit or policy.get(NEW_INSTALL, True):
        return settings
    return settings.replace(local_only=False)
