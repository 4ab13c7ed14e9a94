"""``npusched reproduce NAME`` (one command per registered study; the papers' own commands with
their options) and ``npusched suites``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from typer.core import TyperGroup

from npusched.cli._app import (
    CONTEXT,
    ConfigOpt,
    ExportOpt,
    FigureFormatOpt,
    FormatOpt,
    QuietOpt,
    SetOpt,
    VerboseOpt,
    _common,
    _print_headline,
    app,
    models_app,
)
from npusched.errors import ConfigError


class _InOrder(TyperGroup):
    """Lists sub-commands in :attr:`ORDER` (the papers in the order the README presents
    them, then ``all``) instead of the order their functions appear in this file."""

    ORDER = ("prema", "planaria", "fluid", "haxconn", "dfs", "all")

    def list_commands(self, ctx: Any) -> list[str]:
        from npusched.experiments.reproduce.suites import SUITES

        names = sorted(set(super().list_commands(ctx)) | set(SUITES.names()))
        rank = {n: i for i, n in enumerate(self.ORDER)}
        return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """A named sub-command, else ``reproduce NAME`` for any registered study (``SUITES``)."""
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        from npusched.experiments.reproduce.suites import SUITES

        if cmd_name not in SUITES:
            return None
        return typer.main.get_command(_study_app(cmd_name))


def _study_app(name: str) -> typer.Typer:
    """``npusched reproduce NAME`` for a study with no command of its own: the shared options
    only (``--out``, ``--quick``, ``--set``, ``-q``, ``-v``)."""
    one = typer.Typer(context_settings=CONTEXT)

    @one.command(name, help=f"Run the registered study {name!r}.")
    def study(
        out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path(
            f"out/{name}"
        ),
        quick: Annotated[bool, typer.Option(help="The study's quick run.")] = False,
        sets: SetOpt = None,
        quiet: QuietOpt = False,
        verbose: VerboseOpt = False,
    ) -> None:
        from npusched.experiments.reproduce.suites import run_study

        summary = run_study(
            name, out, quick=quick, sets=sets, progress=_common(quiet=quiet, verbose=verbose)
        )
        _print_headline(summary, f"{name}: our numbers vs the paper's", out)

    return one


reproduce_app = typer.Typer(
    cls=_InOrder,
    help="Reproduce a paper's evaluation.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    context_settings=CONTEXT,
)
app.add_typer(models_app, name="models")
app.add_typer(reproduce_app, name="reproduce")
app.add_typer(reproduce_app, name="reproduce")
suites_app = typer.Typer(
    help="The reproduce suites' experiment files: list, export for editing, convert to sweeps.",
    no_args_is_help=True,
    context_settings=CONTEXT,
)
app.add_typer(suites_app, name="suites")



def _run_suite(
    name: str,
    out: Path,
    quick: bool,
    config: Path | None,
    export: Path | None,
    progress: bool = True,
    *,
    sets: list[str] | None = None,
    **options: tuple[str, Any],
) -> dict[str, Any] | None:
    """Export the packaged suite file (``--export``; returns ``None``) or run the suite with its
    packaged or ``--config`` parameters, the ``--set KEY=VALUE`` ``sets`` and the command-line
    ``options`` given (field -> ``(option, value)``, ``None`` values left to the file)."""
    from npusched.experiments.suite_files import export_suite, run_suite, set_overrides

    given = {k: v for k, v in options.items() if v[1] is not None}
    for key, (opt, value) in set_overrides(sets).items():
        if key in given:
            raise ConfigError(f"{opt} and {given[key][0]}: the same parameter; give one")
        given[key] = (opt, value)
    if export is not None:
        path = export_suite(name, export)
        typer.echo(f"{name} suite: {path} (edit it, then: npusched reproduce {name} --config {path})")
        return None
    from npusched.experiments.runner import check_out_dir

    check_out_dir(out)  # a file of that name fails now, not after the suite's first part
    return run_suite(name, out, config=config, quick=quick, progress=progress, overrides=given)


@reproduce_app.command("prema")
def reproduce_prema(
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Output directory; a rerun resumes the finished points."),
    ] = Path("out/prema"),
    quick: Annotated[bool, typer.Option(help="Fewer runs (under a minute).")] = False,
    runs: Annotated[
        int | None, typer.Option(help="Workloads per point (default: the suite file's, 25).")
    ] = None,
    seed: Annotated[
        int | None, typer.Option(help="Base seed of every workload (>= 0; default 0).")
    ] = None,
    load: Annotated[
        float | None,
        typer.Option(help="Offered load while tasks arrive (default 1.5; sets the window)."),
    ] = None,
    paper_range: Annotated[
        bool | None,
        typer.Option(
            "--paper-range/--no-paper-range",
            help="Also run the headline policies with tasks limited to the paper's 0.5-45 ms.",
        ),
    ] = None,
    plots: Annotated[
        bool | None,
        typer.Option("--plots/--no-plots", help="Draw the PNG figures (CSVs and reports always)."),
    ] = None,
    sets: SetOpt = None,
    config: ConfigOpt = None,
    export: ExportOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """PREMA (HPCA 2020) Sec. VI: Fig. 5/6, 11-15 and the predictor study."""
    summary = _run_suite(
        "prema",
        out,
        quick,
        config,
        export,
        _common(quiet=quiet, verbose=verbose),
        sets=sets,
        runs=("--runs", runs),
        seed=("--seed", seed),
        load=("--load", load),
        paper_range=("--paper-range", paper_range),
        plots=("--plots", plots),
    )
    if summary is not None:
        _print_headline(summary, "PREMA: our numbers vs the paper's", out)


@reproduce_app.command("haxconn")
def reproduce_haxconn(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path(
        "out/haxconn"
    ),
    quick: Annotated[bool, typer.Option(help="Short solver limits, fewer pairs.")] = False,
    only: Annotated[
        list[str] | None,
        typer.Option(help="Parts to run (repeatable): table6, table8, fig5, fig7, solver, gap."),
    ] = None,
    experiment: Annotated[
        list[int] | None, typer.Option(help="Table 6 experiment numbers (repeatable).")
    ] = None,
    sets: SetOpt = None,
    config: ConfigOpt = None,
    export: ExportOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """HaX-CoNN (PPoPP'24) Sec. 5: Table 6, Table 8, Fig. 5, Fig. 7 and a CP-SAT vs Z3 benchmark."""
    summary = _run_suite(
        "haxconn",
        out,
        quick,
        config,
        export,
        _common(quiet=quiet, verbose=verbose),
        sets=sets,
        parts=("--only", only or None),
        experiments=("--experiment", experiment or None),
    )
    if summary is None:
        return
    from npusched.report.tables import render

    rows = [
        {
            "exp": k,
            "best baseline": v["best_baseline"],
            "baseline ms": v["best_baseline_latency_ms"],
            "HaX-CoNN ms": v["haxconn_latency_ms"],
            "improvement %": v["improvement_pct"],
            "paper %": v["paper_improvement_pct"],
            "solver s": v["solver_s"],
            "proven": v["proven"],
        }
        for k, v in summary["experiments"].items()
    ]
    render(rows, "table", title="HaX-CoNN Table 6: ours vs the paper's improvement")
    typer.echo(f"report: {Path(out) / 'report.md'} (tables, CSVs and plots in {out})")


@reproduce_app.command("dfs")
def reproduce_dfs(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("out/dfs"),
    quick: Annotated[
        bool, typer.Option(help="Three networks (VGG-16, ResNet-18, SqueezeNet) instead of eight.")
    ] = False,
    cap_w: Annotated[
        float | None, typer.Option(help="Power limit in watts (> 0; default 33).")
    ] = None,
    efficiency: Annotated[
        float | None,
        typer.Option(help="AB9 STC efficiency in (0, 1] (default: the least-squares fit's)."),
    ] = None,
    fuse: Annotated[
        bool | None,
        typer.Option(
            "--fuse/--no-fuse",
            help="Fuse vector layers into the GEMM step before them (else per operator).",
        ),
    ] = None,
    sets: SetOpt = None,
    config: ConfigOpt = None,
    export: ExportOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Layer-wise DFS vs DVFS under a power limit (ETRI J. 2022): Fig. 4-6, Table 6."""
    summary = _run_suite(
        "dfs",
        out,
        quick,
        config,
        export,
        _common(quiet=quiet, verbose=verbose),
        sets=sets,
        cap_w=("--cap-w", cap_w),
        efficiency=("--efficiency", efficiency),
        fuse=("--fuse", fuse),
    )
    if summary is not None:
        _print_headline(summary, "DFS vs DVFS: our numbers vs the paper's", out)


@reproduce_app.command("planaria")
def reproduce_planaria(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path(
        "out/planaria"
    ),
    quick: Annotated[bool, typer.Option(help="Fewer workload instances.")] = False,
    multi_tenant: Annotated[
        bool | None,
        typer.Option(
            "--multi-tenant/--no-multi-tenant",
            help="Also run Fig. 12-15 (throughput at SLA, SLA rate, fairness, energy; slow).",
        ),
    ] = None,
    networks: Annotated[
        str | None,
        typer.Option(
            help="Benchmarks: 'artifact' (the authors' planaria/<name>, default) or 'full-size'."
        ),
    ] = None,
    sets: SetOpt = None,
    config: ConfigOpt = None,
    export: ExportOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Planaria (MICRO 2020) Sec. VI: Fig. 17 (isolated speedup and energy) and, with
    --multi-tenant, Fig. 12-16 against PREMA."""
    summary = _run_suite(
        "planaria",
        out,
        quick,
        config,
        export,
        _common(quiet=quiet, verbose=verbose),
        sets=sets,
        multi_tenant=("--multi-tenant", multi_tenant),
        benchmarks=("--networks", networks),
    )
    if summary is not None:
        _print_headline(summary, "Planaria: our numbers vs the paper's", out)


@reproduce_app.command("all")
def reproduce_all_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("out"),
    quick: Annotated[
        bool, typer.Option(help="Each suite's quick mode; sweeps on 2 seeds.")
    ] = False,
    only: Annotated[
        list[str] | None, typer.Option("--only", help="Run only this suite (repeatable).")
    ] = None,
    sweeps: Annotated[
        bool, typer.Option("--sweeps/--no-sweeps", help="Also run the packaged experiment files.")
    ] = True,
    compare: Annotated[
        bool,
        typer.Option(
            "--compare/--no-compare",
            help="Also run npusched compare (NP-FCFS/PREMA/Planaria, capped and not).",
        ),
    ] = True,
    config: Annotated[
        list[Path] | None,
        typer.Option(
            "--config", help="An edited suite file replacing its suite's packaged one (repeatable)."
        ),
    ] = None,
    figure_format: FigureFormatOpt = "png",
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Every reproduction suite and packaged sweep, then one report (index.html, index.md)."""
    from npusched.experiments.reproduce.suites import reproduce_all
    from npusched.experiments.runner import check_out_dir

    _common(quiet=quiet, verbose=verbose)
    check_out_dir(out)
    html, md = reproduce_all(
        out,
        quick=quick,
        only=only,
        sweeps=sweeps,
        compare=compare,
        echo=typer.echo,
        configs=config or (),
        figure_format=figure_format,
    )
    typer.echo(f"report: {html} and {md}")


@reproduce_app.command("fluid")
def reproduce_fluid(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("out/fluid"),
    quick: Annotated[
        bool,
        typer.Option(help="Two (model, board) pairs, coarser DSE, 1 seed x 1500 samples (~2 min)."),
    ] = False,
    serving: Annotated[
        bool | None,
        typer.Option(
            "--serving/--no-serving", help="Run the serving experiments (Fig. 7-9, Table II)."
        ),
    ] = None,
    designs: Annotated[
        Literal["dse", "table1"] | None,
        typer.Option(
            help="NPU per serving policy: dse (default: its own DSE at B = 8) or table1."
        ),
    ] = None,
    sets: SetOpt = None,
    config: ConfigOpt = None,
    export: ExportOpt = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Fluid Batching (Kouris et al.): DSE vs Table I, Fig. 10, Fig. 7-9, Table II."""
    summary = _run_suite(
        "fluid",
        out,
        quick,
        config,
        export,
        _common(quiet=quiet, verbose=verbose),
        sets=sets,
        serving=("--serving", serving),
        designs=("--designs", designs),
    )
    if summary is None:
        return
    from npusched.report.tables import render

    rows = [
        {k: r[k] for k in ("model", "board", "ours", "paper", "paper_over_ours")}
        for r in summary["dse"]
    ]
    render(rows, "table", title="Fluid Batching: DSE design points vs Table I")
    if summary.get("table2"):
        render(
            [
                {
                    "model": r["model"],
                    "board": r["board"],
                    "gain_ours": round(r["avg_latency_gain"], 2),
                    "gain_paper": round(r["paper_gain"], 2),
                }
                for r in summary["table2"]
            ],
            "table",
            title="Table II: average-latency gain of FluidB over LazyBatching",
        )
    typer.echo(f"report: {Path(out) / 'report.md'} (CSVs and plots in {out})")


# --- suites ------------------------------------------------------------------------------------
@suites_app.command("list")
def suites_list(fmt: FormatOpt = "table") -> None:
    """The suites, their packaged files and whether `npusched sweep` can run them."""
    from npusched.experiments.suite_files import SUITE_MODELS, SWEEPABLE, load_suite, packaged_suite
    from npusched.report.tables import render

    rows = [
        {
            "suite": n,
            "sweep": "yes" if n in SWEEPABLE else "no",
            "description": load_suite(n).description,
            "file": str(packaged_suite(n)),
        }
        for n in SUITE_MODELS
    ]
    render(rows, fmt, title="reproduce suites")


@suites_app.command("export")
def suites_export(
    name: str,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="File or directory (default: NAME.toml).")
    ] = None,
) -> None:
    """Write a suite's packaged file for editing (run it with `reproduce NAME --config`)."""
    from npusched.experiments.suite_files import export_suite

    path = export_suite(name, out if out is not None else Path(f"{name}.toml"))
    typer.echo(f"{name} suite: {path} (edit it, then: npusched reproduce {name} --config {path})")


@suites_app.command("sweep-file")
def suites_sweep_file(
    suite: Annotated[str, typer.Argument(help="A suite name (its packaged file) or a suite file.")],
    out: Annotated[Path, typer.Option("--out", "-o", help="The experiment file (.yaml).")],
    quick: Annotated[bool, typer.Option(help="With the suite's [quick] parameters.")] = False,
) -> None:
    """Write a grid suite (prema, planaria, fluid) as an experiment file for `npusched sweep`."""
    from npusched.experiments.suite_files import SUITE_MODELS, load_suite, write_sweep_file

    if suite in SUITE_MODELS:
        params = load_suite(suite, quick=quick)
    else:
        params = load_suite(path=suite, quick=quick)
    path = write_sweep_file(params, out)
    typer.echo(f"{params.suite} suite as a sweep: {path} (run: npusched sweep {path} --out DIR)")


