"""One realistic sample per secret pattern: redacted, and restorable from the placeholder map.
The samples are also the planted secrets of the secrets canary tests."""

from __future__ import annotations

import pytest

from strata_recall.domain.secrets import PATTERNS
from strata_recall.providers.redaction import Redactor

#: (pattern name, text containing a secret, the secret that must disappear)
SAMPLES: list[tuple[str, str, str]] = [
    ("AWS_ACCESS_KEY", "the deploy user has key AKIAIOSFODNN7EXAMPLE", "AKIAIOSFODNN7EXAMPLE"),
    ("AWS_SECRET_KEY", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
     "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"),
    ("GITHUB_TOKEN", "CI uses ghp_" + "aB3" * 12 + " for releases", "ghp_" + "aB3" * 12),
    ("GITHUB_TOKEN", "fine-grained github_pat_" + "11AbC_" * 8, "github_pat_" + "11AbC_" * 8),
    ("GITLAB_TOKEN", "runner token glpat-" + "xY9_" * 5, "glpat-" + "xY9_" * 5),
    ("SLACK_TOKEN", "the bot token is xoxb-1234567890-abcdefghijKL",
     "xoxb-1234567890-abcdefghijKL"),
    ("SLACK_WEBHOOK", "alerts go to https://hooks.slack.com/services/T0001/B0002/XyZ123abc",
     "https://hooks.slack.com/services/T0001/B0002/XyZ123abc"),
    ("STRIPE_KEY", "billing uses sk_live_4eC39HqLyjWDarjtT1zdp7dc",
     "sk_live_4eC39HqLyjWDarjtT1zdp7dc"),
    ("OPENAI_KEY", "export OPENAI_API_KEY=sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8",
     "sk-proj-Ab1Cd2Ef3Gh4Ij5Kl6Mn7Op8"),
    ("ANTHROPIC_KEY", "my key is sk-ant-api03-Qw3rTy6UiOp9AsDfGhJkL",
     "sk-ant-api03-Qw3rTy6UiOp9AsDfGhJkL"),
    ("GOOGLE_API_KEY", "maps key AIzaSyD-1234567890abcdefghijklmnopqrstu",
     "AIzaSyD-1234567890abcdefghijklmnopqrstu"),
    ("JWT", "session eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0",
     "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0"),
    ("PRIVATE_KEY", "key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEpAIBAAKCAQEA7bqXk\n"
                    "-----END RSA PRIVATE KEY-----\nthanks", "MIIEpAIBAAKCAQEA7bqXk"),
    ("PRIVATE_KEY", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAA",
     "b3BlbnNzaC1rZXktdjEAAAAA"),
    ("CONNECTION_STRING", "DATABASE_URL=postgres://app:S3cr3tPa55@db.internal:5432/prod",
     "S3cr3tPa55"),
    ("BEARER_TOKEN", "curl -H 'Authorization: Bearer abc123DEF456ghi789JKL'",
     "abc123DEF456ghi789JKL"),
    ("PASSWORD", "set password=Tr0ub4dor&3 on the router", "Tr0ub4dor&3"),
    ("PASSWORD", "My email password is correcthorsebattery", "correcthorsebattery"),
    ("PASSWORD", "the wifi password was: Kitchen-42-Blue", "Kitchen-42-Blue"),
    ("PASSWORD", "The password for the staging server is now Gr33nTea!", "Gr33nTea!"),
    ("CARD_NUMBER", "pay with my card 4111 1111 1111 1111 next time", "4111 1111 1111 1111"),
]


@pytest.mark.parametrize(("name", "text", "secret"), SAMPLES, ids=[s[0] for s in SAMPLES])
def test_each_pattern_redacts_its_sample_and_restores_it(name: str, text: str,
                                                         secret: str) -> None:
    redacted = Redactor().redact(text)
    assert secret not in redacted.text
    assert any(p.startswith(f"[REDACTED_{name}_") for p in redacted.placeholders)
    assert redacted.restore(redacted.text) == text


def test_every_pattern_has_a_sample() -> None:
    assert {name.upper() for name, _ in PATTERNS} <= {name for name, _, _ in SAMPLES}


def test_ordinary_text_is_left_alone() -> None:
    text = "I live in Berlin, my password manager is 1Password and I prefer dark mode."
    assert Redactor().redact(text).text == text


def test_one_secret_one_placeholder_and_terms() -> None:
    key = "AKIAIOSFODNN7EXAMPLE"
    redacted = Redactor(["Project Nightjar"]).redact(
        f"{key} again {key} for project nightjar")
    assert redacted.text.count("[REDACTED_AWS_ACCESS_KEY_1]") == 2
    assert "nightjar" not in redacted.text.lower()
