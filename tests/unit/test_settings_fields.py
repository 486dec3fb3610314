"""``Settings`` parsing without pydantic (decision 0040): the values and the error entries
pydantic-settings gave, from keywords, ``STRATA_*`` variables and the TOML file."""

from __future__ import annotations

from pathlib import Path

import pytest

from strata_recall.domain.review_mode import ReviewMode
from strata_recall.errors import InvalidInput
from strata_recall.settings import Settings, load_settings
from strata_recall.settings_fields import Secret


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in [*Settings.fields, "config"]:
        monkeypatch.delenv(f"STRATA_{name.upper()}", raising=False)
    monkeypatch.setenv("STRATA_CONFIG", str(tmp_path / "strata.toml"))


def _refusal(**overrides: object) -> str:
    with pytest.raises(InvalidInput) as caught:
        load_settings(**overrides)
    return caught.value.message


@pytest.mark.parametrize(("overrides", "entry"), [
    ({"port": 0}, "{'type': 'greater_than_equal', 'loc': ('port',), 'msg': 'Input should be "
                  "greater than or equal to 1', 'input': 0, 'ctx': {'ge': 1}}"),
    ({"port": 70_000}, "{'type': 'less_than_equal', 'loc': ('port',), 'msg': 'Input should be "
                       "less than or equal to 65535', 'input': 70000, 'ctx': {'le': 65535}}"),
    ({"job_lease_s": 0}, "{'type': 'greater_than', 'loc': ('job_lease_s',), 'msg': 'Input "
                         "should be greater than 0', 'input': 0, 'ctx': {'gt': 0.0}}"),
    ({"port": 80.5}, "{'type': 'int_from_float', 'loc': ('port',), 'msg': 'Input should be a "
                     "valid integer, got a number with a fractional part', 'input': 80.5}"),
    ({"host": 5}, "{'type': 'string_type', 'loc': ('host',), 'msg': 'Input should be a valid "
                  "string', 'input': 5}"),
])
def test_bounds_and_types_refuse_with_pydantics_entries(overrides: dict[str, object],
                                                        entry: str) -> None:
    assert _refusal(**overrides) == f"invalid settings: [{entry}]"


def test_choices_literal_and_enum() -> None:
    assert load_settings(embedder="hashing").embedder == "hashing"
    assert load_settings(review_mode="off").review_mode is ReviewMode.OFF
    assert load_settings(review_mode=ReviewMode.ALL).review_mode is ReviewMode.ALL
    assert "'msg': \"Input should be 'onnx', 'torch' or 'hashing'\"" in _refusal(embedder="ONNX")
    assert "'type': 'enum'" in _refusal(review_mode="everything")
    assert "'NORMAL' or 'FULL'" in _refusal(sqlite_synchronous="full")


@pytest.mark.parametrize(("text", "value"), [
    ("true", True), ("1", True), ("yes", True), ("On", True), ("Y", True),
    ("false", False), ("0", False), ("no", False), ("OFF", False), ("f", False)])
def test_booleans_from_the_environment(monkeypatch: pytest.MonkeyPatch, text: str,
                                       value: bool) -> None:
    monkeypatch.setenv("STRATA_GRAPH", text)
    assert load_settings().graph is value


@pytest.mark.parametrize("text", ["maybe", "", " true", "2"])
def test_a_bad_boolean_is_refused(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setenv("STRATA_GRAPH", text)
    assert "'type': 'bool_parsing'" in _refusal()


def test_numbers_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("strata_port", " 9_001 ")  # any case, blanks and separators as pydantic
    monkeypatch.setenv("STRATA_JOB_LEASE_S", "1e1")
    settings = load_settings()
    assert (settings.port, settings.job_lease_s) == (9001, 10.0)
    monkeypatch.setenv("STRATA_BLAS_THREADS", "two")
    assert "'type': 'int_parsing', 'loc': ('blas_threads',)" in _refusal()


def test_defaults_are_validated_like_values() -> None:
    settings = load_settings()
    assert isinstance(settings.manual_override_s, float) and settings.redact_terms == []
    assert settings.explicit == frozenset()


def test_lists_from_the_environment_are_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_REDACT_TERMS", '["acme", "project x"]')
    assert load_settings().redact_terms == ["acme", "project x"]
    assert load_settings(redact_terms=("a",)).redact_terms == ["a"]
    monkeypatch.setenv("STRATA_REDACT_TERMS", "acme,project")
    assert "'type': 'json_invalid', 'loc': ('redact_terms',)" in _refusal()
    monkeypatch.setenv("STRATA_REDACT_TERMS", "[1]")
    assert "'loc': ('redact_terms', 0), 'msg': 'Input should be a valid string'" in _refusal()


def test_secrets_never_show_their_value(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_OPENAI_API_KEY", "sk-env-secret")
    settings = load_settings(confirm_secret="kw-secret")
    assert isinstance(settings.openai_api_key, Secret)
    assert settings.openai_api_key.get_secret_value() == "sk-env-secret"
    assert settings.confirm_secret == Secret("kw-secret")
    shown = f"{settings!r} {settings.openai_api_key} {settings.confirm_secret!r}"
    assert "secret" not in shown.replace("confirm_secret", "").replace("Secret(", "")
    assert "Secret('**********')" in repr(settings)


def test_unknown_fields_are_refused_from_keywords_and_the_file(tmp_path: Path) -> None:
    assert "'type': 'extra_forbidden', 'loc': ('colour',)" in _refusal(colour="red")
    (tmp_path / "strata.toml").write_text("PORT = 9000\ncolour = 'red'\n")
    assert "'loc': ('colour',), 'msg': 'Extra inputs are not permitted'" in _refusal()
    (tmp_path / "strata.toml").write_text("port = [")
    assert "is not valid TOML" in _refusal()


def test_unknown_variables_are_ignored(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_COLOUR", "red")
    assert load_settings() == load_settings()


def test_every_refusal_is_reported_in_field_order(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("STRATA_GRAPH", "maybe")
    message = _refusal(port=0, embedder="x", colour="red")
    kinds = ["literal_error", "greater_than_equal", "bool_parsing", "extra_forbidden"]
    positions = [message.index(f"'type': '{kind}'") for kind in kinds]
    assert positions == sorted(positions)


def test_replace_validates_and_counts_as_explicit() -> None:
    settings = load_settings(port=9000)
    changed = settings.replace(local_only=False)
    assert (changed.local_only, changed.port, settings.local_only) == (False, 9000, True)
    assert changed.explicit == {"port", "local_only"}
    with pytest.raises(InvalidInput, match="greater_than_equal"):
        settings.replace(port=0)


def test_fields_carry_their_help() -> None:
    assert Settings.fields["port"].description == "Port `strata serve` binds."
    assert Settings.fields["port"].le == 65535
    assert Settings.fields["embedder"].choices == ("onnx", "torch", "hashing")
