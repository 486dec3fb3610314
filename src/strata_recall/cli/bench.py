"""``strata bench``: performance benchmarks (registered by ``strata_recall.cli.main``)."""

from __future__ import annotations

import json
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console, Group
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.table import Table

from strata_recall.bench.decisions import DecisionsReport, run_decisions
from strata_recall.bench.jobs import run_jobs_bench
from strata_recall.bench.latency import LatencyConfig, LatencyReport, run_latency
from strata_recall.bench.locomo import (
    ALL_CATEGORIES,
    CATEGORY_NAMES,
    RECALL_ALL_AT,
    RECALL_ANY_AT,
    LocomoConfig,
    LocomoReport,
    run_locomo,
)
from strata_recall.bench.writers import WritersConfig, WritersReport, run_writers
from strata_recall.cli.session import errors_reported
from strata_recall.settings import load_settings

bench_app = typer.Typer(help="Measure Strata's performance on this machine.", no_args_is_help=True)


@bench_app.callback()
def bench() -> None:
    """Measure Strata's performance on this machine."""


class RememberModeChoice(StrEnum):
    """How a benchmark's remembers are written: raw turns only, the pipeline inline, or the
    mode a remember that names none gets (behind)."""

    raw = "raw"
    auto = "auto"
    default = "default"


class TimedRememberChoice(StrEnum):
    """The latency benchmark's timed remembers: raw, raw with the embedding deferred, or the
    default pipeline."""

    raw = "raw"
    deferred = "deferred"
    auto = "auto"
    default = "default"


class EmbedderChoice(StrEnum):
    """The real runtimes only: a benchmark of the hashing stand-in would mean nothing."""

    onnx = "onnx"
    torch = "torch"


