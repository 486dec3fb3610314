"""The BERT encoder as an ONNX graph, built from safetensors weights with numpy and ``onnx``.

This is the torch-free export: it reads ``model.safetensors`` and ``config.json`` of a
BERT-family checkpoint (all-MiniLM-L6-v2 here) and writes the same computation transformers'
``BertModel`` does in eager mode (embeddings, then N post-norm layers of 12-head self-attention
and a GELU feed-forward block), returning ``last_hidden_state``. Weights become initializers;
``Linear`` layers become ``MatMul`` on the transposed weight plus ``Add``, the shape the int8
quantizer recognises. ``tests/unit/test_bert_graph_parity.py`` compares it with the torch
export when torch is installed (the ``parity`` extra).
"""

from __future__ import annotations

import json
import math
import struct
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from strata_recall.errors import EmbedderError

__all__ = ["BertConfig", "build_bert_onnx", "read_safetensors"]

Array = npt.NDArray[Any]

_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}
# Added to the attention scores of padding tokens: exp() of it is exactly 0 in float32.
_MASKED_SCORE = -10000.0


def read_safetensors(path: Path) -> dict[str, Array]:
    """The tensors of a ``.safetensors`` file: an 8-byte little-endian header length, a JSON
    header of ``{name: {dtype, shape, data_offsets}}``, then the raw bytes."""
    try:
        raw = path.read_bytes()
        (length,) = struct.unpack("<Q", raw[:8])
        header = json.loads(raw[8 : 8 + length])
    except (OSError, struct.error, ValueError) as exc:
        raise EmbedderError(f"could not read the weights {path}: {exc}") from exc
    data = memoryview(raw)[8 + length :]
    tensors: dict[str, Array] = {}
    for name, spec in header.items():
        if name == "__metadata__":
            continue
        dtype = _DTYPES.get(spec["dtype"])
        if dtype is None:
            raise EmbedderError(f"unsupported dtype {spec['dtype']} for {name} in {path}")
        start, end = spec["data_offsets"]
        flat = np.frombuffer(data[start:end], dtype=dtype)
        wanted = np.float32 if dtype is np.float16 else dtype
        tensors[name] = flat.reshape(spec["shape"]).astype(wanted)
    return tensors


@dataclass(frozen=True, slots=True)
class BertConfig:
    layers: int
    heads: int
    hidden: int
    layer_norm_eps: float

    @classmethod
    def from_file(cls, path: Path) -> BertConfig:
        try:
            config = json.loads(path.read_text())
        except (OSError, ValueError) as exc:
            raise EmbedderError(f"could not read the model config {path}: {exc}") from exc
        if config.get("model_type") != "bert" or config.get("hidden_act", "gelu") != "gelu":
            raise EmbedderError(f"{path} is not a BERT model with GELU activations")
        if config.get("position_embedding_type", "absolute") != "absolute":
            raise EmbedderError(f"{path}: only absolute position embeddings are supported")
        return cls(
            layers=int(config["num_hidden_layers"]),
            heads=int(config["num_attention_heads"]),
            hidden=int(config["hidden_size"]),
            layer_norm_eps=float(config.get("layer_norm_eps", 1e-12)),
        )


class _GraphBuilder:
    """Collects nodes and initializers; every helper returns the name of its output."""

    def __init__(self, weights: dict[str, Array]) -> None:
        from onnx import helper, numpy_helper

        self._helper, self._numpy_helper = helper, numpy_helper
        self.weights = weights
        self.nodes: list[Any] = []
        self.initializers: list[Any] = []
        self._count = 0

    def const(self, name: str, value: Array) -> str:
        self.initializers.append(self._numpy_helper.from_array(np.ascontiguousarray(value), name))
        return name

    def weight(self, name: str) -> str:
        if name not in self.weights:
            raise EmbedderError(f"the weights have no tensor {name!r}")
        return self.const(name, self.weights[name].astype(np.float32))

    def op(self, op_type: str, *inputs: str, **attributes: Any) -> str:
        self._count += 1
        output = f"{op_type.lower()}_{self._count}"
        self.nodes.append(
            self._helper.make_node(op_type, list(inputs), [output], **attributes)
        )
        return output

    def linear(self, x: str, prefix: str) -> str:
        """``x @ W.T + b`` for the torch ``Linear`` stored under ``prefix``."""
        if f"{prefix}.weight" not in self.weights:
            raise EmbedderError(f"the weights have no tensor {prefix}.weight")
        transposed = self.const(f"{prefix}.weight_t", self.weights[f"{prefix}.weight"].T)
        return self.op("Add", self.op("MatMul", x, transposed), self.weight(f"{prefix}.bias"))

    def layer_norm(self, x: str, prefix: str, eps: float) -> str:
        scale, bias = self.weight(f"{prefix}.weight"), self.weight(f"{prefix}.bias")
        return self.op("LayerNormalization", x, scale, bias, axis=-1, epsilon=eps)


def _embeddings(g: _GraphBuilder, config: BertConfig) -> str:
    """Word + position + token-type embeddings, layer-normalised."""
    words = g.op("Gather", g.weight("embeddings.word_embeddings.weight"), "input_ids")
    length = g.op("Shape", "input_ids", start=1, end=2)  # [seq], 1-D
    position_vectors = g.op(
        "Slice",
        g.weight("embeddings.position_embeddings.weight"),
        g.const("zero_start", np.array([0], np.int64)),
        length,
    )
    types = g.op("Gather", g.weight("embeddings.token_type_embeddings.weight"), "token_type_ids")
    summed = g.op("Add", g.op("Add", words, position_vectors), types)
    return g.layer_norm(summed, "embeddings.LayerNorm", config.layer_norm_eps)


