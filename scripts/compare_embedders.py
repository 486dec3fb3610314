"""Retrieval parity of the embedder runtimes on LoCoMo (dense retrieval over single turns).

For each conversation, every dialog turn is embedded as "speaker: text" (plus
" [image: caption]" when the turn shared an image); each question of categories 1-4 ranks the
turns by cosine. Reports recall_any@5 / @10 per runtime and how far each runtime's cosines
drift from torch's over all question x turn pairs.

    .venv/bin/python scripts/compare_embedders.py \
        [--data-dir ../shared/bench/locomo] [--cache-dir ~/.cache/strata/models] \
        [--runtimes torch onnx-int8 onnx-fp32]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from strata_recall.embedders.minilm import SentenceTransformerEmbedder
from strata_recall.embedders.onnx import OnnxEmbedder, ensure_onnx_model
from strata_recall.ports import Embedder

KS = (5, 10)
CATEGORIES = (1, 2, 3, 4)


@dataclass(frozen=True)
class Conversation:
    sample_id: str
    turn_ids: list[str]
    turn_texts: list[str]
    questions: list[str]
    evidence: list[set[str]]


def turn_text(turn: dict[str, Any], captions: bool = True) -> str:
    text = f"{turn['speaker']}: {turn['text']}"
    caption = turn.get("blip_caption") if captions else None
    return f"{text} [image: {caption}]" if caption else text


def sessions(conversation: dict[str, Any]) -> Iterator[list[dict[str, Any]]]:
    numbers = sorted(
        int(key.split("_")[1])
        for key, value in conversation.items()
        if key.startswith("session_") and isinstance(value, list)
    )
    for number in numbers:
        yield conversation[f"session_{number}"]


def evidence_ids(raw: list[str]) -> set[str]:
    """Evidence ids; a few labels pack two ids into one string ("D8:6; D9:17")."""
    return {part.strip() for item in raw for part in item.split(";") if part.strip()}


def load_conversation(path: Path, captions: bool = True) -> Conversation:
    record = json.loads(path.read_text())
    turns = [turn for session in sessions(record["conversation"]) for turn in session]
    scored = [qa for qa in record["qa"] if qa.get("category") in CATEGORIES and qa.get("evidence")]
    return Conversation(
        sample_id=record["sample_id"],
        turn_ids=[turn["dia_id"] for turn in turns],
        turn_texts=[turn_text(turn, captions) for turn in turns],
        questions=[qa["question"] for qa in scored],
        evidence=[evidence_ids(qa["evidence"]) for qa in scored],
    )


def make_runtime(name: str, cache_dir: Path) -> Embedder:
    if name == "torch":
        return SentenceTransformerEmbedder()
    if name in ("onnx-int8", "onnx-fp32"):
        return OnnxEmbedder(cache_dir, quantize=name == "onnx-int8")
    raise SystemExit(f"unknown runtime {name!r}")


Matrix = npt.NDArray[np.float32]


def similarities(embedder: Embedder, conv: Conversation) -> tuple[Matrix, Matrix]:
    """The (questions x turns) cosine matrix, and the turn vectors."""
    turns = embedder.embed(conv.turn_texts)
    questions = embedder.embed(conv.questions)
    sims: Matrix = questions @ turns.T
    return sims, turns


def recall_hits(sims: npt.NDArray[np.float32], conv: Conversation, k: int) -> list[bool]:
    top = np.argsort(-sims, axis=1, kind="stable")[:, :k]
    ids = np.array(conv.turn_ids)
    return [bool(set(ids[row]) & gold) for row, gold in zip(top, conv.evidence, strict=True)]


def main() -> int:
    default_cache = os.environ.get("STRATA_MODEL_CACHE", "~/.cache/strata/models")
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data-dir", type=Path, default=Path(
        os.environ.get("STRATA_LOCOMO_DIR")
        or Path(__file__).resolve().parents[1].parent / "shared" / "bench" / "locomo"))
    parser.add_argument("--cache-dir", type=Path, default=Path(default_cache).expanduser())
    parser.add_argument("--runtimes", nargs="+", default=["torch", "onnx-int8", "onnx-fp32"])
    parser.add_argument("--no-captions", action="store_true", help="leave image captions out")
    args = parser.parse_args()

    paths = sorted(args.data_dir.glob("conv-*.json"))
    conversations = [load_conversation(p, not args.no_captions) for p in paths]
    if not conversations:
        raise SystemExit(f"no conv-*.json in {args.data_dir}")
    for quantize in (False, True):
        ensure_onnx_model(args.cache_dir, quantize)

    sims: dict[str, list[Matrix]] = {}
    vectors: dict[str, Matrix] = {}
    n_questions = sum(len(c.questions) for c in conversations)
    n_turns = sum(len(c.turn_ids) for c in conversations)
    print(f"{len(conversations)} conversations, {n_turns} turns, {n_questions} questions (cat 1-4)")
    print(f"{'runtime':<10} {'R@5':>6} {'R@10':>6} {'embed s':>8}")
    for name in args.runtimes:
        embedder = make_runtime(name, args.cache_dir)
        embedder.embed(["warm-up"])
        started = time.perf_counter()
        results = [similarities(embedder, conv) for conv in conversations]
        elapsed = time.perf_counter() - started
        sims[name] = [s for s, _ in results]
        vectors[name] = np.concatenate([v for _, v in results])
        recalls = [
            np.mean(
                [
                    h
                    for s, c in zip(sims[name], conversations, strict=True)
                    for h in recall_hits(s, c, k)
                ]
            )
            for k in KS
        ]
        print(f"{name:<10} {recalls[0]:>6.3f} {recalls[1]:>6.3f} {elapsed:>8.1f}")

    if "torch" in sims:
        for name in sorted(sims.keys() - {"torch"}):
            diffs = np.concatenate(
                [np.abs(a - b).ravel() for a, b in zip(sims["torch"], sims[name], strict=True)]
            )
            p99 = np.quantile(diffs, 0.99)
            same_text = (vectors["torch"] * vectors[name]).sum(axis=1)
            print(
                f"cos(torch vector, {name} vector) over {same_text.size} turns: "
                f"min {same_text.min():.4f}, mean {same_text.mean():.4f}"
            )
            print(
                f"|cos_torch - cos_{name}| over {diffs.size} question x turn pairs: "
                f"max {diffs.max():.2e}, mean {diffs.mean():.2e}, p99 {p99:.2e}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
