"""The torch export of the encoder: the reference the torch-free export is compared with.

Needs the ``parity`` extra (torch, transformers, onnxscript); the runtime never imports
this module. ``tests/unit/test_bert_graph_parity.py`` and ``scripts/compare_embedders.py`` use it.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import numpy.typing as npt

from strata_recall.embedders._common import hide_load_progress
from strata_recall.embedders.onnx import (
    _INPUTS,
    _OUTPUT,
    MAX_SEQ_LENGTH,
    OPSET,
    _encode,
    _load_tokenizer,
    _new_session,
)
from strata_recall.errors import EmbedderError

if TYPE_CHECKING:
    from strata_recall.embedders.onnx import Int64Array

__all__ = ["export_with_torch"]

_EXPORT_CHECK_TOLERANCE = 1e-4


def export_with_torch(model_dir: Path, out: Path) -> None:
    """Trace the BERT encoder in ``model_dir`` with torch and write it as fp32 ONNX to ``out``."""
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:
        raise EmbedderError(f"the ONNX export needs torch and transformers: {exc}") from exc
    hide_load_progress()
    tokenizer = _load_tokenizer(model_dir)
    ids, mask, types = _encode(tokenizer, ["An example sentence to trace.", "Short one"])
    try:
        model = AutoModel.from_pretrained(
            str(model_dir), local_files_only=True, attn_implementation="eager"
        ).eval()
        wrapper = _last_hidden_state_module(model)
        example = tuple(torch.from_numpy(a) for a in (ids, mask, types))
        with torch.inference_mode(), warnings.catch_warnings():
            warnings.simplefilter("ignore")  # tracer and deprecation chatter
            _torch_onnx_export(torch, wrapper, example, out)
            expected = wrapper(*example).numpy()
    except (OSError, RuntimeError, ValueError, TypeError) as exc:
        raise EmbedderError(f"ONNX export of {model_dir} failed: {exc}") from exc
    _check_export(out, (ids, mask, types), expected)


def _last_hidden_state_module(model: Any) -> Any:
    """A torch module around ``model`` returning only the last hidden state (a plain tensor,
    which is what the exporter wants)."""
    import torch

    class LastHiddenState(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state

    return LastHiddenState().eval()


def _torch_onnx_export(torch: Any, wrapper: Any, example: tuple[Any, ...], out: Path) -> None:
    """The TorchScript exporter while torch still has it (fast, no extra dependency), else
    the dynamo exporter (needs onnxscript). Either result is checked by ``_check_export``."""
    try:
        _legacy_export(torch, wrapper, example, out)
    except (AttributeError, NotImplementedError, RuntimeError, TypeError) as legacy_error:
        try:
            _dynamo_export(torch, wrapper, example, out)
        except (ImportError, NotImplementedError, RuntimeError, TypeError, ValueError) as exc:
            raise EmbedderError(
                f"ONNX export failed: legacy exporter: {legacy_error}; dynamo exporter: {exc}"
            ) from exc


def _legacy_export(torch: Any, wrapper: Any, example: tuple[Any, ...], out: Path) -> None:
    torch.onnx.export(
        wrapper,
        example,
        str(out),
        dynamo=False,
        input_names=list(_INPUTS),
        output_names=[_OUTPUT],
        dynamic_axes={name: {0: "batch", 1: "sequence"} for name in (*_INPUTS, _OUTPUT)},
        opset_version=OPSET,
        do_constant_folding=True,
    )


def _dynamo_export(torch: Any, wrapper: Any, example: tuple[Any, ...], out: Path) -> None:
    """Needs onnxscript; tested with torch 2.13 by forcing this path (same vectors)."""
    batch = torch.export.Dim("batch", max=4096)
    sequence = torch.export.Dim("sequence", max=MAX_SEQ_LENGTH)
    program = torch.onnx.export(
        wrapper,
        example,
        dynamo=True,
        input_names=list(_INPUTS),
        output_names=[_OUTPUT],
        dynamic_shapes={name: {0: batch, 1: sequence} for name in _INPUTS},
        opset_version=max(OPSET, 18),  # the lowest opset the dynamo exporter implements
        external_data=False,
        verbose=False,
    )
    program.save(str(out))


def _check_export(path: Path, feeds: tuple[Int64Array, ...], expected: npt.NDArray[Any]) -> None:
    """Refuse an export whose output differs from torch's on the traced example."""
    session = _new_session(path, threads=1)
    (got,) = session.run([_OUTPUT], dict(zip(_INPUTS, feeds, strict=True)))
    mask = feeds[1].astype(bool)
    diff = float(np.abs(got[mask] - expected[mask]).max())
    if diff > _EXPORT_CHECK_TOLERANCE:
        raise EmbedderError(f"the ONNX export differs from torch by {diff:.2e}; not cached")
