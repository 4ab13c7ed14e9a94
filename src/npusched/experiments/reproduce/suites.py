"""``npusched reproduce all [--quick]``: every reproduction suite, the packaged sweeps, then one
report (:mod:`npusched.report.sweep_report`).

Suites are registered in :data:`SUITES` (name -> ``run(out, *, quick, progress) -> summary``);
the built-in ones run with the parameters of their packaged experiment file
(:mod:`npusched.experiments.suite_files`). A new paper's suite joins ``reproduce all`` by
registering itself here::

    @SUITES.register("mypaper")
    def _mypaper(out: Path, *, quick: bool, progress: bool) -> dict[str, Any]:
        return mypaper.reproduce(out, quick=quick, progress=progress)

Layout of ``OUT``: ``OUT/<suite>/`` per suite (its own ``summary.json`` with a ``headline``
and ``report.md``), ``OUT/sweeps/<experiment>/`` per packaged experiment file
(``npusched/data/experiments/*.toml``; with ``quick`` only seeds 0 and 1), ``OUT/compare/``
(:mod:`npusched.experiments.compare`) and ``OUT/index.html``
/ ``OUT/index.md``, the report over all of them. Every suite and sweep resumes what a previous
run finished where it supports it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from npusched.errors import ConfigError, NpuschedError
from npusched.registry import Registry

if TYPE_CHECKING:
    from npusched.experiments.suite_files import Suite as SuiteModel

__all__ = [
    "QUICK_CLOCK_LEVELS_HZ",
    "SUITES",
    "packaged_experiments",
    "reproduce_all",
    "run_study",
    "run_suite",
    "run_suite_model",
]

#: ``compare``'s DFS clock levels in quick mode (Hz): four of Table 5's 100-700 MHz (the
#: fission array's profile has one variant per subarray count and level; 17 levels take
#: about 10 s to compile for workload C, these 2.5 s).
QUICK_CLOCK_LEVELS_HZ = (700e6, 400e6, 250e6, 100e6)

Suite = Callable[..., dict[str, Any]]

#: The reproduction suites ``reproduce all`` runs, in registration order.
SUITES: Registry[dict[str, Any]] = Registry("reproduction suite")


def _from_file(name: str) -> Callable[..., dict[str, Any]]:
    def run(
        out: Path,
        *,
        quick: bool,
        progress: bool,
        config: str | Path | None = None,
        overrides: Mapping[str, tuple[str, Any]] | None = None,
    ) -> dict[str, Any]:
        return run_suite(
            name, out, config=config, quick=quick, progress=progress, overrides=overrides
        )

    run.__doc__ = f"The {name!r} suite with its packaged parameters (or the file ``config``)."
    return run


def run_suite_model(
    suite: SuiteModel, out: str | Path, *, quick: bool, progress: bool
) -> dict[str, Any]:
    """Run a suite model (:data:`npusched.experiments.suite_files.SUITE_MODELS`) into ``out``:
    the study's ``run_suite`` (its ``run`` module maps the parameters onto ``reproduce``)."""
    from npusched.experiments.studies.dfs import run as dfs
    from npusched.experiments.studies.fluid import run as fluid
    from npusched.experiments.studies.haxconn import run as haxconn
    from npusched.experiments.studies.planaria import run as planaria
    from npusched.experiments.studies.prema import run as prema

    runners: dict[str, Callable[..., dict[str, Any]]] = {
        "prema": prema.run_suite,
        "planaria": planaria.run_suite,
        "dfs": dfs.run_suite,
        "fluid": fluid.run_suite,
        "haxconn": haxconn.run_suite,
    }
    return runners[suite.suite](suite, Path(out), quick=quick, progress=progress)


def run_suite(
    name: str,
    out: str | Path,
    *,
    config: str | Path | None = None,
    quick: bool = False,
    progress: bool = True,
    overrides: Mapping[str, tuple[str, Any]] | None = None,
) -> dict[str, Any]:
    """``npusched reproduce NAME [--config FILE]``: load the parameters (checked before anything
    runs) and run the suite into ``out``."""
    from npusched.experiments.suite_files import load_suite

    suite = load_suite(name, config, quick=quick, overrides=overrides)
    return run_suite_model(suite, out, quick=quick, progress=progress)


# Each suite runs with the parameters of its packaged experiment file
# (npusched/data/experiments/suites/<name>.toml; see npusched.experiments.suite_files).
for _name in ("prema", "planaria", "dfs", "fluid", "haxconn"):
    SUITES.register(_name, _from_file(_name))


