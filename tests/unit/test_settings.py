from pathlib import Path

import pytest

from strata_recall.errors import InvalidInput
from strata_recall.settings import load_settings


def test_defaults_point_at_the_local_home(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.chdir(tmp_path)
    for name in ("STRATA_HOME", "STRATA_CONFIG", "STRATA_PORT", "STRATA_EMBEDDER"):
        monkeypatch.delenv(name, raising=False)
    settings = load_settings()
    assert settings.home == Path(".strata") and settings.sqlite_path == Path(".strata/strata.db")
    assert (settings.host, settings.port, settings.embedder) == ("127.0.0.1", 8420, "onnx")


def test_toml_then_environment_then_keywords(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("STRATA_HOME", str(tmp_path))
    (tmp_path / "strata.toml").write_text('port = 9000\nfusion = "rrf"\nhost = "0.0.0.0"\n')
    assert load_settings().port == 9000 and load_settings().fusion == "rrf"
    monkeypatch.setenv("STRATA_PORT", "9100")
    assert load_settings().port == 9100 and load_settings().host == "0.0.0.0"
    assert load_settings(port=9200).port == 9200


@pytest.mark.parametrize("bad", [{"port": 0}, {"embedder": "word2vec"}, {"unknown_knob": 1}])
def test_invalid_settings_are_refused(bad: dict[str, object]) -> None:
    with pytest.raises(InvalidInput):
        load_settings(**bad)


def test_local_only_defaults_to_false() -> None:
    from strata_recall.providers.chain import build_chain

    assert load_settings(home=Path("/nonexistent")).local_only is True
    with pytest.raises(InvalidInput, match="local_only"):
        build_chain(load_settings(home=Path("/nonexistent"), provider="openai"))
