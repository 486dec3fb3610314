"""The secret detector (``strata_recall.domain.secrets``): each kind found and masked, ordinary
prose left alone, the Luhn check on card numbers, masking that is idempotent, and the marks."""

from __future__ import annotations

import pytest

from strata_recall.domain.secrets import (
    SECRETS_KEY,
    find_secrets,
    luhn_valid,
    marked,
    mask_secrets,
    masked_text,
    secret_kinds,
)
from tests.unit.test_redaction import SAMPLES

ORDINARY = [
    "I live in Berlin, my password manager is 1Password and I prefer dark mode.",
    "Call me at +1 415 555 2671 after 6pm; order 1234567890123 ships Friday.",
    "The meeting moved to 2026-03-14 14:30, room 4.12, see ticket ABC-12345.",
    "Commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed the tokenizer.",
    "We use Postgres at https://db.example.com/docs and token-based auth.",
    "Reset the password tomorrow; the key is to rotate it often.",
]


@pytest.mark.parametrize(("name", "text", "secret"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_each_kind_is_found_and_masked(name: str, text: str, secret: str) -> None:
    masked = mask_secrets(text)
    assert secret not in masked and f"[secret:{name.lower()}]" in masked
    assert secret_kinds(text) == (name.lower(),)


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_prose_holds_no_secret(text: str) -> None:
    assert find_secrets(text) == ()


@pytest.mark.parametrize("text", [text for _, text, _ in SAMPLES])
def test_masking_twice_changes_nothing(text: str) -> None:
    once = mask_secrets(text)
    assert mask_secrets(once) == once


def test_card_numbers_need_the_luhn_check() -> None:
    assert luhn_valid("4111111111111111") and not luhn_valid("4111111111111112")
    assert secret_kinds("card 4111-1111-1111-1111") == ("card_number",)
    assert secret_kinds("card 4111-1111-1111-1112") == ()
    assert secret_kinds("all zeros 0000 0000 0000 0000") == ()


def test_every_listed_detect_secrets_plugin_loads_with_a_kind() -> None:
    from strata_recall.domain.secrets import LIBRARY_PLUGINS, _library_plugins

    loaded = _library_plugins()
    assert [name for name, _, _ in loaded] == list(LIBRARY_PLUGINS)
    assert all(kind and hasattr(plugin, "analyze_string") for _, kind, plugin in loaded)


def test_detect_secrets_finds_what_our_patterns_do_not() -> None:
    """Kinds only the library knows (here a SendGrid and a PyPI token)."""
    sendgrid = "SG." + "a" * 22 + "." + "b" * 43
    pypi = "pypi-AgEIcHlwaS5vcmc" + "x" * 70
    assert secret_kinds(f"mail key {sendgrid}") == ("sendgrid_key",)
    assert secret_kinds(f"upload with {pypi}") == ("pypi_token",)


def test_a_mark_is_set_from_the_text_and_replaces_a_callers() -> None:
    assert marked({"x": 1}, "my PIN is 4921")[SECRETS_KEY] == ["password"]
    assert marked({"x": 1, SECRETS_KEY: ["forged"]}, "nothing here") == {"x": 1}


def test_masked_text_scans_only_what_is_marked() -> None:
    text = "the deploy user has key AKIAIOSFODNN7EXAMPLE"
    assert masked_text(text, {}) == text
    assert masked_text(text, {}, {SECRETS_KEY: ["aws_access_key"]}) == (
        "the deploy user has key [secret:aws_access_key]")