class _Bars:
    """A rich progress bar per benchmark stage, fed by ``run_latency``'s progress hook."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress
        self._tasks: dict[str, TaskID] = {}

    def __call__(self, stage: str, done: int, total: int) -> None:
        task = self._tasks.get(stage)
        if task is None:
            task = self._progress.add_task(stage, total=total)
            self._tasks[stage] = task
        self._progress.update(task, completed=done, total=total)


def _progress(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description:<22}"), BarColumn(), MofNCompleteColumn(),
        TimeElapsedColumn(), TimeRemainingColumn(), console=console, transient=False,
    )


@bench_app.command("latency")
def latency(
    memories: Annotated[int, typer.Option("--memories", "-n", min=1,
                                          help="Corpus size N.")] = 10_000,
    queries: Annotated[int, typer.Option(min=1, help="Recalls to time (distinct).")] = 200,
    remembers: Annotated[int, typer.Option(min=1, help="Remembers to time (new).")] = 200,
    embedder: Annotated[EmbedderChoice, typer.Option(help="Embedding runtime.")] = (
        EmbedderChoice.onnx
    ),
    home: Annotated[Path | None, typer.Option(
        help="Directory for the fresh store (default: a temporary one, removed after).")] = None,
    reuse: Annotated[bool, typer.Option(
        "--reuse", help="Measure the store a previous run filled in --home (or at --url) "
                        "again (no corpus, no ingest; each run's timed remembers add to it).")
    ] = False,
    url: Annotated[str | None, typer.Option(
        help="Database URL of an empty store, e.g. postgresql://... (default: "
             "STRATA_DATABASE_URL, else a fresh SQLite file).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
    remember_mode: Annotated[TimedRememberChoice, typer.Option(
        help="Mode of the timed remembers: raw (store only), deferred (raw, the embedding "
             "left to the worker), auto (the extraction and decision pipeline inline) or "
             "default (no mode named: async, the pipeline right after each answer).")
    ] = TimedRememberChoice.raw,
) -> None:
    """Recall / remember latency percentiles, ingest throughput, open time and peak RSS.

    At N memories, on a fresh SQLite store (or the empty database of --url) with the real
    embedding model; corpus vectors are cached under the model cache, so only the first run
    at a given N embeds the corpus.
    """
    console = Console(stderr=True)
    config = LatencyConfig(memories=memories, queries=queries, remembers=remembers,
                           embedder=embedder.value, home=home,
                           url=url or load_settings().database_url,
                           remember_mode=remember_mode.value, reuse=reuse)
    with errors_reported(as_json=as_json), _progress(console) as progress:
        report = run_latency(config, _Bars(progress))
    _emit(report, as_json, render)


def _emit(report: Any, as_json: bool, render: Callable[[Any], Any]) -> None:
    """The report as one JSON object, or as rich tables."""
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
    else:
        Console().print(render(report))


def _latency_table(report: LatencyReport) -> Table:
    cfg, s = report.config, report.serving
    table = Table(title=(
        f"strata bench latency — N={cfg['memories']:,}, {cfg['embedder_name']}, "
        f"{report.machine['cores']} cores, Python {report.machine['python']}"
    ))
    for column in ("ms", "p50", "p95", "p99", "max", "n"):
        table.add_column(column, justify="left" if column == "ms" else "right")
    deferred = cfg.get("remember_mode") == "deferred"
    rows = [("recall (incl. query embedding)", s.recall),
            ("remember (embedding deferred)" if deferred else "remember (incl. embedding)",
             s.remember),
            ("  embedding (by the worker, after)" if deferred else "  of which embedding",
             s.remember_embed)]
    if s.context is not None:
        rows.append(("context (2,000 tokens)", s.context))
    for label, p in rows:
        table.add_row(label, f"{p.p50:.2f}", f"{p.p95:.2f}", f"{p.p99:.2f}", f"{p.max:.2f}",
                      str(p.n))
    return table


def _facts_table(report: LatencyReport) -> Table:
    s, ingest, corpus = report.serving, report.ingest, report.corpus
    table = Table(show_header=False)
    table.add_column("measure")
    table.add_column("value", justify="right")
    stages = ", ".join(f"{k} {v:.2f}" for k, v in s.recall_stages_p50_ms.items())
    rows = [
        ("recall stages, p50 ms", stages),
        *_ingest_rows(ingest, corpus),
        ("store open", f"{s.open_ms:.1f} ms"),
        ("warm-up: model / vector indexes / all, side by side",
         f"{s.model_load_ms:.1f} / {s.index_warmup_ms:.1f} / {s.warm_up_ms:.1f} ms"),
        ("open to first answer (first recall)",
         f"{s.ready_ms:.1f} ms ({s.first_recall_ms:.1f} ms)"),
        *([("open to every vector index in (background)", f"{s.ann_ready_ms:.0f} ms")]
          if s.ann_ready_ms is not None else []),
        ("peak RSS, serving / bench process",
         f"{s.peak_rss_mib:.0f} / {ingest.get('bench_process_peak_rss_mib', 0):.0f} MiB"),
        ("database file", f"{ingest['db_mib']:.1f} MiB"),
        ("embed cache hits while timed", str(s.embed_cache_hits)),
        *([("jobs still queued after them, run in", f"{s.embed_backlog_ms:.0f} ms")]
          if s.embed_backlog_ms is not None else []),
    ]
    for label, value in rows:
        table.add_row(label, value)
    return table


def _ingest_rows(ingest: dict[str, Any], corpus: dict[str, Any]) -> list[tuple[str, str]]:
    if ingest.get("reused"):
        return [("store", f"reused ({corpus['memories']:,} memories, no ingest)")]
    return [
        ("ingest via store.write", _rate(ingest["store_write"])),
        ("ingest via remember (embedding)", _rate(ingest["remember"])),
        ("corpus vectors", "cached" if corpus["cached"] else f"embedded in {corpus['seconds']} s"),
    ]


def _targets_table(report: LatencyReport) -> Table:
    table = Table()
    for column in ("target", "measured", "limit", ""):
        table.add_column(column, justify="left" if column == "target" else "right")
    for target in report.targets:
        verdict = "[green]PASS[/green]" if target.passed else "[red]FAIL[/red]"
        table.add_row(target.name, f"{target.measured:.2f} {target.unit}",
                      f"≤ {target.limit:g} {target.unit}", verdict)
    return table


def render(report: LatencyReport) -> Group:
    """The report as rich tables: latency percentiles, other measures, targets."""
    return Group(_latency_table(report), _facts_table(report), _targets_table(report))


def _rate(part: dict[str, float | int | None]) -> str:
    if not part["per_s"]:
        return "—"
    return f"{part['per_s']:,.0f} memories/s ({part['memories']:,} in {part['seconds']:.1f} s)"


class WriteMode(StrEnum):
    remember = "remember"
    store = "store"


@bench_app.command("writers")
def writers(
    processes: Annotated[list[int], typer.Option(
        "--processes", "-p", min=1,
        help="Writer processes; repeat for several runs (e.g. -p 1 -p 4).")] = [1, 4],  # noqa: B006
    memories: Annotated[int, typer.Option("--memories", "-n", min=1,
                                          help="Memories written per run, split between "
                                               "its processes.")] = 2_000,
    mode: Annotated[WriteMode, typer.Option(
        help="remember: Strata.remember, embedding included; store: Store.write of what "
             "remember writes, vectors computed before timing.")] = WriteMode.remember,
    embedder: Annotated[EmbedderChoice, typer.Option(help="Embedding runtime.")] = (
        EmbedderChoice.onnx
    ),
    url: Annotated[str | None, typer.Option(
        help="Database URL, e.g. postgresql://... (default: STRATA_DATABASE_URL, else a "
             "fresh SQLite file). Each run writes into a scope of its own.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Insert throughput with 1, 4, ... writer processes sharing one store, one memory per
    write, and the latency of each write."""
    config = WritersConfig(processes=tuple(processes), memories=memories, mode=mode.value,
                           embedder=embedder.value, url=url or load_settings().database_url)
    with errors_reported(as_json=as_json):
        report = run_writers(config)
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
    else:
        Console().print(_writers_table(report))


