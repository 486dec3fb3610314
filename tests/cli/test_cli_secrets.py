"""`strata recall` and `strata export` mask secrets unless asked (decision 0020)."""

from __future__ import annotations

from tests.cli.conftest import Cli, CliJson

KEY = "AKIAIOSFODNN7EXAMPLE"


def test_cli_recall_and_export_mask_secrets_unless_asked(cli: Cli, cli_json: CliJson) -> None:
    cli_json("remember", f"the deploy key is {KEY}", "--team", "a")
    masked = cli("recall", "deploy key", "--team", "a", "--context")
    assert masked.exit_code == 0 and KEY not in masked.stdout
    assert "[secret:aws_access_key]" in masked.stdout
    shown = cli("recall", "deploy key", "--team", "a", "--context", "--reveal-secrets")
    assert KEY in shown.stdout
    exported = cli("export")
    assert exported.exit_code == 0 and KEY not in exported.stdout
    assert KEY in cli("export", "--include-secrets").stdout
