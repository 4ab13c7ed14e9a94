"""``npusched reproduce NAME`` (one command over the registered studies, its options derived from
the study's suite model; the papers' commands are this command with their old option names as
aliases), ``npusched reproduce all`` and ``npusched suites``."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Annotated, Any

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
    them, then ``all``) instead of the order their functions appear in this file, and makes
    every registered study (``SUITES``) a sub-command (:func:`_study_command`)."""

    ORDER = ("prema", "planaria", "fluid", "haxconn", "dfs", "all")

    def list_commands(self, ctx: Any) -> list[str]:
        from npusched.experiments.reproduce.suites import SUITES

        names = sorted(set(super().list_commands(ctx)) | set(SUITES.names()))
        rank = {n: i for i, n in enumerate(self.ORDER)}
        return sorted(names, key=lambda n: (rank.get(n, len(rank)), n))

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """A named sub-command (``all``), else ``reproduce NAME`` for a registered study."""
        found = super().get_command(ctx, cmd_name)
        if found is not None:
            return found
        from npusched.experiments.reproduce.suites import SUITES

        if cmd_name not in SUITES:
            return None
        return _study_command(cmd_name)


#: per study: the command's help and ``--quick``'s (else the suite file's description)
HELP: dict[str, tuple[str, str]] = {
    "prema": (
        "PREMA (HPCA 2020) Sec. VI: Fig. 5/6, 11-15 and the predictor study.",
        "Fewer runs (under a minute).",
    ),
    "planaria": (
        "Planaria (MICRO 2020) Sec. VI: Fig. 17 (isolated speedup and energy) and, with "
        "--multi-tenant, Fig. 12-16 against PREMA.",
        "Fewer workload instances.",
    ),
    "fluid": (
        "Fluid Batching (Kouris et al.): DSE vs Table I, Fig. 10, Fig. 7-9, Table II.",
        "Two (model, board) pairs, coarser DSE, 1 seed x 1500 samples (~2 min).",
    ),
    "haxconn": (
        "HaX-CoNN (PPoPP'24) Sec. 5: Table 6, Table 8, Fig. 5, Fig. 7 and a CP-SAT vs Z3 "
        "benchmark.",
        "Short solver limits, fewer pairs.",
    ),
    "dfs": (
        "Layer-wise DFS vs DVFS under a power limit (ETRI J. 2022): Fig. 4-6, Table 6.",
        "The stored fit and no sensitivity grid (all eight networks).",
    ),
}
#: option names kept from before the options were derived from the models: study -> key ->
#: further names of that key's option (a derived name they take is left to --set)
ALIASES: dict[str, dict[str, tuple[str, ...]]] = {
    "planaria": {"benchmarks": ("--networks",)},
    "haxconn": {"parts": ("--only",), "experiments": ("--experiment",)},
}
#: the options every study command has (a parameter deriving one of these is left to --set)
SHARED = ("--out", "--quick", "--set", "--config", "--export", "--quiet", "--verbose", "--help")


def _headline_title(name: str) -> str:
    titles = {"prema": "PREMA", "dfs": "DFS vs DVFS", "planaria": "Planaria"}
    return f"{titles.get(name, name)}: our numbers vs the paper's"


def _short(text: str, width: int = 72) -> str:
    """A long default cut at an item boundary, its closing bracket kept (``[a, b, ...]``)."""
    if len(text) <= width:
        return text
    cut = text[: width - 5].rsplit(", ", 1)[0]
    return cut + ", ..." + (text[-1] if text[-1] in "]}" else "")


def _study_options(
    name: str,
) -> tuple[list[inspect.Parameter], list[Any], list[str], dict[str, tuple[str, str]]]:
    """The derived options of study ``name``: the signature parameters (``p_<key>``, and
    ``a<i>_<key>`` for the names kept in :data:`ALIASES`), the parameters they come from, the
    keys left to ``--set`` (their option name is taken) and alias parameter -> (key, name)."""
    from npusched.experiments.studies.params import FLAG, MULTI, study_params

    aliases = ALIASES.get(name, {})
    taken = set(SHARED) | {n for names in aliases.values() for n in names}
    kw = inspect.Parameter.KEYWORD_ONLY
    sig: list[inspect.Parameter] = []
    used: list[Any] = []
    shadowed: list[str] = []
    alias_of: dict[str, tuple[str, str]] = {}
    for p in study_params(name):
        if p.option in taken:
            shadowed.append(p.key)
            continue
        default = f"default {_short(p.default)}" if p.default else "no default"
        desc = p.description[:1].upper() + p.description[1:]
        text = f"{desc} ({p.type}; {default})".strip()
        names = [p.option, *aliases.get(p.key, ())]
        for i, opt_name in enumerate(names):
            if i:
                text = f"The same as {p.option}."
            if p.kind == FLAG:
                opt = typer.Option(f"{opt_name}/--no-{opt_name[2:]}", help=text)
                ann: Any = Annotated[bool | None, opt]
            elif p.kind == MULTI:
                more = "" if i else " Repeatable."
                opt = typer.Option(opt_name, help=text + more, metavar="VALUE")
                ann = Annotated[list[str] | None, opt]
            else:
                opt = typer.Option(opt_name, help=text, metavar="VALUE")
                ann = Annotated[str | None, opt]
            pname = f"a{i}_{p.key}" if i else f"p_{p.key}"
            sig.append(inspect.Parameter(pname, kw, default=None, annotation=ann))
            if i:
                alias_of[pname] = (p.key, opt_name)
        used.append(p)
    return sig, used, shadowed, alias_of