def run_study(
    name: str,
    out: str | Path,
    *,
    quick: bool = False,
    sets: Sequence[str] | None = None,
    options: Mapping[str, tuple[str, Any]] | None = None,
    config: str | Path | None = None,
    progress: bool = True,
) -> dict[str, Any]:
    """``npusched reproduce NAME [--set KEY=VALUE ...] [--KEY VALUE ...] [--quick]`` for any
    registered study: the ``--set`` values and the command's own ``options`` (suite-file key
    -> ``(option, value)``; one key may not come from both) are checked, and ``out`` too,
    before it runs. ``config`` is an edited suite file (studies with one)."""
    import inspect

    from npusched._io import check_out_dir
    from npusched.experiments.suite_files import set_overrides

    run = SUITES.get(name)
    overrides = dict(options or {})
    for key, (opt, value) in set_overrides(sets).items():
        if key in overrides:
            raise ConfigError(f"{opt} and {overrides[key][0]}: the same parameter; give one")
        overrides[key] = (opt, value)
    takes = inspect.signature(run).parameters
    extra: dict[str, Any] = {}
    if overrides:
        if "overrides" not in takes:
            key = next(iter(overrides))
            raise ConfigError(f"--set {key}: study {name!r} takes no parameters from --set")
        extra["overrides"] = overrides
    if config is not None:
        if "config" not in takes:
            raise ConfigError(f"--config: study {name!r} has no suite file")
        extra["config"] = config
    check_out_dir(out)
    return run(Path(out), quick=quick, progress=progress, **extra)


def packaged_experiments() -> list[Path]:
    """The experiment files shipped in ``npusched/data/experiments``."""
    from importlib.resources import files

    d = Path(str(files("npusched") / "data" / "experiments"))
    return sorted(d.glob("*.toml")) + sorted(d.glob("*.yaml"))


def reproduce_all(
    out: str | Path,
    *,
    quick: bool = False,
    only: Sequence[str] | None = None,
    sweeps: bool = True,
    compare: bool = True,
    progress: bool = True,
    echo: Callable[[str], None] = print,
    configs: Sequence[str | Path] = (),
    figure_format: str = "png",
) -> tuple[Path, Path]:
    """Run the suites (all, or ``only``), the packaged sweeps, ``npusched compare`` (into
    ``OUT/compare``; one instance of 100 requests per load with ``quick``), then the report.

    ``figure_format``: ``svg`` or ``pdf`` also writes every figure in that format
    (:func:`npusched.report.plots.figure_formats`); the report embeds SVGs.

    ``configs`` are edited suite files (``npusched reproduce all --config FILE``); each one's
    ``suite`` key names the suite it replaces the packaged parameters of.

    A failing suite does not stop the others; after the report is written the failures raise
    one :class:`ConfigError` naming them.

    Returns:
        The report's ``index.html`` and ``index.md``.
    """
    from npusched.experiments.store import load_results
    from npusched.report.sweep_report import write_report

    root = Path(out)
    names = list(only) if only else SUITES.names()
    for n in names:
        SUITES.get(n)  # unknown names fail before anything runs
    by_suite: dict[str, Path] = {}
    for c in configs:  # bad files fail before anything runs
        from npusched.experiments.suite_files import load_suite

        kind = load_suite(path=c).suite
        if kind in by_suite:
            raise ConfigError(f"{c}: a second file for suite {kind!r} (first: {by_suite[kind]})")
        by_suite[kind] = Path(c)
        load_suite(kind, c, quick=quick)
    from npusched.report.plots import figure_formats
    from npusched.report.provenance import current, write_provenance

    started = current()["date"]
    with figure_formats(figure_format):
        failed = _run_all(root, names, by_suite, quick, sweeps, compare, progress, echo)
    write_provenance(root, quick=quick, started=started)
    html, md = write_report(
        root, figure_format=figure_format, progress=progress, load_sweep=load_results
    )
    if failed:
        raise ConfigError("reproduce all: failed suites: " + "; ".join(failed))
    return html, md


def _run_all(
    root: Path,
    names: Sequence[str],
    by_suite: dict[str, Path],
    quick: bool,
    sweeps: bool,
    compare: bool,
    progress: bool,
    echo: Callable[[str], None],
) -> list[str]:
    """The suites, sweeps and compare of :func:`reproduce_all`; returns the failures."""
    from npusched.experiments.store import run_sweep
    from npusched.experiments.sweep import load_experiment, parse_filters

    failed: list[str] = []
    for n in names:
        t0 = time.perf_counter()
        echo(f"reproduce {n}{' (quick)' if quick else ''} -> {root / n}")
        try:
            extra = {"config": by_suite[n]} if n in by_suite else {}
            SUITES.get(n)(root / n, quick=quick, progress=progress, **extra)
        except NpuschedError as e:
            failed.append(f"{n}: {e}")
            continue
        echo(f"  done in {time.perf_counter() - t0:.0f} s")
    if sweeps:
        for path in packaged_experiments():
            exp = load_experiment(path)
            flt = parse_filters(["seed=0", "seed=1"], exp) if quick else []
            echo(f"sweep {exp.name} -> {root / 'sweeps' / exp.name}")
            res = run_sweep(exp, root / "sweeps" / exp.name, filters=flt, progress=progress)
            echo(f"  {res.ran} points in {res.wall_s:.0f} s ({res.skipped} already done)")
    if compare:
        from npusched.experiments.compare import compare as run_compare

        t0 = time.perf_counter()
        echo(f"compare -> {root / 'compare'}")
        kw: dict[str, Any] = (
            {"instances": 1, "n_requests": 100, "levels_hz": QUICK_CLOCK_LEVELS_HZ} if quick else {}
        )
        run_compare(root / "compare", progress=progress, **kw)
        echo(f"  done in {time.perf_counter() - t0:.0f} s")
    return failed
