"""all-MiniLM-L6-v2 through sentence-transformers on torch (CPU): the reference runtime."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from strata_recall.embedders._common import (
    MODEL_DIM,
    MODEL_NAME,
    bundled_model_dir,
    check_texts,
    empty_matrix,
    force_offline,
    hide_load_progress,
    l2_normalise,
)
from strata_recall.errors import EmbedderError, InvalidInput

if TYPE_CHECKING:
    from strata_recall.embedders._common import Matrix

force_offline()

# One loaded model per model directory per process; the lock makes concurrent first calls
# load it once.
_MODELS: dict[Path, Any] = {}
_MODELS_LOCK = threading.Lock()


def _load_model(model_dir: Path) -> Any:
    """The SentenceTransformer for ``model_dir``, loaded on first use."""
    with _MODELS_LOCK:
        model = _MODELS.get(model_dir)
        if model is None:
            model = _MODELS[model_dir] = _build_model(model_dir)
        return model


def _build_model(model_dir: Path) -> Any:
    if not (model_dir / "modules.json").is_file():
        raise EmbedderError(
            f"no sentence-transformers model in {model_dir}", model_dir=str(model_dir)
        )
    try:
        from sentence_transformers import SentenceTransformer

        hide_load_progress()
        model = SentenceTransformer(str(model_dir), device="cpu", local_files_only=True)
        model.eval()
    except (ImportError, OSError, RuntimeError, ValueError) as exc:
        raise EmbedderError(
            f"could not load the torch embedding model from {model_dir}: {exc}",
            model_dir=str(model_dir),
        ) from exc
    return model


class SentenceTransformerEmbedder:
    """Loads the bundled model lazily, on the first ``embed`` call, once per process."""

    def __init__(self, *, model_dir: Path | None = None, batch_size: int = 32) -> None:
        if batch_size < 1:
            raise InvalidInput("batch_size must be positive", batch_size=batch_size)
        self._model_dir = (model_dir or bundled_model_dir()).resolve()
        self._batch_size = batch_size

    @property
    def name(self) -> str:
        return f"{MODEL_NAME}/torch"

    @property
    def dim(self) -> int:
        return MODEL_DIM

    def load(self) -> None:
        """Load the model now rather than on the first ``embed`` (e.g. at server start)."""
        _load_model(self._model_dir)

    def embed(self, texts: Sequence[str]) -> Matrix:
        items = check_texts(texts)
        if not items:
            return empty_matrix(MODEL_DIM)
        model = _load_model(self._model_dir)
        try:
            vectors = model.encode(
                items,
                batch_size=self._batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        except (RuntimeError, ValueError) as exc:
            raise EmbedderError(f"torch embedding failed: {exc}") from exc
        return _checked(np.asarray(vectors), len(items))


def _checked(vectors: np.ndarray[Any, Any], count: int) -> Matrix:
    if vectors.shape != (count, MODEL_DIM):
        raise EmbedderError(
            f"the model returned shape {vectors.shape}, expected ({count}, {MODEL_DIM})"
        )
    # Already unit length; re-normalising in float64 only removes float32 rounding drift.
    return l2_normalise(vectors)
