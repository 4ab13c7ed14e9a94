"""Engine speed against SimPy and a bare event loop on the same system (``npusched bench``).

Run ``python benchmarks/bench_engine.py`` (all scenarios), ``--scenario temporal``,
``--scenario prema --requests 1000000 --json`` for the memory target; every option of
``npusched bench`` is accepted. See :mod:`npusched.bench` for the scenarios and references and
``benchmarks/README.md`` for the targets.
"""

from __future__ import annotations

import sys

from npusched.cli import main

if __name__ == "__main__":
    sys.exit(main(["bench", *sys.argv[1:]]))