def _writers_table(report: WritersReport) -> Table:
    cfg = report.config
    table = Table(title=(
        f"strata bench writers — {cfg['backend']}, mode {cfg['mode']}, {cfg['embedder']}, "
        f"{report.machine['cores']} cores, load {report.machine['load_avg_1m']}"
    ))
    for column in ("processes", "memories", "seconds", "memories/s", "write p50 ms",
                   "write p95 ms"):
        table.add_column(column, justify="right")
    for run in report.runs:
        table.add_row(str(run.processes), f"{run.memories:,}", f"{run.seconds:.2f}",
                      f"{run.per_s:,.1f}", f"{run.write_ms.p50:.1f}", f"{run.write_ms.p95:.1f}")
    return table


class LocomoEmbedder(StrEnum):
    """``hashing`` is there for tests: its numbers say nothing about retrieval quality."""

    onnx = "onnx"
    torch = "torch"
    hashing = "hashing"


@bench_app.command("locomo")
def locomo(
    data: Annotated[Path, typer.Option(help="Directory of LoCoMo conversation files.")],
    json_out: Annotated[Path | None, typer.Option(
        "--json", help="Write metrics, config and every question's ranked dia_ids here.")] = None,
    preset: Annotated[str, typer.Option(help="Recall preset to evaluate.")] = "hybrid",
    corrected: Annotated[Path | None, typer.Option(
        help="Audited evidence labels: a second scoring of the same run.")] = None,
    embedder: Annotated[LocomoEmbedder | None, typer.Option(
        help="Embedding runtime (default: the settings default).")] = None,
    limit_conversations: Annotated[int | None, typer.Option(
        min=1, help="Only the first N conversations (by sample id).")] = None,
    categories: Annotated[str, typer.Option(
        help="Question categories to run, comma-separated.")] = "1,2,3,4,5",
    compress: Annotated[bool, typer.Option(
        "--compress", help="Run the compression hammer over every memory after ingest "
        "(recall then injects each memory's active representation).")] = False,
    mode: Annotated[RememberModeChoice, typer.Option(
        help="Remember mode: raw (one memory per turn, as measured before truth "
             "maintenance), auto (the pipeline inline) or default (no mode named: the "
             "write path a user gets, the pipeline run behind each call).")] = (
        RememberModeChoice.raw),
) -> None:
    """Retrieval quality on LoCoMo: recall_any/recall_all@k, nDCG@10, MRR, latency, and the
    context tokens a top-10 recall injects.

    Each conversation goes into a fresh store through ``remember``; each question is
    recalled with its text and the hits are mapped back to the dialog turns they came from.
    """
    console = Console(stderr=True)
    with errors_reported(as_json=False):
        config = LocomoConfig(
            data=data, preset=preset, embedder=embedder.value if embedder else None,
            corrected=corrected, limit_conversations=limit_conversations,
            categories=_categories(categories), compress=compress, mode=mode.value,
        )
        with _progress(console) as progress:
            report = run_locomo(config, _Bars(progress))
        if json_out is not None:
            json_out.write_text(json.dumps(report.to_dict()) + "\n", encoding="utf-8")
    Console().print(render_locomo(report))


