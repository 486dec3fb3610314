"""The Dockerfile and docker-compose.yml: linted here (the compose file parsed and checked
against the settings Strata reads; the Dockerfile read instruction by instruction with the
checks hadolint would make), and built where a Docker daemon answers."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from strata_recall.settings import Settings

ROOT = Path(__file__).resolve().parents[2]
#: ``STRATA_*`` names read outside ``Settings`` (``settings.default_home`` and the TOML path).
OTHER_VARIABLES = {"STRATA_HOME", "STRATA_CONFIG"}


def instructions() -> list[tuple[str, str]]:
    """The Dockerfile as (INSTRUCTION, arguments), continuation lines joined."""
    text = re.sub(r"\\\n", " ", (ROOT / "Dockerfile").read_text(encoding="utf-8"))
    lines = [line.strip() for line in text.splitlines()]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1])
            for line in lines if line and not line.startswith("#")]


def compose() -> dict[str, Any]:
    loaded: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return loaded


def env_of(args: str) -> dict[str, str]:
    return dict(part.split("=", 1) for part in shlex.split(args))


def _known(name: str) -> bool:
    field = name.removeprefix("STRATA_").lower()
    return name in OTHER_VARIABLES or field in Settings.fields


def test_the_dockerfile_builds_on_a_pinned_slim_python_and_exports_the_model() -> None:
    steps = instructions()
    assert steps[0] == ("FROM", "python:3.11-slim")
    runs = " && ".join(args for name, args in steps if name == "RUN")
    assert re.search(r"pip install \"?\.", runs), "the package itself is installed"
    assert runs.index("pip install") < runs.index("python -m strata_recall.embedders.onnx")
    assert "apt-get install" not in runs or "--no-install-recommends" in runs
    env = {k: v for name, args in steps if name == "ENV" for k, v in env_of(args).items()}
    assert env.get("PIP_NO_CACHE_DIR") == "1" or "--no-cache-dir" in runs


def test_the_dockerfile_serves_strata_as_a_non_root_user_on_its_port() -> None:
    steps = instructions()
    names = [name for name, _ in steps]
    assert names.count("CMD") == 1 and names[-1] == "CMD"
    cmd = steps[-1][1]
    assert cmd.startswith("[") and '"strata", "serve"' in cmd  # exec form: signals reach it
    users = [args for name, args in steps if name == "USER"]
    assert users and users[-1] not in ("root", "0")
    env = {k: v for name, args in steps if name == "ENV" for k, v in env_of(args).items()}
    assert [args for name, args in steps if name == "EXPOSE"] == [env["STRATA_PORT"]]
    assert env["STRATA_HOST"] == "0.0.0.0" and env["STRATA_AUTH_MODE"] == "token"
    assert all(_known(k) for k in env if k.startswith("STRATA_")), env
    assert "HEALTHCHECK" in names and "/healthz" in dict(steps)["HEALTHCHECK"]


def test_the_dockerfile_copies_only_what_exists_and_fetches_nothing() -> None:
    for name, args in instructions():
        assert name != "ADD", "COPY, not ADD (no remote URLs, no auto-extraction)"
        if name == "COPY":
            for source in shlex.split(args)[:-1]:
                assert (ROOT / source).exists(), source
        if name == "WORKDIR":
            assert args.startswith("/")


def test_compose_runs_strata_against_postgres_with_pgvector() -> None:
    services = compose()["services"]
    assert set(services) == {"strata", "postgres"}
    postgres, strata = services["postgres"], services["strata"]
    assert "pgvector" in postgres["image"] and ":" in postgres["image"]
    assert "pg_isready" in " ".join(postgres["healthcheck"]["test"])
    assert strata["build"] == "."
    assert strata["depends_on"]["postgres"]["condition"] == "service_healthy"
    env = strata["environment"]
    url = env["STRATA_DATABASE_URL"]
    assert url.startswith("postgresql://") and "@postgres:5432/" in url
    assert url.rsplit("/", 1)[1] == postgres["environment"]["POSTGRES_DB"]
    assert env["STRATA_AUTH_MODE"] == "token"  # it binds 0.0.0.0: local mode would refuse
    assert strata["ports"] == [f"{env['STRATA_PORT']}:{env['STRATA_PORT']}"]
    assert all(_known(k) for k in env), env
    named = set(compose()["volumes"])
    for service in services.values():
        assert {v.split(":")[0] for v in service.get("volumes", [])} <= named


def _docker_daemon() -> str | None:
    """Why a build cannot run here, or None when it can."""
    if shutil.which("docker") is None:
        return "no docker executable on this machine"
    probe = subprocess.run(["docker", "info"], capture_output=True, text=True, timeout=30)
    return None if probe.returncode == 0 else "the docker daemon does not answer (docker info)"


def test_the_image_builds_where_docker_runs(tmp_path: Path) -> None:
    reason = _docker_daemon()
    if reason:
        pytest.skip(reason)
    built = subprocess.run(["docker", "build", "-q", "-t", "strata-test:adapters", str(ROOT)],
                           capture_output=True, text=True, timeout=3600)
    assert built.returncode == 0, built.stderr[-2000:]
    config = subprocess.run(["docker", "compose", "-f", str(ROOT / "docker-compose.yml"),
                             "config", "-q"], capture_output=True, text=True, timeout=60)
    assert config.returncode == 0, config.stderr
