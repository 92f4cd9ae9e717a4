"""`dbt` as the suite starts it in a process of its own: the fault its environment names
(tests/support/faults.py FAULT_ENV) installed first, then dbt's own command line."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))  # the repository: `tests`

from dbt.cli.main import cli

from tests.support.faults import install_from_env

if __name__ == "__main__":
    install_from_env()
    sys.exit(cli())
