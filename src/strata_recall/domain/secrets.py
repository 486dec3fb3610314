"""Secrets in text: where they are, of which kind, and the text with them masked.

The one place that recognises secrets (decision record 0020).
Two sources, merged by position: the regex detectors of ``detect-secrets`` (cloud and SaaS
keys and tokens; run on the string, offline, never verified against a service) and our own
patterns for what that library does not find in prose: whole private-key blocks, connection
strings with a password, bearer tokens, ``password: x`` and "my password is x", vendor keys it
lacks, and card numbers that pass the Luhn check. Where two findings overlap, the earlier and
longer one wins, ours before the library's.

``mask_secrets`` shows each secret as ``[secret:<kind>]``; the write path stores that in
everything derived from a text, and recall shows it unless the caller may see secrets.
"""

from __future__ import annotations

import functools
import importlib
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, replace
from typing import Any, TypeVar

from strata_recall.domain.models import Event, Memory

#: (kind, pattern). A pattern with a group named ``secret`` marks only that group (keeping
#: e.g. "password=" readable).
PATTERNS: tuple[tuple[str, str], ...] = (
    ("private_key", r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?"
                    r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|\Z)"),
    ("connection_string", r"://[^\s:/@]+:(?P<secret>[^\s@/]+)@[^\s]+"),
    ("jwt", r"eyJ[A-Za-z0-9_-]{5,}\.eyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}"),
    ("anthropic_key", r"sk-ant-[A-Za-z0-9_-]{20,}"),
    ("openai_key", r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("stripe_key", r"(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("github_token", r"(?:gh[pousr]_[A-Za-z0-9]{36,}|github_pat_[A-Za-z0-9_]{40,})"),
    ("gitlab_token", r"glpat-[A-Za-z0-9_-]{20,}"),
    ("slack_token", r"xox[abprs]-[A-Za-z0-9-]{10,}"),
    ("slack_webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+"),
    ("google_api_key", r"AIza[0-9A-Za-z_-]{35}"),
    ("aws_access_key", r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}\b"),
    ("aws_secret_key", r"(?i:aws_?secret_?(?:access_?)?key)[\"']?\s*[:=]\s*[\"']?"
                       r"(?P<secret>[A-Za-z0-9/+=]{40})"),
    ("bearer_token", r"(?i:\bbearer)\s+(?P<secret>[A-Za-z0-9._~+/=-]{16,})"),
    ("password", r"(?i:(?<!\[)\b(?:password|passwd|pwd|passphrase|passcode|secret"
                 r"|api[_-]?key|token)\s*[:=]\s*)[\"']?(?P<secret>[^\s\"',;]{3,}[^\s\"',;.!?)])"),
    ("password", r"(?i:\b(?:my|the|our|his|her|their|your)\s+(?:[\w-]+\s+){0,3}?"
                 r"(?:password|passcode|passphrase|pin(?:\s+code)?)"
                 r"(?:\s+(?:for|to|of|on|at)\s+(?:[\w.@-]+\s+){0,3}?)?"
                 r"\s*(?:(?:is|was)(?:\s+now)?|=|:)\s*:?\s+)[\"']?"
                 r"(?P<secret>[^\s\"',;]{3,}[^\s\"',;.!?)])"),
    ("card_number", r"(?<![\d-])\d(?:[ -]?\d){12,18}(?![\d])"),
)
#: Kinds whose match must start a word. Checked after the match rather than with a leading
#: ``\b``, which would cost the regex engine its literal-prefix search (10x slower here).
WORD_START = frozenset({"jwt", "anthropic_key", "openai_key", "stripe_key", "github_token",
                        "gitlab_token", "slack_token", "google_api_key", "aws_access_key"})

#: A pattern (our kind) or detect-secrets plugin ("module.Class") listed here runs only on a
#: text holding one of its words (lower case): each needs that word to match at all (read off
#: its regex), and these are the slowest, while most texts name no password or key.
TRIGGERS: dict[str, tuple[str, ...]] = {
    "password": ("pass", "pwd", "secret", "key", "token", "pin"),
    "aws_secret_key": ("secret",),
    "bearer_token": ("bearer",),
    "card_number": ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9"),
    "cloudant.CloudantDetector": ("key", "pw", "pass", "token", "cloudant"),
    "ibm_cloud_iam.IbmCloudIamDetector": ("key", "pwd", "pass", "token"),
    "ibm_cos_hmac.IbmCosHmacDetector": ("key", "access"),
    "softlayer.SoftlayerDetector": ("key", "pwd", "pass", "token", "softlayer"),
    "mailchimp.MailchimpDetector": ("-us",),
}
#: detect-secrets' ``secret_type`` → our kind.
LIBRARY_KINDS: dict[str, str] = {
    "Artifactory Credentials": "artifactory_token",
    "AWS Access Key": "aws_access_key",
    "Azure Storage Account access key": "azure_storage_key",
    "Basic Auth Credentials": "connection_string",
    "Cloudant Credentials": "cloudant_key",
    "Discord Bot Token": "discord_token",
    "GitHub Token": "github_token",
    "GitLab Token": "gitlab_token",
    "IBM Cloud IAM Key": "ibm_cloud_key",
    "IBM COS HMAC Credentials": "ibm_cloud_key",
    "JSON Web Token": "jwt",
    "Mailchimp Access Key": "mailchimp_key",
    "NPM tokens": "npm_token",
    "OpenAI Token": "openai_key",
    "PyPI Token": "pypi_token",
    "SendGrid API Key": "sendgrid_key",
    "Slack Token": "slack_token",
    "SoftLayer Credentials": "softlayer_key",
    "Square OAuth Secret": "square_oauth_secret",
    "Stripe Access Key": "stripe_key",
    "Telegram Bot Token": "telegram_token",
    "Twilio API Key": "twilio_key",
}
#: The meta key that marks a raw event or a memory whose text holds secrets: their kinds.
SECRETS_KEY = "secrets"
#: What a masked secret looks like; the kind tells a reader what was there.
MASK = "[secret:{kind}]"
#: Texts shorter than this hold no secret any detector here would report.
MIN_SECRET_TEXT = 8


@dataclass(frozen=True, slots=True)
class Secret:
    """One secret found in a text: its kind and where it is (``text[start:end]``)."""

    kind: str
    start: int
    end: int


def load_detectors() -> None:
    """Load the detectors now (the library's ~0.4 s import), not in the first remember."""
    _compiled()
    _library_plugins()


def find_secrets(text: str) -> tuple[Secret, ...]:
    """Every secret in ``text``, in order, none overlapping another."""
    if len(text) < MIN_SECRET_TEXT:
        return ()
    lowered = text.lower()
    found = [*_own_findings(text, lowered), *_library_findings(text, lowered)]
    return without_overlaps(found)


def secret_kinds(text: str) -> tuple[str, ...]:
    """The kinds of secret ``text`` holds, sorted, each once (empty: none)."""
    return tuple(sorted({s.kind for s in find_secrets(text)}))


def mask_secrets(text: str) -> str:
    """``text`` with each secret replaced by ``[secret:<kind>]``."""
    secrets = find_secrets(text)
    if not secrets:
        return text
    parts: list[str] = []
    at = 0
    for secret in secrets:
        parts.append(text[at:secret.start])
        parts.append(MASK.format(kind=secret.kind))
        at = secret.end
    parts.append(text[at:])
    return "".join(parts)


# -- marks: events and memories whose text holds secrets ------------------------------------


def marked(meta: Mapping[str, Any], text: str) -> dict[str, Any]:
    """``meta`` with ``secrets`` set to the kinds ``text`` holds (removed when none: the key
    is the engine's, whatever a caller put there)."""
    kinds = secret_kinds(text)
    out = {k: v for k, v in meta.items() if k != SECRETS_KEY}
    return {**out, SECRETS_KEY: list(kinds)} if kinds else out


def holds_secrets(meta: Mapping[str, Any]) -> bool:
    return bool(meta.get(SECRETS_KEY))


def masked_text(text: str, *metas: Mapping[str, Any]) -> str:
    """``text`` masked when any of ``metas`` (its source's) is marked; else as it is, without
    a scan (recall reads the marks, never the text)."""
    return mask_secrets(text) if any(holds_secrets(m) for m in metas) else text


Item = TypeVar("Item", Event, Memory)


def masked(item: Item) -> Item:
    """A marked event or memory with its text masked (the mark stays: it tells what kind of
    secret the raw record holds); any other as it is."""
    if not holds_secrets(item.meta):
        return item
    if isinstance(item, Event):
        return replace(item, text=mask_secrets(item.text))
    return replace(item, content=mask_secrets(item.content))


def luhn_valid(digits: str) -> bool:
    """The Luhn checksum every payment card number passes."""
    total = 0
    for position, char in enumerate(reversed(digits)):
        value = int(char)
        if position % 2:
            value = value * 2 - 9 if value > 4 else value * 2
        total += value
    return total % 10 == 0


# -- the two sources ------------------------------------------------------------------------


@functools.cache
def _compiled() -> tuple[tuple[str, re.Pattern[str]], ...]:
    return tuple((kind, re.compile(pattern)) for kind, pattern in PATTERNS)


def _own_findings(text: str, lowered: str) -> Iterator[Secret]:
    for kind, pattern in _compiled():
        if not _triggered(kind, lowered):
            continue
        for match in pattern.finditer(text):
            start, end = match.span("secret" if "secret" in pattern.groupindex else 0)
            if kind == "card_number" and not _is_card(match.group(0)):
                continue
            if kind in WORD_START and start and (text[start - 1].isalnum()
                                                 or text[start - 1] == "_"):
                continue
            yield Secret(kind, start, end)


def _triggered(name: str, lowered: str) -> bool:
    words = TRIGGERS.get(name)
    return words is None or any(word in lowered for word in words)


def _is_card(number: str) -> bool:
    digits = re.sub(r"[ -]", "", number)
    return 13 <= len(digits) <= 19 and len(set(digits)) > 1 and luhn_valid(digits)


#: The detect-secrets regex plugins used ("module.Class" under ``detect_secrets.plugins``).
#: Left out: the public-IP, keyword and entropy detectors (prose is full of long words and
#: ids) and the private-key one (it reports the header line only; our pattern takes the block).
LIBRARY_PLUGINS: tuple[str, ...] = (
    "artifactory.ArtifactoryDetector", "aws.AWSKeyDetector",
    "azure_storage_key.AzureStorageKeyDetector", "basic_auth.BasicAuthDetector",
    "cloudant.CloudantDetector", "discord.DiscordBotTokenDetector",
    "github_token.GitHubTokenDetector", "gitlab_token.GitLabTokenDetector",
    "ibm_cloud_iam.IbmCloudIamDetector", "ibm_cos_hmac.IbmCosHmacDetector",
    "jwt.JwtTokenDetector", "mailchimp.MailchimpDetector", "npm.NpmDetector",
    "openai.OpenAIDetector", "pypi_token.PypiTokenDetector", "sendgrid.SendGridDetector",
    "slack.SlackDetector", "softlayer.SoftlayerDetector", "square_oauth.SquareOAuthDetector",
    "stripe.StripeDetector", "telegram_token.TelegramBotTokenDetector",
    "twilio.TwilioKeyDetector",
)


@functools.cache
def _library_plugins() -> tuple[tuple[str, str, Any], ...]:
    """(name, kind, plugin) for each plugin of ``LIBRARY_PLUGINS``. Imported on first use: the
    library pulls in ``requests``, which a command that detects nothing need not load."""
    chosen = []
    for name in LIBRARY_PLUGINS:
        module, cls = name.rsplit(".", 1)
        plugin = getattr(importlib.import_module(f"detect_secrets.plugins.{module}"), cls)()
        chosen.append((name, LIBRARY_KINDS[str(plugin.secret_type)], plugin))
    return tuple(chosen)


def _library_findings(text: str, lowered: str) -> Iterator[Secret]:
    """The plugins report secret values (``analyze_string``, no verification, no network),
    not positions: each value is marked wherever it occurs."""
    for name, kind, plugin in _library_plugins():
        if not _triggered(name, lowered):
            continue
        for value in set(plugin.analyze_string(text)):
            for start in _occurrences(text, value):
                yield Secret(kind, start, start + len(value))


def _occurrences(text: str, value: str) -> Iterator[int]:
    at = text.find(value) if value else -1
    while at >= 0:
        yield at
        at = text.find(value, at + len(value))


def without_overlaps(found: Iterable[Secret]) -> tuple[Secret, ...]:
    """Earlier start first, then the longer; ours before the library's on a tie (stable)."""
    kept: list[Secret] = []
    for secret in sorted(found, key=lambda s: (s.start, -(s.end - s.start))):
        if kept and secret.start < kept[-1].end:
            continue
        kept.append(secret)
    return tuple(kept)
