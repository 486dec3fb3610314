"""``python -m strata_recall``: the same CLI as the ``strata`` command."""

from strata_recall.cli.main import app

app(prog_name="strata")
