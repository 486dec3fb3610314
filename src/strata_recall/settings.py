"""Configuration: ``STRATA_*`` environment variables, an optional TOML file, keyword overrides.

Precedence, highest first: keyword arguments to ``Strata.open`` / ``Settings(...)``, the
environment, ``$STRATA_HOME/strata.toml`` (or the file named by ``STRATA_CONFIG``), defaults.
Nothing is read or created at import time. Parsing and validation: ``settings_fields`` (no
pydantic, so that every command does not pay for it: decision 0040).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from strata_recall.domain.review_mode import ReviewMode
from strata_recall.settings_fields import Secret, SettingsBase, setting

EmbedderKind = Literal["onnx", "torch", "hashing"]
FusionMethod = Literal["zscore", "convex", "rrf"]
ProviderKind = Literal["rules", "ollama", "openai", "anthropic"]
AuthMode = Literal["local", "token"]
RememberMode = Literal["behind", "sync", "async", "auto", "raw"]
#: The largest page any list call serves (the API, the CLI and the facade check it).
MAX_PAGE = 500
#: The longest recall query accepted.
MAX_QUERY_CHARS = 4_000
#: Most memories one HTTP / MCP call may compress inline (larger runs: ``background``).
MAX_RUN = 5_000
#: How long a manual promote keeps the hammer away by default ([001]: 30-120 minutes).
PROMOTE_LOCK_MINUTES = 60


def default_home() -> Path:
    return Path(os.environ.get("STRATA_HOME", ".strata"))


def default_model_cache() -> Path:
    return Path.home() / ".cache" / "strata" / "models"


class Settings(SettingsBase, env_prefix="STRATA_"):
    """Every setting, with its kind, default, bounds and help (``Settings.fields``)."""

    home: Path = setting(default_factory=default_home, description="Data directory.")
    database_path: Path | None = setting(
        default=None, description="SQLite file; default <home>/strata.db."
    )
    database_url: str | None = setting(
        default=None,
        description="postgresql://... selects Postgres + pgvector; sqlite:///path or unset: "
        "the embedded SQLite file.",
    )
    pool_size: int = setting(default=10, ge=1, description="Most Postgres connections per process.")
    embedder: EmbedderKind = setting(
        default="onnx", description="onnx (int8 MiniLM), torch (MiniLM), hashing (tests only)."
    )
    model_cache: Path = setting(
        default_factory=default_model_cache, description="Where the ONNX export is cached."
    )
    embed_cache_size: int = setting(default=10_000, ge=0, description="LRU entries of vectors.")
    host: str = setting(default="127.0.0.1", description="Address `strata serve` binds.")
    port: int = setting(default=8420, ge=1, le=65535, description="Port `strata serve` binds.")
    sqlite_synchronous: Literal["NORMAL", "FULL"] = setting(
        default="NORMAL",
        description="NORMAL survives process crashes; FULL also survives power loss.",
    )
    busy_timeout_ms: int = setting(default=10_000, ge=0, description="SQLite busy timeout.")
    vector_search: Literal["auto", "ann", "exact"] = setting(
        default="auto",
        description="SQLite vector search: exact scans every visible vector (the reference); "
        "ann uses the approximate HNSW index (usearch, saved as <db>.usearch); auto uses it "
        "from 20,000 vectors on.",
    )
    lexical_search: Literal["index", "fts"] = setting(
        default="index",
        description="SQLite lexical search of recall: index scores BM25 in process (the "
        "scores FTS5 gives, over every term); fts asks FTS5, which bounds common words "
        "past 5,000 rows.",
    )
    max_text_chars: int = setting(default=100_000, ge=1, description="Longest accepted text.")
    max_messages: int = setting(default=1_000, ge=1, description="Most messages per remember.")
    max_k: int = setting(default=100, ge=1, description="Largest k a recall may ask for.")
    default_budget_tokens: int = setting(default=2_000, ge=1, description="Context budget.")
    fusion: FusionMethod = setting(default="zscore", description="How recall signals combine.")
    candidates: int = setting(default=100, ge=1, description="Candidates per recall signal.")
    blas_threads: int | None = setting(
        default=1, ge=1,
        description="BLAS threads for vector search; 1 keeps idle BLAS workers from spinning "
        "on the core SQLite and the model need. None leaves the library default.",
    )
    track_access: bool = setting(default=True, description="Count recalls per memory.")
    episodes: bool = setting(
        default=True,
        description="Also store each multi-message remember as one episodic memory (recall "
        "scores the exchange as a unit and passes the score on to its turns).",
    )
    graph: bool = setting(
        default=True,
        description="Index the entities and relations of each new memory (rule-based) in the "
        "knowledge graph after remember; recall uses them as a signal.",
    )
    meta_layered: bool = setting(
        default=True,
        description="Layered meta retrieval in context(): backbone, focus band and mode blend "
        "([000] chunks 13-15). On because the chunk-18 gates pass (strata bench meta).",
    )
    # -- extraction / decision providers ([003] §9-10) --
    provider: ProviderKind = setting(
        default="rules", description="Extraction/decision provider: rules (built-in, local), "
        "ollama, openai (any OpenAI-compatible server), anthropic.")
    fallback_provider: ProviderKind | None = setting(
        default=None, description="Tried when the preferred provider fails.")
    local_only: bool = setting(
        default=True, description="Refuse any provider that sends text off this machine "
        "(on by default, [003] §27.3: set it to false to use a remote provider).")
    ollama_url: str = setting(default="http://127.0.0.1:11434", description="Ollama base URL.")
    ollama_model: str = setting(default="llama3.1:8b", description="Ollama model.")
    openai_url: str = setting(default="https://api.openai.com",
                            description="OpenAI-compatible base URL (without /v1).")
    openai_model: str = setting(default="gpt-4o-mini", description="OpenAI-compatible model.")
    openai_api_key: Secret | None = setting(default=None, description="Bearer API key.")
    anthropic_url: str = setting(default="https://api.anthropic.com",
                               description="Anthropic base URL.")
    anthropic_model: str = setting(default="claude-3-5-haiku-latest",
                                 description="Anthropic model.")
    anthropic_api_key: Secret | None = setting(default=None, description="x-api-key value.")
    provider_timeout_s: float = setting(default=30.0, gt=0, description="Per-request timeout.")
    provider_max_retries: int = setting(
        default=1, ge=0, le=5, description="Retries after a 429/503 with a short Retry-After.")
    redact_terms: list[str] = setting(
        default_factory=list,
        description="Extra sensitive terms redacted before a remote call (with the built-in "
        "secret patterns).")
    # -- the write pipeline and its job queue ([003] §5, §6.3) --
    review_mode: ReviewMode = setting(
        default=ReviewMode.CAPTURE_ONLY,
        description="off: derived memories are active at once; capture_only: memories the "
        "pipeline infers are candidates (not recalled) until approved, explicit remembers "
        "stay active; all: every new memory waits for approval.")
    remember_mode: RememberMode = setting(
        default="behind",
        description="What a remember that names no mode does. behind: answer once the input "
        "is saved; its extraction and decisions run right after in this process, in order, "
        "and this process's reads wait for them. auto: run them before answering, within "
        "pipeline_timeout_ms. sync: wait for them however long. async: leave them to a "
        "worker (reads do not wait). raw: no extraction.")
    pipeline_timeout_ms: int = setting(
        default=2_000, ge=1,
        description="How long a remember in mode auto waits for extraction and decisions "
        "before answering queued (the job carries on in the background); and how long a "
        "read waits for this process's behind remembers' decisions.")
    embedded_worker: bool = setting(
        default=True, description="Strata.open starts a worker thread that runs queued jobs "
        "(turn off when `strata worker` processes do it).")
    worker_concurrency: int = setting(default=1, ge=1, le=64,
                                    description="Threads of the embedded worker.")
    job_lease_s: float = setting(
        default=60.0, gt=0, description="How long a claimed job is leased to its worker; "
        "after that the reaper hands it to another.")
    job_max_attempts: int = setting(default=5, ge=1, le=100,
                                  description="Attempts before a job goes to the dead letter.")
    job_backoff_base_s: float = setting(
        default=1.0, gt=0, description="Retry n waits a random time up to base × 2^(n-1).")
    job_backoff_cap_s: float = setting(default=300.0, gt=0, description="Longest retry wait.")
    job_poll_s: float = setting(default=0.5, gt=0, description="Idle worker poll interval.")
    manual_override_s: float = setting(
        default=7 * 86_400, ge=0,
        description="After an explicit modify, inferred decisions may not change the memory "
        "for this long (0: no lock).")
    auth_mode: AuthMode = setting(
        default="local",
        description="local: loopback only, no token; token: every request needs a bearer token.",
    )
    mutation_rate_per_s: float = setting(
        default=5.0, gt=0, description="Per-token refill rate of forget/modify calls (per process)."
    )
    mutation_burst: int = setting(
        default=60, ge=1, description="Per-token burst of forget/modify calls (per process)."
    )
    write_budget_requests: int = setting(
        default=600, ge=1, description="Per-token writes (remember, shield) per "
        "write_budget_window_s (per process); over it: 429 with Retry-After.")
    write_budget_chars: int = setting(
        default=1_000_000, ge=1, description="Per-token characters written (text and message "
        "contents) per write_budget_window_s (per process); over it: 429 with Retry-After, "
        "and one write larger than it: 413.")
    write_budget_window_s: float = setting(
        default=60.0, gt=0, description="The window of the write budget; each budget refills "
        "evenly over it.")
    forget_confirm_threshold: int = setting(
        default=10, ge=1,
        description="Bulk forgets of more ids than this need the preview's confirm token.",
    )
    forget_min_similarity: float = setting(
        default=0.5, ge=0.0, le=1.0,
        description="A forget-by-query candidate needs a lexical match or this cosine.",
    )
    forget_max_ids: int = setting(default=100, ge=1, description="Most ids one bulk forget takes.")
    forget_preview_ttl_s: int = setting(
        default=600, ge=1, description="How long a forget preview token stays valid."
    )
    confirm_secret: Secret | None = setting(
        default=None,
        description="Key that signs forget preview tokens; set it when several processes "
        "serve one store (default: random per process).",
    )
    max_batch_items: int = setting(default=100, ge=1, description="Most items of a batch modify.")
    max_pipeline_timeout_ms: int = setting(
        default=60_000, ge=1, description="Largest pipeline_timeout_ms a remember may ask for."
    )
    max_body_bytes: int = setting(default=1 << 20, ge=1, description="Largest HTTP request body.")
    import_max_bytes: int = setting(
        default=256 << 20, ge=1, description="Largest HTTP import body (streamed to disk)."
    )
    # -- compression hammer --
    hammer_floor_level: int = setting(
        default=3, ge=1, le=5, description="Lowest level the hammer makes active: 3 (R3, the "
        "default injection level; R1 is for routing, not injection).")
    hammer_cold_days: float = setting(
        default=30.0, ge=0, description="A memory not accessed this long is a candidate.")
    hammer_overlong_tokens: int = setting(
        default=200, ge=1, description="A memory injecting more tokens is a candidate.")
    hammer_noisy_similarity: float = setting(
        default=0.92, gt=0, le=1, description="Cosine at which two memories of a scope are "
        "near-duplicates (two or more make a memory a candidate).")
    hammer_size_weight: float = setting(
        default=0.5, ge=0, description="Size penalty of the hammer's score (per content size).")
    # -- tiers, decay and retention --
    archive_after_days: float = setting(
        default=90.0, gt=0, description="Idle (not accessed) this long: the decay job archives."
    )
    retention_tombstone_days: float | None = setting(
        default=None, gt=0, description="Soft-deleted memories are purged this long after "
        "(unset: kept forever). Recorded in the store's retention policy at open."
    )
    retention_history_days: float | None = setting(
        default=None, gt=0, description="History rows older than this are purged (unset: "
        "kept forever). Recorded in the store's retention policy at open."
    )
    retention_done_job_days: float = setting(
        default=14.0, gt=0, description="Done jobs are purged this long after finishing."
    )
    retention_dead_job_days: float = setting(
        default=30.0, gt=0, description="Dead-letter jobs are purged this long after dying."
    )
    retention_batch: int = setting(
        default=500, ge=1, le=10_000, description="Rows per retention purge transaction."
    )
    maintenance_every_s: float = setting(
        default=3600.0, ge=0, description="A running worker (`strata worker`, the one embedded "
        "in `serve` and `mcp`) enqueues the tiers, decay and retention jobs this often (one "
        "active job per kind across processes); 0: never (run them by hand).")
    mcp_profile: str = setting(
        default="default", description="MCP tools served, comma-separated profiles: default "
        "(6 tools, always), hooks, moderation, evidence, documents, all.")
    hot_cache_size: int = setting(
        default=0, ge=0,
        description="Hot-tier and identity memories cached in process (0: off; see docs).",
    )
    hot_cache_ttl_s: float = setting(
        default=5.0, gt=0, description="Longest a hot-cache entry lives (other processes' writes)."
    )

    # -- levels and escalation ([001] B) --
    escalation_mode: Literal["auto", "ask"] = setting(
        default="auto",
        description="What a recall with need_more_context does unless it says: auto (mode "
        "A: re-run one level higher, answer escalated) or ask (mode B: answer 409 "
        "need_more_context with the recommended next level).")

    @classmethod
    def config_file(cls) -> Path:
        return Path(os.environ.get("STRATA_CONFIG", default_home() / "strata.toml"))

    @property
    def sqlite_path(self) -> Path:
        return self.database_path or self.home / "strata.db"


def load_settings(**overrides: Any) -> Settings:
    """Settings with ``overrides`` (those not None) on top; invalid values raise
    ``InvalidInput``."""
    return Settings(**{k: v for k, v in overrides.items() if v is not None})
