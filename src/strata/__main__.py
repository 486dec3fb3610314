"""``python -m strata``: the same CLI as the ``strata`` command."""

from strata.cli.main import app

app(prog_name="strata")