def _study_command(name: str) -> Any:
    """``npusched reproduce NAME``: the shared options (``--out``, ``--quick``, ``--set``, ``-q``,
    ``-v``; ``--config`` and ``--export`` for a study with a suite file) and one option per
    parameter of the study's model (:func:`npusched.experiments.studies.params.study_params`),
    whose values reach the suite as ``--set`` would."""
    from npusched.experiments.suite_files import SUITE_MODELS

    has_file = name in SUITE_MODELS
    sig, used, shadowed, alias_of = _study_options(name) if has_file else ([], [], [], {})
    help_text, quick_help = HELP.get(name, (f"Run the registered study {name!r}.", ""))
    kw = inspect.Parameter.KEYWORD_ONLY
    out_opt = typer.Option("--out", "-o", help="Output directory; a rerun resumes where it can.")
    quick_opt = typer.Option("--quick", help=quick_help or "The study's quick run.")
    head = [
        inspect.Parameter("out", kw, default=Path(f"out/{name}"), annotation=Annotated[Path, out_opt]),
        inspect.Parameter("quick", kw, default=False, annotation=Annotated[bool, quick_opt]),
    ]
    tail = [inspect.Parameter("sets", kw, default=None, annotation=SetOpt)]
    if has_file:
        tail += [
            inspect.Parameter("config", kw, default=None, annotation=ConfigOpt),
            inspect.Parameter("export", kw, default=None, annotation=ExportOpt),
        ]
    tail += [
        inspect.Parameter("quiet", kw, default=False, annotation=QuietOpt),
        inspect.Parameter("verbose", kw, default=False, annotation=VerboseOpt),
    ]

    def command(**kwargs: Any) -> None:
        from npusched.experiments.reproduce.suites import run_study
        from npusched.experiments.studies.params import option_overrides

        progress = _common(quiet=kwargs["quiet"], verbose=kwargs["verbose"])
        given = {p.key: kwargs[f"p_{p.key}"] for p in used}
        names: dict[str, str] = {}
        for pname, (key, opt_name) in alias_of.items():
            if kwargs[pname] is None or kwargs[pname] == []:
                continue
            if given[key] is not None and given[key] != []:
                raise ConfigError(
                    f"--{key.replace('_', '-')} and {opt_name}: the same parameter; give one"
                )
            given[key], names[key] = kwargs[pname], opt_name
        options = option_overrides(used, given, names)
        if kwargs.get("export") is not None:
            from npusched.experiments.suite_files import export_suite, set_overrides

            set_overrides(kwargs["sets"])  # a malformed --set fails here too
            path = export_suite(name, kwargs["export"])
            typer.echo(
                f"{name} suite: {path} (edit it, then: npusched reproduce {name} --config {path})"
            )
            return
        out = kwargs["out"]
        summary = run_study(
            name,
            out,
            quick=kwargs["quick"],
            sets=kwargs["sets"],
            options=options,
            config=kwargs.get("config"),
            progress=progress,
        )
        RENDER.get(name, _render_headline(name))(summary, out)

    params = head + sig + tail
    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in params}
    epilog = (
        "Every parameter is also --set KEY=VALUE (its suite-file key, e.g. "
        f"{used[0].key if used else 'key'}=...)."
        if has_file
        else ""
    )
    if shadowed:
        epilog += " Only as --set: " + ", ".join(shadowed) + " (the option name is taken)."
    one = typer.Typer(
        context_settings=CONTEXT, rich_markup_mode="markdown", add_completion=False
    )
    one.command(name, help=help_text, epilog=epilog or None)(command)
    return typer.main.get_command(one)


def _render_headline(name: str) -> Any:
    def render(summary: dict[str, Any], out: Path) -> None:
        _print_headline(summary, _headline_title(name), out)

    return render


def _render_haxconn(summary: dict[str, Any], out: Path) -> None:
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


def _render_fluid(summary: dict[str, Any], out: Path) -> None:
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


#: how a study's command prints its result (default: the headline beside the paper's)
RENDER: dict[str, Any] = {"haxconn": _render_haxconn, "fluid": _render_fluid}


reproduce_app = typer.Typer(
    cls=_InOrder,
    help="Reproduce a paper's evaluation: `npusched reproduce NAME [--set KEY=VALUE ...] "
    "[--quick]` for every registered study (its parameters are options too), or `all`.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    context_settings=CONTEXT,
)
app.add_typer(models_app, name="models")
app.add_typer(reproduce_app, name="reproduce")
suites_app = typer.Typer(
    help="The reproduce suites' experiment files: list, export for editing, convert to sweeps.",
    no_args_is_help=True,
    context_settings=CONTEXT,
)
app.add_typer(suites_app, name="suites")


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