def _categories(text: str) -> tuple[int, ...]:
    from strata_recall.errors import InvalidInput

    try:
        chosen = tuple(sorted({int(part) for part in text.split(",") if part.strip()}))
    except ValueError as exc:
        raise InvalidInput(f"categories must be numbers among {list(ALL_CATEGORIES)}") from exc
    return chosen


_METRIC_COLUMNS = (*(f"recall_any@{k}" for k in RECALL_ANY_AT),
                   *(f"recall_all@{k}" for k in RECALL_ALL_AT), "ndcg@10", "mrr")


def _metrics_table(title: str, metrics: dict[str, Any]) -> Table:
    """Metrics as rows, question groups as columns (narrow enough for a terminal)."""
    groups = [("overall 1-4", metrics["overall"])]
    groups += [(CATEGORY_NAMES[int(cat)], m) for cat, m in metrics["by_category"].items()]
    groups.append((CATEGORY_NAMES[5], metrics["category_5"]))
    groups = [(label, m) for label, m in groups if m["n"]]
    table = Table(title=title)
    table.add_column("metric")
    for label, _ in groups:
        table.add_column(label, justify="right")
    table.add_row("questions", *(str(m["n"]) for _, m in groups))
    for name in _METRIC_COLUMNS:
        table.add_row(name, *(f"{m[name]:.3f}" for _, m in groups))
    return table


def _locomo_facts(report: LocomoReport) -> Table:
    timing, data = report.timing, report.data
    table = Table(show_header=False)
    table.add_column("measure")
    table.add_column("value", justify="right")
    recall = timing["recall_ms"] or {}
    rows = [
        ("conversations / turns / questions",
         f"{len(data['conversations'])} / {data['turns']:,} / {data['questions']:,}"),
        ("ingest", f"{timing['ingest_s']:.1f} s ({timing['turns_per_s'] or 0:,.0f} turns/s)"),
        ("recall ms p50 / p95 / p99",
         " / ".join(f"{recall.get(p, 0):.1f}" for p in ("p50", "p95", "p99"))),
        ("model load", f"{timing['model_load_s']:.1f} s"),
        ("questions without usable evidence (not scored)",
         str(data["questions_without_evidence"])),
        ("questions with repaired evidence ids", str(len(data["evidence_repairs"]))),
    ]
    injected = report.injected
    if injected.get("recalls"):
        rows.append((f"context tokens per top-{injected['k']} recall, mean / median"
                     + (" (compressed)" if report.config.get("compress") else ""),
                     f"{injected['context_tokens_mean']:.1f} / "
                     f"{injected['context_tokens_median']}"))
    for label, value in rows:
        table.add_row(label, value)
    return table


