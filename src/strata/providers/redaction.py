"""Secrets out before any remote call ([003] §10.2), back in locally.

``Redactor.redact`` replaces every match of a known secret pattern (and of configured sensitive
terms) with a placeholder such as ``[REDACTED_AWS_ACCESS_KEY_1]``; the returned map lets the
caller restore the originals in the provider's answer without the secret ever leaving the
machine. The same secret gets the same placeholder within one call.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

#: (name, pattern). Order matters: the longer, more specific formats first. A pattern with a
#: group named ``secret`` redacts only that group (keeping e.g. "password=" readable).
PATTERNS: tuple[tuple[str, str], ...] = (
    ("PRIVATE_KEY", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?"
                    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----|\Z)"),
    ("CONNECTION_STRING", r"\b[a-z][a-z0-9+.-]{1,20}://[^\s:/@]+:(?P<secret>[^\s@/]+)@[^\s]+"),
    ("JWT", r"\beyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),
    ("ANTHROPIC_KEY", r"\bsk-ant-[A-Za-z0-9_-]{20,}"),
    ("OPENAI_KEY", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("STRIPE_KEY", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("GITHUB_TOKEN", r"\b(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
    ("GITLAB_TOKEN", r"\bglpat-[A-Za-z0-9_-]{20,}"),
    ("SLACK_TOKEN", r"\bxox[abprs]-[A-Za-z0-9-]{10,}"),
    ("SLACK_WEBHOOK", r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+"),
    ("GOOGLE_API_KEY", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("AWS_ACCESS_KEY", r"\b(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("AWS_SECRET_KEY", r"(?i:aws_?secret_?(?:access_?)?key)[\"']?\s*[:=]\s*[\"']?"
                       r"(?P<secret>[A-Za-z0-9/+=]{40})"),
    ("BEARER_TOKEN", r"(?i:\bbearer)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
    ("PASSWORD", r"(?i:\b(?:password|passwd|pwd|passphrase|secret|api[_-]?key|token)"
                 r"\s*[:=]\s*)[\"']?(?P<secret>[^\s\"',;]{4,})"),
    ("PASSWORD", r"(?i:\b(?:my|the|our)\s+(?:\w+\s+){0,2}(?:password|passcode|passphrase|pin)"
                 r"\s+(?:is|was)\s*:?\s+)[\"']?(?P<secret>[^\s\"',;]{4,})"),
)


@dataclass(frozen=True, slots=True)
class Redacted:
    text: str
    placeholders: Mapping[str, str] = field(default_factory=dict)  # placeholder -> original

    def restore(self, text: str) -> str:
        """Put the originals back into ``text`` (e.g. a provider's answer)."""
        # Newest first: a later pattern may have wrapped an earlier placeholder.
        for placeholder, original in reversed(list(self.placeholders.items())):
            text = text.replace(placeholder, original)
        return text


class Redactor:
    """Compiled secret patterns plus configured sensitive terms."""

    def __init__(self, terms: Iterable[str] = ()) -> None:
        self._patterns = [(name, re.compile(p)) for name, p in PATTERNS]
        cleaned = sorted({t.strip() for t in terms if t and t.strip()}, key=len, reverse=True)
        if cleaned:
            alternatives = "|".join(re.escape(t) for t in cleaned)
            self._patterns.append(("TERM", re.compile(rf"(?i)(?<!\w)(?:{alternatives})(?!\w)")))

    def redact(self, text: str) -> Redacted:
        placeholders: dict[str, str] = {}
        by_secret: dict[str, str] = {}
        counts: dict[str, int] = {}

        def placeholder(name: str, secret: str) -> str:
            if secret not in by_secret:
                counts[name] = counts.get(name, 0) + 1
                token = f"[REDACTED_{name}_{counts[name]}]"
                by_secret[secret] = token
                placeholders[token] = secret
            return by_secret[secret]

        for name, pattern in self._patterns:
            text = pattern.sub(functools.partial(_replace, name=name, placeholder=placeholder),
                               text)
        return Redacted(text, placeholders)


def _replace(match: re.Match[str], *, name: str, placeholder: Callable[[str, str], str]) -> str:
    if "secret" not in match.re.groupindex or match.group("secret") is None:
        return placeholder(name, match.group(0))
    start, end = match.span("secret")
    whole_start = match.start()
    secret = match.group("secret")
    full = match.group(0)
    return full[: start - whole_start] + placeholder(name, secret) + full[end - whole_start:]