def _mask_bias(g: _GraphBuilder) -> str:
    """``(1 - mask) * -10000`` shaped ``[batch, 1, 1, seq]``: added to attention scores."""
    mask = g.op("Cast", "attention_mask", to=1)  # 1 = FLOAT
    inverted = g.op("Sub", g.const("one_float", np.array(1.0, np.float32)), mask)
    bias = g.op("Mul", inverted, g.const("masked_score", np.array(_MASKED_SCORE, np.float32)))
    return g.op("Unsqueeze", bias, g.const("mask_axes", np.array([1, 2], np.int64)))


def _attention(g: _GraphBuilder, x: str, mask_bias: str, prefix: str, config: BertConfig) -> str:
    head_dim = config.hidden // config.heads
    split = g.const("split_heads_shape", np.array([0, 0, config.heads, head_dim], np.int64))

    def heads(name: str, perm: list[int]) -> str:
        projected = g.linear(x, f"{prefix}.attention.self.{name}")
        return g.op("Transpose", g.op("Reshape", projected, split), perm=perm)

    query = heads("query", [0, 2, 1, 3])  # [batch, heads, seq, head_dim]
    key = heads("key", [0, 2, 3, 1])  # [batch, heads, head_dim, seq]
    value = heads("value", [0, 2, 1, 3])
    scale = g.const(f"{prefix}.scale", np.array(1.0 / math.sqrt(head_dim), np.float32))
    scores = g.op("Add", g.op("Mul", g.op("MatMul", query, key), scale), mask_bias)
    context = g.op("MatMul", g.op("Softmax", scores, axis=-1), value)
    merged = g.op(
        "Reshape",
        g.op("Transpose", context, perm=[0, 2, 1, 3]),
        g.const("merge_heads_shape", np.array([0, 0, config.hidden], np.int64)),
    )
    projected = g.linear(merged, f"{prefix}.attention.output.dense")
    return g.layer_norm(
        g.op("Add", projected, x), f"{prefix}.attention.output.LayerNorm", config.layer_norm_eps
    )


def _gelu(g: _GraphBuilder, x: str) -> str:
    """The exact (erf) GELU BERT uses: ``x * 0.5 * (1 + erf(x / sqrt(2)))``."""
    erf = g.op("Erf", g.op("Div", x, g.const("sqrt_two", np.array(math.sqrt(2.0), np.float32))))
    one_plus = g.op("Add", erf, g.const("one_float", np.array(1.0, np.float32)))
    return g.op("Mul", g.op("Mul", x, one_plus), g.const("half", np.array(0.5, np.float32)))


def _feed_forward(g: _GraphBuilder, x: str, prefix: str, config: BertConfig) -> str:
    inner = _gelu(g, g.linear(x, f"{prefix}.intermediate.dense"))
    out = g.linear(inner, f"{prefix}.output.dense")
    return g.layer_norm(g.op("Add", out, x), f"{prefix}.output.LayerNorm", config.layer_norm_eps)


def _dedupe(initializers: list[Any]) -> list[Any]:
    """Shared constants (``one_float``, shapes) are added once per use; keep the first."""
    seen: dict[str, Any] = {}
    for tensor in initializers:
        seen.setdefault(tensor.name, tensor)
    return list(seen.values())


def build_bert_onnx(
    model_dir: Path, out: Path, *, opset: int, progress: Callable[[str], None] | None = None
) -> None:
    """Write the encoder of the checkpoint in ``model_dir`` as an fp32 ONNX model to ``out``."""
    try:
        import onnx
        from onnx import TensorProto, helper
    except ImportError as exc:
        raise EmbedderError(f"the ONNX export needs the onnx package: {exc}") from exc
    config = BertConfig.from_file(model_dir / "config.json")
    g = _GraphBuilder(read_safetensors(model_dir / "model.safetensors"))
    x = _embeddings(g, config)
    mask_bias = _mask_bias(g)
    for index in range(config.layers):
        if progress is not None:
            progress(f"layer {index + 1}/{config.layers}")
        prefix = f"encoder.layer.{index}"
        x = _feed_forward(g, _attention(g, x, mask_bias, prefix, config), prefix, config)
    g.nodes.append(helper.make_node("Identity", [x], ["last_hidden_state"]))
    dims = ["batch", "sequence"]
    inputs = [
        helper.make_tensor_value_info(name, TensorProto.INT64, dims)
        for name in ("input_ids", "attention_mask", "token_type_ids")
    ]
    output = helper.make_tensor_value_info(
        "last_hidden_state", TensorProto.FLOAT, [*dims, config.hidden]
    )
    graph = helper.make_graph(g.nodes, "bert_encoder", inputs, [output], _dedupe(g.initializers))
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)], producer_name="strata"
    )
    model.ir_version = min(model.ir_version, 9)  # loadable by onnxruntime >= 1.16
    onnx.checker.check_model(model)
    try:
        onnx.save_model(model, str(out))
    except (OSError, ValueError) as exc:
        raise EmbedderError(f"could not write the ONNX model {out}: {exc}") from exc