def render_locomo(report: LocomoReport) -> Group:
    """Metric tables (original labels, then corrected ones if asked) and the run's facts."""
    cfg = report.config
    title = f"strata bench locomo — preset {cfg['preset']}, {cfg['embedder']}"
    parts: list[Any] = [_metrics_table(title, report.metrics)]
    if report.corrected_metrics is not None:
        parts.append(_metrics_table("with corrected evidence labels", report.corrected_metrics))
    parts.append(_locomo_facts(report))
    return Group(*parts)


@bench_app.command("compress")
def compress(
    data: Annotated[Path, typer.Option(help="Directory of LoCoMo conversation files.")],
    embedder: Annotated[LocomoEmbedder | None, typer.Option(
        help="Embedding runtime (default: the settings default).")] = None,
    limit_conversations: Annotated[int | None, typer.Option(
        min=1, help="Only the first N conversations (by sample id).")] = None,
    pad_to: Annotated[int, typer.Option(
        min=0, help="Add distractors until the store holds this many memories.")] = 10_000,
    k: Annotated[int, typer.Option("-k", min=1, max=100, help="Hits per recall.")] = 10,
    json_out: Annotated[Path | None, typer.Option(
        "--json", help="Write the whole report here.")] = None,
) -> None:
    """The compression hammer on LoCoMo plus distractors: context tokens per recall and
    recall_any@k before and after compressing every memory."""
    from strata_recall.bench.compress import CompressBenchConfig, run_compress_bench

    console = Console(stderr=True)
    with errors_reported(as_json=False):
        config = CompressBenchConfig(
            data=data, embedder=embedder.value if embedder else None,
            limit_conversations=limit_conversations, pad_to=pad_to, k=k)
        with _progress(console) as progress:
            report = run_compress_bench(config, _Bars(progress))
        if json_out is not None:
            json_out.write_text(json.dumps(report.to_dict()) + "\n", encoding="utf-8")
    Console().print(_compress_tables(report))


def _compress_tables(report: Any) -> Group:
    before, after, deltas = report.before.to_dict(), report.after.to_dict(), report.deltas
    cfg, store = report.config, report.store
    table = Table(title=(f"strata bench compress — {store['memories']:,} memories "
                         f"({store['distractors']:,} distractors), {cfg['embedder']}, "
                         f"k={cfg['k']}, budget {cfg['budget_tokens']}"))
    for column in ("", "before", "after", "delta"):
        table.add_column(column, justify="left" if not column else "right")
    table.add_row(f"recall_any@{cfg['k']} ({before['questions']} questions)",
                  f"{before['recall_any']:.4f}", f"{after['recall_any']:.4f}",
                  f"{deltas['recall_any']:+.4f}")
    table.add_row("context tokens per recall, mean", f"{before['tokens_mean']:.1f}",
                  f"{after['tokens_mean']:.1f}", f"-{deltas['tokens_mean_reduction_pct']:.1f}%")
    table.add_row("context tokens per recall, median", f"{before['tokens_median']:.1f}",
                  f"{after['tokens_median']:.1f}",
                  f"-{deltas['tokens_median_reduction_pct']:.1f}%")
    kept_before, kept_after = (before["evidence_keyword_coverage"],
                               after["evidence_keyword_coverage"])
    table.add_row(f"evidence turns in top k: keywords kept ({after['evidence_turns_found']})",
                  f"{kept_before:.3f}", f"{kept_after:.3f}", f"{kept_after - kept_before:+.3f}")
    kinds = Table(title="where the reduction comes from (every LoCoMo memory)")
    for column in ("kind", "memories", "content tokens", "active tokens", "compressed",
                   "reduction"):
        kinds.add_column(column, justify="left" if column == "kind" else "right")
    for kind, row in report.kinds.items():
        kinds.add_row(kind, f"{row['memories']:,}", f"{row['content_tokens']:,}",
                      f"{row['active_tokens']:,}", f"{row['compressed']:,}",
                      f"{row['reduction_pct']:.1f}%")
    facts = Table(show_header=False)
    facts.add_column("measure")
    facts.add_column("value", justify="right")
    hammer = report.hammer
    facts.add_row("hammer: compressed / unchanged / locked",
                  f"{hammer.get('compressed', 0):,} / {hammer.get('unchanged', 0):,} / "
                  f"{hammer.get('locked', 0):,}")
    facts.add_row("versions stored", f"{store['versions']:,}")
    facts.add_row("timing s (ingest, before, hammer, after)", ", ".join(
        f"{report.timing[key]:.1f}" for key in ("ingest_s", "questions_before_s", "hammer_s",
                                                 "questions_after_s")))
    verdict = "[green]PASS[/green]" if report.recall_kept else "[red]FAIL[/red]"
    facts.add_row("recall_any drop ≤ 1 point", verdict)
    return Group(table, kinds, facts)


