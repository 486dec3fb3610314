"""Configuration: ``STRATA_*`` environment variables, an optional TOML file, keyword overrides.

Precedence, highest first: keyword arguments to ``Strata.open`` / ``Settings(...)``, the
environment, ``$STRATA_HOME/strata.toml`` (or the file named by ``STRATA_CONFIG``), defaults.
Nothing is read or created at import time.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from strata.errors import InvalidInput

EmbedderKind = Literal["onnx", "torch", "hashing"]
FusionMethod = Literal["convex", "rrf"]


def default_home() -> Path:
    return Path(os.environ.get("STRATA_HOME", ".strata"))


def default_model_cache() -> Path:
    return Path.home() / ".cache" / "strata" / "models"


class Settings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="STRATA_", extra="forbid")

    home: Path = Field(default_factory=default_home, description="Data directory.")
    database_path: Path | None = Field(
        default=None, description="SQLite file; default <home>/strata.db."
    )
    database_url: str | None = Field(
        default=None,
        description="postgresql://... selects Postgres + pgvector; sqlite:///path or unset: "
        "the embedded SQLite file.",
    )
    pool_size: int = Field(default=10, ge=1, description="Most Postgres connections per process.")
    embedder: EmbedderKind = Field(
        default="onnx", description="onnx (int8 MiniLM), torch (MiniLM), hashing (tests only)."
    )
    model_cache: Path = Field(
        default_factory=default_model_cache, description="Where the ONNX export is cached."
    )
    embed_cache_size: int = Field(default=10_000, ge=0, description="LRU entries of vectors.")
    host: str = Field(default="127.0.0.1", description="Address `strata serve` binds.")
    port: int = Field(default=8420, ge=1, le=65535, description="Port `strata serve` binds.")
    sqlite_synchronous: Literal["NORMAL", "FULL"] = Field(
        default="NORMAL",
        description="NORMAL survives process crashes; FULL also survives power loss.",
    )
    busy_timeout_ms: int = Field(default=10_000, ge=0, description="SQLite busy timeout.")
    max_text_chars: int = Field(default=100_000, ge=1, description="Longest accepted text.")
    max_messages: int = Field(default=1_000, ge=1, description="Most messages per remember.")
    max_k: int = Field(default=100, ge=1, description="Largest k a recall may ask for.")
    default_budget_tokens: int = Field(default=2_000, ge=1, description="Context budget.")
    fusion: FusionMethod = Field(default="convex", description="How recall signals combine.")
    candidates: int = Field(default=50, ge=1, description="Candidates per recall signal.")
    blas_threads: int | None = Field(
        default=1, ge=1,
        description="BLAS threads for vector search; 1 keeps idle BLAS workers from spinning "
        "on the core SQLite and the model need. None leaves the library default.",
    )
    track_access: bool = Field(default=True, description="Count recalls per memory.")

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml_file = Path(os.environ.get("STRATA_CONFIG", default_home() / "strata.toml"))
        return (init_settings, env_settings, TomlConfigSettingsSource(settings_cls, toml_file))

    @property
    def sqlite_path(self) -> Path:
        return self.database_path or self.home / "strata.db"


def load_settings(**overrides: Any) -> Settings:
    """Settings with ``overrides`` on top; invalid values raise ``InvalidInput``."""
    try:
        return Settings(**{k: v for k, v in overrides.items() if v is not None})
    except ValidationError as exc:
        raise InvalidInput(f"invalid settings: {exc.errors(include_url=False)}") from exc