@bench_app.command("decisions")
def decisions(
    gold: Annotated[Path, typer.Option(help="Gold set directory (*.jsonl).")] = Path(
        "bench/mutation"),
    k: Annotated[int, typer.Option(min=1, max=50, help="Candidates per fact.")] = 8,
    embedder: Annotated[str, typer.Option(help="hashing (default), onnx or torch.")] = "hashing",
    failures: Annotated[bool, typer.Option("--failures", help="List the missed cases.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Precision/recall of the rule-based ADD/UPDATE/DELETE/NONE decisions and contradiction
    flags on the gold set, and duplicate growth when every input is fed twice."""
    from strata_recall.embedders import make_embedder
    from strata_recall.settings import default_model_cache

    with errors_reported(as_json=as_json):
        chosen = make_embedder(embedder, cache_dir=default_model_cache(), cache_size=1_000)
        report = run_decisions(gold, chosen, k=k)
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
        return
    Console().print(_decisions_table(report))
    if failures:
        for failure in report.failures:
            typer.echo(json.dumps(failure))


def _decisions_table(report: DecisionsReport) -> Group:
    table = Table(title=f"strata bench decisions — {report.cases} cases, {report.embedder}, "
                        f"k={report.k}")
    for column in ("", "precision", "recall", "F1", "predicted", "expected"):
        table.add_column(column, justify="left" if not column else "right")
    rows = [*report.actions.items(), ("contradiction flags", report.contradictions)]
    for label, s in rows:
        table.add_row(label, f"{s.precision:.3f}", f"{s.recall:.3f}", f"{s.f1:.3f}",
                      str(s.predicted), str(s.expected))
    facts = Table(show_header=False)
    facts.add_column("measure")
    facts.add_column("value", justify="right")
    facts.add_row("duplicate growth (2nd pass ADDs / inputs)",
                  f"{report.duplicate_growth:.2%} ({report.second_pass_adds})")
    pinned = "—" if report.pinned_accuracy is None else f"{report.pinned_accuracy:.2%}"
    facts.add_row("'remember this' pinned", pinned)
    for category, (ok, n) in sorted(report.by_category.items()):
        facts.add_row(f"cases fully right: {category}", f"{ok}/{n}")
    for name, passed in report.targets.items():
        facts.add_row(name, "[green]PASS[/green]" if passed else "[red]FAIL[/red]")
    return Group(table, facts)


@bench_app.command("jobs")
def jobs(
    n: Annotated[int, typer.Option("--jobs", min=1, help="Async remembers to enqueue.")
                 ] = 10_000,
    workers: Annotated[int, typer.Option("--workers", min=1, max=32,
                                         help="`strata worker` processes.")] = 4,
    embedder: Annotated[str, typer.Option(help="hashing (default), onnx or torch.")
                        ] = "hashing",
    url: Annotated[str | None, typer.Option("--url", help="A postgresql:// URL instead of a "
                                            "fresh SQLite file.")] = None,
    workdir: Annotated[Path | None, typer.Option("--workdir", help="Where the store goes "
                                                 "(default: a temporary directory).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Throughput and exactly-once of the job queue: N extract jobs drained by W worker
    processes; every job must be done after one claim and every derived memory added once."""
    import tempfile

    with errors_reported(as_json=as_json):
        home = workdir or Path(tempfile.mkdtemp(prefix="strata-bench-jobs-"))
        report = run_jobs_bench(home, n=n, workers=workers, embedder=embedder, url=url)
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
        return
    table = Table(title=f"strata bench jobs — {report.jobs} jobs, {report.workers} workers, "
                        f"{report.backend}")
    table.add_column("measure")
    table.add_column("value", justify="right")
    for label, value in (
        ("enqueue (async remember) p50 / p95 ms",
         f"{report.enqueue_p50_ms:.2f} / {report.enqueue_p95_ms:.2f}"),
        ("drain time s", f"{report.drain_s:.1f}"), ("jobs / s", f"{report.jobs_per_s:.0f}"),
        ("done", str(report.done)), ("done after one claim", str(report.claimed_once)),
        ("derived memories / added once",
         f"{report.derived_memories} / {report.derived_added_once}"),
        ("jobs per worker", ", ".join(map(str, report.per_worker))),
        ("exactly once", "yes" if report.exactly_once else "NO"),
    ):
        table.add_row(label, value)
    Console().print(table)
    if not report.exactly_once:
        raise typer.Exit(1)


@bench_app.command("correctness")
def correctness(
    gold: Annotated[Path | None, typer.Option(help="Gold cases (JSONL); default: the "
                                              "bundled set.")] = None,
    locomo_data: Annotated[Path | None, typer.Option(
        "--locomo", help="LoCoMo conversations for the junk rate.")] = None,
    failures: Annotated[bool, typer.Option("--failures", help="List the missed cases.")] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """End to end through the facade with default settings: are the live memories and the top
    recall hit the current truth after updates, corrections, negations, paraphrases,
    look-alikes, chit-chat, third-person, several-fact and pinned inputs? Plus the junk rate."""
    from strata_recall.bench.correctness import DEFAULT_GOLD, run_correctness

    with errors_reported(as_json=as_json):
        report = run_correctness(gold or DEFAULT_GOLD, locomo=locomo_data)
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
        return
    table = Table(title=f"strata bench correctness — {report.cases} cases, "
                        f"{report.accuracy:.3f} right")
    for column in ("category", "right", "total", "accuracy"):
        table.add_column(column)
    for name, (right, total) in sorted(report.by_category.items()):
        table.add_row(name, str(right), str(total), f"{right / total:.3f}")
    Console().print(table)
    if report.junk:
        typer.echo(f"junk rate: {report.junk['junk']}/{report.junk['live']} = "
                   f"{report.junk['rate']:.3f}")
    if failures:
        for failure in report.failures:
            typer.echo(json.dumps(failure))


@bench_app.command("noisy")
def noisy(
    seconds: Annotated[float, typer.Option(min=1, help="Length of the under-load phase.")
                       ] = 60.0,
    idle_seconds: Annotated[float, typer.Option(min=1, help="Length of the idle phase.")
                            ] = 20.0,
    chars: Annotated[int, typer.Option(min=1, help="Characters of each noisy write.")
                     ] = 100_000,
    memories: Annotated[int, typer.Option("--memories", "-n", min=1,
                                          help="The quiet team's memories.")] = 2_000,
    embedder: Annotated[EmbedderChoice, typer.Option(help="Embedding runtime.")] = (
        EmbedderChoice.onnx
    ),
    budget_chars: Annotated[int | None, typer.Option(
        help="The writer's character budget per window (default: the setting).")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """A noisy neighbour: another team's recall p50/p95 idle and while one writer sends long
    texts as fast as its write budget allows (target: p95 within 2x of idle)."""
    from strata_recall.bench.noisy import NoisyConfig, run_noisy

    console = Console(stderr=True)
    settings = {} if budget_chars is None else {"write_budget_chars": budget_chars}
    config = NoisyConfig(memories=memories, text_chars=chars, idle_s=idle_seconds,
                         load_s=seconds, embedder=embedder.value, settings=settings)
    with errors_reported(as_json=as_json):
        report = run_noisy(config, say=lambda line: console.print(line))
    _emit(report, as_json, _noisy_table)


def _noisy_table(report: Any) -> Table:
    cfg, writer = report.config, report.writer
    table = Table(title=(
        f"strata bench noisy — {cfg['memories']:,} quiet memories, {cfg['text_chars']:,}-char "
        f"writes, {cfg['embedder_name']}, {report.machine['cores']} cores, "
        f"load {report.machine['load_avg_1m']}"))
    for column in ("quiet team's recall ms", "p50", "p95", "max", "n"):
        table.add_column(column, justify="left" if column.startswith("quiet") else "right")
    for label, p in (("idle", report.idle), ("under load", report.loaded)):
        table.add_row(label, f"{p.p50:.1f}", f"{p.p95:.1f}", f"{p.max:.1f}", str(p.n))
    table.add_row("ratio under load / idle", f"{report.p50_ratio:.2f}x",
                  f"{report.p95_ratio:.2f}x", "", "")
    write = writer.write_ms
    table.add_row("noisy writes: accepted / 429 / processed inline",
                  f"{writer.writes} / {writer.refused} / {writer.processed}",
                  f"p95 {write.p95:.0f} ms" if write else "", "", "")
    verdict = "[green]PASS[/green]" if report.passed else "[red]FAIL[/red]"
    table.add_row("p95 within 2x of idle", verdict, "", "", "")
    return table


@bench_app.command("documents")
def documents(
    folder: Annotated[Path, typer.Option(help="The folder to ingest.")] = Path("docs"),
    questions: Annotated[Path, typer.Option(help="Questions about it (JSONL: question, "
                                            "file, contains).")] = Path(
        "bench/documents/docs_questions.jsonl"),
    embedder: Annotated[str, typer.Option(help="onnx (default), torch or hashing.")] = "onnx",
    failures: Annotated[bool, typer.Option("--failures", help="List the missed questions.")]
    = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print one JSON object.")] = False,
) -> None:
    """Ingest a folder of documents, answer questions about it (recall_any@1/5/10, MRR), and
    check that a second ingest changes nothing and stores no chunk twice."""
    from strata_recall.bench.documents import run_documents

    with errors_reported(as_json=as_json):
        report = run_documents(folder, questions, embedder=embedder)
    if as_json:
        typer.echo(json.dumps(report.to_dict()))
        return
    table = Table(title=f"strata bench documents — {report.documents} documents, "
                        f"{report.chunks} chunks in {report.ingest_s} s ({report.embedder})")
    for column in ("questions", "any@1", "any@5", "any@10", "MRR", "re-ingest", "duplicates"):
        table.add_column(column)
    table.add_row(str(report.questions), *(f"{report.recall_any[f'@{k}']:.3f}"
                                          for k in (1, 5, 10)),
                  f"{report.mrr:.3f}", json.dumps(report.reingest),
                  str(report.duplicate_chunks))
    Console().print(table)
    if failures:
        for miss in report.misses:
            typer.echo(json.dumps(miss))
from strata_recall.cli import bench_context  # noqa: E402 (the context benches register here)

bench_context.register(bench_app)

from strata_recall.cli import bench_startup  # noqa: E402 (strata bench startup registers here)

bench_startup.register(bench_app)
