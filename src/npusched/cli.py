"""The ``npusched`` command (thin: parses arguments, calls the library, prints).

Exit status: 0 ok, 1 internal error (a bug: one line naming the exception; ``--debug`` shows
the traceback), 2 bad input (one line ``npusched: error: FILE: field: what is wrong; allowed:
...``, checked before any work), 130 interrupted (Ctrl-C). Conventions (``docs/cli.md``):
``-h``/``--help`` everywhere, ``-f/--format table|json|csv`` on every command that prints a
table, ``-q``/``-v`` on every long command, ``--plugin FILE.py`` to load a user's policies and
networks, shell completion (``--install-completion``).
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from typer.core import TyperGroup

import npusched
from npusched.errors import ConfigError, NpuschedError

#: ``-h`` beside ``--help`` (click passes these settings on to every sub-command)
CONTEXT = {"help_option_names": ["-h", "--help"]}
EXIT_CODES = "Exit status: 0 ok, 1 internal error, 2 bad input, 130 interrupted."

app = typer.Typer(
    name="npusched",
    help="Simulate and schedule multi-tenant DNN inference on NPUs.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings=CONTEXT,
    rich_markup_mode="markdown",  # docstring paragraphs re-wrap instead of keeping line breaks
)
models_app = typer.Typer(
    help="List, show and import DNN models.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    context_settings=CONTEXT,
)


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
suites_app = typer.Typer(
    help="The reproduce suites' experiment files: list, export for editing, convert to sweeps.",
    no_args_is_help=True,
    context_settings=CONTEXT,
)
app.add_typer(suites_app, name="suites")


# Choices are ``Literal`` types: Typer turns them into a fixed set of values, shown in
# ``--help``, completed by the shell and checked before the command runs.
Format = Literal["table", "json", "csv"]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output: table, json or csv.")]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress bar or status lines on stderr.")
]
VerboseOpt = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Log details on stderr, and the elapsed time at the end."),
]
PluginOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--plugin",
        metavar="FILE.py",
        help="A Python file that registers policies, networks or devices (repeatable); see "
        "docs/api.md.",
    ),
]

#: what ``-q``/``-v`` asked for, read by :func:`main` when the command has returned
_STATE: dict[str, Any] = {"verbose": False, "t0": 0.0}


def _common(
    *, quiet: bool = False, verbose: bool = False, plugins: list[Path] | None = None
) -> bool:
    """Apply the shared options of a long command; returns whether to show progress."""
    if quiet and verbose:
        raise ConfigError("-q/--quiet and -v/--verbose: give at most one")
    if verbose:
        import logging

        logging.basicConfig(stream=sys.stderr, format="npusched: %(name)s: %(message)s")
        logging.getLogger("npusched").setLevel(logging.INFO)
        _STATE["verbose"] = True
    if plugins:
        from npusched.plugins import load_plugins

        load_plugins(plugins)
        if verbose:
            print(f"npusched: plugins loaded: {', '.join(map(str, plugins))}", file=sys.stderr)
    return not quiet
FigureFormatOpt = Annotated[
    Literal["png", "svg", "pdf"],
    typer.Option(
        "--figure-format",
        help="png, svg or pdf: figures also in this format (the report embeds SVGs).",
    ),
]


def _plain_help() -> None:
    """Help text as users type it: no ``<bool>`` after flags (``--quiet``, ``--help``: they take
    no value) and ``CONFIG`` rather than ``{config}`` for a required argument in usage lines.

    Typer >= 0.24 prints a type after every option and braces around required arguments; both
    are adjusted here on Typer's own parameter classes (skipped if a Typer version lacks them).
    """
    try:
        from typer.core import TyperArgument, TyperOption
    except ImportError:  # pragma: no cover - an older typer without these classes
        return
    show_type = getattr(TyperOption, "display_type_rich", None)
    if show_type is not None and not getattr(show_type, "_npusched", False):

        def display_type_rich(self: TyperOption, ctx: object) -> str | None:
            return None if self.is_flag else show_type(self, ctx)

        display_type_rich._npusched = True  # type: ignore[attr-defined]
        TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
    usage_name = getattr(TyperArgument, "_usage_display_name", None)
    if usage_name is not None and not getattr(usage_name, "_npusched", False):

        def _usage_display_name(self: TyperArgument) -> str:
            name = str(self.display_name_raw).upper()
            name = name if self.required else f"[{name}]"
            return name + ("..." if self.nargs != 1 else "")

        _usage_display_name._npusched = True  # type: ignore[attr-defined]
        TyperArgument._usage_display_name = _usage_display_name  # type: ignore[method-assign]


_plain_help()


def _version(value: bool) -> None:
    if value:
        typer.echo(f"npusched {npusched.__version__}")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    """npusched: multi-tenant NPU scheduling simulator."""


# --- models ------------------------------------------------------------------------------------
@models_app.command("list")
def models_list(fmt: FormatOpt = "table") -> None:
    """List the zoo networks with their layer count, MACs and parameters."""
    from npusched.models.zoo import get_network, list_networks
    from npusched.report.tables import render

    rows = [get_network(n).summary() for n in list_networks()]
    render(rows, fmt, title="npusched model zoo")


@models_app.command("show")
def models_show(name: str, fmt: FormatOpt = "table") -> None:
    """Print the layer table of zoo network NAME."""
    from npusched.hardware.summary import layer_rows
    from npusched.models.zoo import entry, get_network
    from npusched.report.tables import render

    net = get_network(name)
    desc = entry(name).description
    title = f"{net.name}: {net.macs:,} MACs, {net.params:,} params" + (f" ({desc})" if desc else "")
    render(layer_rows(net), fmt, title=title)


@models_app.command("import")
def models_import(
    file: Path,
    name: Annotated[str | None, typer.Option(help="Network name (default: file stem).")] = None,
    fmt: FormatOpt = "table",
) -> None:
    """Import a model and print its layer table: an ONNX file (``.onnx``) or a SCALE-Sim
    topology CSV (``.csv``: convolution or GEMM layout, SCALE-Sim's unpadded output sizes)."""
    from npusched.hardware.summary import layer_rows, load_network
    from npusched.report.tables import render

    net = load_network(file, name=name, zoo=False)
    symbolic = net.meta.get("symbolic_dims") if file.suffix.lower() != ".csv" else None
    if symbolic:
        # non-batch sizes are only right if these really are 1: say so instead of staying silent
        print(
            f"npusched: warning: {file}: symbolic dimensions taken as 1 (give them fixed sizes "
            f"in the model for exact layer sizes): {', '.join(map(str, symbolic))}",
            file=sys.stderr,
        )
    render(layer_rows(net), fmt, title=f"{net.name}: {net.macs:,} MACs, {net.params:,} params")


@models_app.command("export")
def models_export(
    name: str,
    out: Annotated[Path, typer.Option("--out", "-o", help="ONNX file to write.")],
    batch: Annotated[int, typer.Option("--batch", help="Batch size (input's first dim).")] = 1,
    input_size: Annotated[
        int | None, typer.Option("--input-size", help="Square input side in pixels.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random weights.")] = 0,
) -> None:
    """Export zoo network NAME as a runnable ONNX graph with seeded random weights (checked by
    onnx.checker and shape inference; ``models import`` reads it back with the same MACs and
    parameters)."""
    from npusched.models.onnx_export import export_onnx
    from npusched.models.zoo import get_network

    if batch < 1:
        raise ConfigError(f"--batch: {batch} is not a batch size; allowed: integers >= 1")
    if input_size is not None and input_size < 8:
        raise ConfigError(f"--input-size: {input_size} is too small; allowed: integers >= 8")
    path = export_onnx(get_network(name), out, batch=batch, input_size=input_size, seed=seed)
    print(f"wrote {path}")


# --- profile -----------------------------------------------------------------------------------
@models_app.command("exits")
def models_exits(
    name: str,
    n_exits: Annotated[int, typer.Option("--n-exits", help="Exits in total (>= 1).")] = 4,
    rates: Annotated[
        str | None,
        typer.Option(help="Exit rates, e.g. 5.1,16.9,9,69 (default: the paper's, if any)."),
    ] = None,
    device: Annotated[
        str | None, typer.Option(help="Also print the N_exits x B_max latency table (ms).")
    ] = None,
    b_max: Annotated[int, typer.Option("--b-max", help="Largest batch size.")] = 8,
    fmt: FormatOpt = "table",
) -> None:
    """Attach early exits to zoo network NAME (equidistant in FLOPs) and print them."""
    from npusched.hardware.summary import exit_rows
    from npusched.report.tables import render

    net, rows = exit_rows(name, n_exits, rates, device, b_max)
    render(rows, fmt, title=f"{net.name}: {len(net.exits)} exits")


@app.command("profile")
def profile_cmd(
    network: str,
    device: Annotated[
        str,
        typer.Option(
            help="Device: prema-npu (PREMA Table I), prema-npu-dfs, ab9, clocked, planaria, "
            "planaria-dfs, gemm-npu, zc706-npu, zcu104-npu, soc, or one a plugin registers "
            "(a wrong name lists every registered device)."
        ),
    ] = "prema-npu",
    batch: Annotated[list[int] | None, typer.Option(help="Batch size (repeatable).")] = None,
    fmt: FormatOpt = "table",
    layers: Annotated[bool, typer.Option("--layers/--no-layers", help="Per-layer rows.")] = True,
    subarrays: Annotated[
        int | None,
        typer.Option(help="Subarrays allocated (devices with a 'subarrays' axis: planaria 1-16)."),
    ] = None,
    compute_only: Annotated[
        bool,
        typer.Option(
            "--compute-only",
            help="Compute cycles only, as SCALE-Sim's COMPUTE_REPORT 'Total Cycles': the "
            "device's systolic array with no memory stalls and no accumulator limit, batch 1; "
            "JSON: {layers: [{name, compute_cycles}], total_compute_cycles}.",
        ),
    ] = False,
    plugin: PluginOpt = None,
) -> None:
    """Per-layer cycles and time of NETWORK on a device, and the total (isolated latency).

    NETWORK is a zoo name or a path to an ``.onnx`` file or a SCALE-Sim topology ``.csv``
    (imported as by ``models import``).
    Recurrent layers are listed once (one time step); totals unroll them at the network's
    default sequence lengths. JSON output is one object: device, totals and (with --layers)
    per-layer rows; CSV output is the per-layer rows (or the totals with --no-layers).
    """
    from npusched.hardware.summary import compute_only_summary, profile_summary
    from npusched.report.tables import render

    _common(plugins=plugin)
    if compute_only:
        co = compute_only_summary(network, device, batch)
        if fmt == "json":
            typer.echo(json.dumps(co.to_json(), indent=2))
        elif fmt == "csv":
            render(co.layers, fmt)
        else:
            title = f"{co.network}: compute cycles, {co.rows}x{co.cols} array"
            render(co.layers, fmt, title=title)
            total = [{"network": co.network, "total_compute_cycles": co.total_compute_cycles}]
            render(total, fmt, title="total")
        return
    ps = profile_summary(network, device, batch, subarrays=subarrays)
    if fmt == "json":
        typer.echo(json.dumps(ps.to_json(layers=layers), indent=2, default=float))
    elif fmt == "csv":
        render(ps.layers if layers else ps.totals, fmt)
    else:
        for b in ps.batches if layers else ():
            render(ps.layers_of(b), fmt, title=f"{ps.network} on {ps.device}, batch {b}")
        render(ps.totals, fmt, title="total (isolated latency)")


# --- run ---------------------------------------------------------------------------------------
@app.command("run")
def run_cmd(
    config: Path,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("out"),
    seed: Annotated[int | None, typer.Option(help="Override the config's seed.")] = None,
    quiet: QuietOpt = False,
    timeline: Annotated[
        bool,
        typer.Option(
            "--timeline",
            help="Also write timeline.json (open in ui.perfetto.dev), timeline.png, latency_cdf.png.",
        ),
    ] = False,
    fmt: FormatOpt = "table",
    verbose: VerboseOpt = False,
    plugin: PluginOpt = None,
) -> None:
    """Run one simulation from a TOML/YAML config; writes records.parquet and summary.json.
    Prints the main metrics (``--format json``: every metric of summary.json)."""
    from npusched.experiments.runner import run_config_file

    progress = _common(quiet=quiet, verbose=verbose, plugins=plugin)
    run_config_file(config, out, seed=seed, progress=progress, timeline=timeline, fmt=fmt)


# --- bench -------------------------------------------------------------------------------------
@app.command("bench")
def bench_cmd(
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="Scenario to run (repeatable): temporal, prema, spatial, concurrent. Default: all.",
        ),
    ] = None,
    requests: Annotated[
        int | None,
        typer.Option(
            help="Requests per scenario (default: temporal 100,000, prema 20,000, spatial 5,000, concurrent 20,000)."
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", hidden=True, help="Same as --format json (kept for scripts).")
    ] = False,
    fmt: FormatOpt = "table",
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    reference: Annotated[
        bool,
        typer.Option("--reference/--no-reference", help="Also run the reference models."),
    ] = True,
    seed: Annotated[int, typer.Option(help="Workload seed (>= 0).")] = 0,
    repeat: Annotated[
        int,
        typer.Option(
            help="Time the engine and each reference this many times, interleaved, and keep "
            "each one's fastest run (>= 1)."
        ),
    ] = 1,
) -> None:
    """Engine speed against SimPy and a bare event loop on the same system, and the targets.
    ``--format json`` prints the full result object; table and csv the summary rows."""
    from npusched.bench import bench_rows, run_bench

    progress = _common(quiet=quiet, verbose=verbose)
    if as_json:
        fmt = "json"
    if fmt == "json":
        result = run_bench(
            scenario, requests=requests, seed=seed, reference=reference, repeat=repeat
        )
        typer.echo(json.dumps(result, indent=2))
        return
    from npusched.bench import rich_reporter
    from npusched.report.tables import render

    with rich_reporter(progress and fmt == "table") as report:
        result = run_bench(
            scenario,
            requests=requests,
            seed=seed,
            reference=reference,
            report=report,
            repeat=repeat,
        )
    render(bench_rows(result), fmt, title="bench (targets: issue 9)")


@app.command("map")
def map_cmd(
    networks: Annotated[
        list[str] | None, typer.Argument(help="Two or three zoo networks (or --instance).")
    ] = None,
    soc: Annotated[
        Literal["orin", "xavier", "snapdragon-865"], typer.Option(help="The SoC.")
    ] = "orin",
    goal: Annotated[
        Literal["latency", "throughput"],
        typer.Option(help="latency (Eq. 11) or throughput (Eq. 10)."),
    ] = "latency",
    space: Annotated[
        Literal["restricted", "free"],
        typer.Option(help="restricted (--transitions per DNN) or free (CP-SAT)."),
    ] = "restricted",
    transitions: Annotated[int, typer.Option(help="Transitions per DNN (restricted).")] = 1,
    groups: Annotated[int, typer.Option(help="Layer groups per DNN (generated profiles).")] = 10,
    profile_csv: Annotated[
        Path | None, typer.Option(help="Measured profiles (CSV, see the README) instead.")
    ] = None,
    time_limit: Annotated[
        float | None,
        typer.Option(help="Solver seconds (free space: default 1; --instance: default 60)."),
    ] = None,
    instance: Annotated[
        Path | None, typer.Option(help="Solve one instance file (JSON, docs/papers/haxconn.md).")
    ] = None,
    semantics: Annotated[
        Literal["artifact", "paper"], typer.Option(help="With --instance: artifact or paper.")
    ] = "artifact",
    solver: Annotated[
        Literal["cpsat", "z3"], typer.Option(help="With --instance: cpsat or z3.")
    ] = "cpsat",
    fmt: FormatOpt = "table",
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """HaX-CoNN: the contention-aware layer-group schedule of DNNs on an SoC, with baselines."""
    from npusched.experiments.mapping import check_time_limit, map_instance, map_networks
    from npusched.report.tables import render

    _common(quiet=quiet, verbose=verbose)
    check_time_limit(time_limit)
    if instance is not None:
        if networks:
            raise ConfigError(
                "map: networks: given with --instance; allowed: networks or --instance, not both"
            )
        solved = map_instance(instance, semantics, solver, time_limit)
        if fmt == "json":
            typer.echo(json.dumps(solved.doc))
        else:
            render(solved.rows, fmt, title=solved.title)
        return
    m = map_networks(
        networks,
        soc=soc,
        goal=goal,
        space=space,
        transitions=transitions,
        groups=groups,
        profile_csv=profile_csv,
        time_limit=time_limit,
    )
    render(m.rows, fmt, title=m.title)
    if fmt == "table" and not quiet:
        for name, segs in m.segments:
            typer.echo(f"{name}: " + "; ".join(segs))


# --- reproduce ---------------------------------------------------------------------------------
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", help="An edited suite file (default: the packaged one; see --export)."
    ),
]
ExportOpt = Annotated[
    Path | None,
    typer.Option("--export", help="Write the packaged suite file here for editing, and exit."),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Set a suite-file parameter (repeatable; dotted inside a table, e.g. setup.load=1.2; "
        "the value is read as TOML).",
    ),
]


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
    if summary is None:
        return
    from npusched.report.tables import render

    rows = [
        {"quantity": key, "ours": val.get("ours"), "paper": val.get("paper")}
        for key, val in summary.get("headline", {}).items()
        if isinstance(val, dict)
    ]
    if rows:
        render(rows, "table", title="PREMA: our numbers vs the paper's")
    typer.echo(f"report: {Path(out) / 'report.md'} (tables, CSVs and plots in {out})")


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


# --- sweep, report, trace -----------------------------------------------------------------------
@app.command("sweep")
def sweep_cmd(
    file: Path,
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Sweep directory; a rerun resumes, skipping done points."),
    ] = Path("out/sweep"),
    backend: Annotated[
        Literal["inprocess", "process", "dask"],
        typer.Option(help="inprocess, process (default: a pool of all cores) or dask."),
    ] = "process",
    workers: Annotated[
        int | None, typer.Option(help="Worker processes (default: all cores).")
    ] = None,
    address: Annotated[
        str | None,
        typer.Option(help="Dask scheduler address (tcp://host:8786); else a local cluster."),
    ] = None,
    max_points: Annotated[
        int | None, typer.Option("--max-points", help="Run at most this many points.")
    ] = None,
    filters: Annotated[
        list[str] | None,
        typer.Option("--filter", help="AXIS=VALUE (repeatable; e.g. policy=P-PREMA, seed=0)."),
    ] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="List the selected points; run nothing.")
    ] = False,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    plugin: PluginOpt = None,
) -> None:
    """Run every point of an experiment file (a grid of run configs x seeds)."""
    from npusched.experiments.backends import check_backend_options
    from npusched.experiments.store import done_ids, run_sweep
    from npusched.experiments.sweep import load_experiment, parse_filters, select_points

    progress = _common(quiet=quiet, verbose=verbose, plugins=plugin)
    check_backend_options(backend, workers, address)
    exp = load_experiment(file)
    flt = parse_filters(filters or [], exp)
    if dry_run:
        from npusched.report.tables import render

        done = done_ids(out)
        pts = select_points(exp, flt, max_points)
        rows = [
            {
                "point": p.index,
                "id": p.point_id,
                **p.params,
                "seed": p.seed,
                "done": p.point_id in done,
            }
            for p in pts
        ]
        render(rows, "table", title=f"{exp.name}: {len(pts)} of {len(exp.points)} points")
        return
    res = run_sweep(
        exp,
        out,
        backend=backend,
        workers=workers,
        address=address,
        filters=flt,
        max_points=max_points,
        progress=progress,
        plugins=plugin or (),
    )
    rate = res.ran / res.wall_s if res.wall_s > 0 else float("nan")
    typer.echo(
        f"{exp.name}: {res.selected} points selected, {res.skipped} already done, ran {res.ran} "
        f"in {res.wall_s:.1f} s ({rate:.1f} points/s); results: {res.results}"
    )


@app.command("report")
def report_cmd(
    directory: Path,
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Report directory (default: DIRECTORY).")
    ] = None,
    figure_format: FigureFormatOpt = "png",
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
) -> None:
    """Write index.html (self-contained) and index.md: every reproduction's comparisons with
    the paper (flags and causes) and figures, and the tables and plots of every sweep below
    DIRECTORY, with the run's provenance."""
    from npusched.report.sweep_report import write_report

    show = _common(quiet=quiet, verbose=verbose)
    html, md = write_report(directory, out, figure_format=figure_format, progress=show)
    if show:
        typer.echo(f"report: {html} and {md}")


@app.command("schema")
def schema_cmd(
    name: Annotated[
        str,
        typer.Argument(help="run, experiment or suite-NAME (suite-prema, suite-planaria, ...)."),
    ] = "run",
    out: Annotated[
        Path | None, typer.Option("--out", "-o", help="Write to this file (default: stdout).")
    ] = None,
) -> None:
    """Print the JSON Schema of a run config, an experiment file or a suite file (from the
    pydantic models that validate them; editors use it to check and complete the files)."""
    from npusched.experiments.schema import json_schema

    text = json.dumps(json_schema(name), indent=2) + "\n"
    if out is None:
        typer.echo(text, nl=False)
        return
    from npusched._io import atomic_write_text

    atomic_write_text(out, text)
    typer.echo(f"schema: {out}")


@app.command("trace")
def trace_cmd(
    config: Path,
    out: Annotated[Path, typer.Option("--out", "-o", help="Trace file (JSON).")] = Path(
        "trace.json"
    ),
    seed: Annotated[int | None, typer.Option(help="Override the config's seed.")] = None,
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    plugin: PluginOpt = None,
) -> None:
    """Export one run's timeline as Chrome trace / Perfetto JSON (open in ui.perfetto.dev)."""
    from npusched.experiments.trace import trace_config_file

    show = _common(quiet=quiet, verbose=verbose, plugins=plugin)
    path, n = trace_config_file(config, out, seed=seed)
    if show:
        typer.echo(f"trace: {path} ({n:,} segments; open in https://ui.perfetto.dev)")


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


@app.command("compare")
def compare_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path(
        "out/compare"
    ),
    scenario: Annotated[
        Literal["A", "B", "C"], typer.Option(help="Planaria Table I workload.")
    ] = "C",
    qos: Annotated[Literal["S", "M", "H"], typer.Option(help="QoS level (Planaria Table I).")] = "S",
    load: Annotated[
        list[float] | None,
        typer.Option("--load", help="Offered load on the 128x128 array (repeatable; 0.25, 0.5)."),
    ] = None,
    instances: Annotated[int, typer.Option(help="Workload instances per load.")] = 3,
    requests: Annotated[int, typer.Option(help="Requests per instance.")] = 200,
    seed: Annotated[int, typer.Option(help="Base seed (>= 0).")] = 0,
    cap: Annotated[
        float, typer.Option("--cap", help="Power cap of PREMA+DFS and Planaria+DFS in W (30).")
    ] = 30.0,
    clock_levels: Annotated[
        list[float] | None,
        typer.Option(
            "--clock-levels",
            help="DFS clock levels in MHz (repeatable; must include 700; default Table 5's "
            "100-700 MHz).",
        ),
    ] = None,
    fmt: FormatOpt = "table",
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    plugin: PluginOpt = None,
) -> None:
    """NP-FCFS, PREMA, Planaria, and PREMA and Planaria under a DFS power cap, on the same
    workload and the same 128x128 MACs: ANTT, STP, fairness, SLA rate, p99, energy, peak and
    average power side by side."""
    from npusched.experiments.compare import compare
    from npusched.report.tables import render

    show = _common(quiet=quiet, verbose=verbose, plugins=plugin)
    means = compare(
        out,
        scenario=scenario,
        qos=qos,
        loads=tuple(load) if load else (0.25, 0.5),
        instances=instances,
        n_requests=requests,
        seed=seed,
        cap_w=cap,
        levels_hz=None if not clock_levels else tuple(x * 1e6 for x in clock_levels),
        progress=show,
    )
    rows = [{str(k): v for k, v in r.items()} for r in means.to_dict(orient="records")]
    render(rows, fmt, title="compare (means over instances)")
    if show and fmt == "table":
        typer.echo(f"report: {Path(out) / 'report.md'}")


def _print_headline(summary: dict[str, Any], title: str, out: Path) -> None:
    """Print a reproduction's ``headline`` (ours beside the paper's) and where the report is."""
    from npusched.report.tables import render

    rows = [
        {"quantity": key, "ours": val.get("ours"), "paper": val.get("paper")}
        for key, val in summary.get("headline", {}).items()
    ]
    render(rows, "table", title=title)
    typer.echo(f"report: {Path(out) / 'report.md'} (tables, CSVs and plots in {out})")


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


# --- validate ----------------------------------------------------------------------------------
@app.command("validate")
def validate_cmd(
    config: Path,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("validate"),
    quick: Annotated[bool, typer.Option("--quick", help="The config's [quick] sizes.")] = False,
    provider: Annotated[
        Literal["cpu", "cuda"] | None,
        typer.Option("--provider", help="ONNX Runtime provider (default: the config's)."),
    ] = None,
    fmt: FormatOpt = "table",
    quiet: QuietOpt = False,
    verbose: VerboseOpt = False,
    plugin: PluginOpt = None,
) -> None:
    """Schedule real ONNX Runtime inference under MLPerf LoadGen with registry policies, predict
    the same runs with the simulator, and score the predictions (summary.json, report.md,
    latency CDFs)."""
    from npusched.experiments.runner import check_out_dir
    from npusched.realexec.validate import load_config, run_validate

    show = _common(quiet=quiet, verbose=verbose, plugins=plugin)
    check_out_dir(out)
    cfg = load_config(config, quick=quick)
    summary = run_validate(cfg, out, progress=show, provider=provider)
    if fmt == "json":
        print(json.dumps(summary, indent=1, default=float))
        return
    from npusched.report.tables import render

    rows = [
        {
            "policy": p["policy"],
            "load": p["load"],
            "antt_meas": round(p["measured"]["antt"], 3),
            "antt_pred": round(p["predicted"]["antt"], 3),
            "p99_ms_meas": round(p["measured"]["p99_s"] * 1e3, 2),
            "p99_ms_pred": round(p["predicted"]["p99_s"] * 1e3, 2),
            "req_err_med_%": round(p["request_error"]["median_abs_pct"], 1),
            "req_err_p90_%": round(p["request_error"]["p90_abs_pct"], 1),
        }
        for p in summary["points"]
    ]
    render(rows, fmt, title=f"validate: {config} -> {out}")
    if fmt == "table":
        taus = ", ".join(f"{k} {v:.2f}" for k, v in summary["rank_agreement"].items())
        print(f"rank agreement (Kendall tau): {taus}")


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the exit status."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    if debug:  # accepted anywhere (``npusched run x.toml --debug``), not only before the command
        args = ["--debug", *(a for a in args if a != "--debug")]
    # an empty --out would become Path("") == "." (the current directory): refuse it here,
    # before the argument parser turns it into a path
    for i, a in enumerate(args):
        if a == "--out=" or (a in ("--out", "-o") and i + 1 < len(args) and not args[i + 1]):
            print("npusched: error: --out: empty path; name an output directory", file=sys.stderr)
            return 2
    _STATE.update(verbose=False, t0=time.perf_counter())
    try:
        rv = app(args=args, prog_name="npusched", standalone_mode=False)
        # typer turns Ctrl-C into an exit code it *returns* here (commands return None)
        if isinstance(rv, int) and not isinstance(rv, bool) and rv != 0:
            if rv == 130:
                print("npusched: error: interrupted", file=sys.stderr)
            return rv
    except typer.Exit as e:
        return int(getattr(e, "exit_code", 0) or 0)
    except typer.Abort:
        print("npusched: error: aborted", file=sys.stderr)
        return 130
    except NpuschedError as e:
        if debug:
            raise
        print(f"npusched: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("npusched: error: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        # a path that cannot be read or written (a file where a directory belongs, a full
        # disk): the environment or the input, not a bug; one line, naming the path if known
        if debug:
            raise
        where = f"{e.filename}: " if e.filename is not None else ""
        print(f"npusched: error: {where}{e.strerror or e}", file=sys.stderr)
        return 2
    except Exception as e:
        if debug:
            raise
        if hasattr(e, "format_message") and hasattr(e, "exit_code"):
            # A usage error from the argument parser (typer/click): one line, no traceback.
            msg = _choice_message(e) or e.format_message()
            if type(e).__name__ == "NoArgsIsHelpError":
                print(msg, file=sys.stderr)
                return 2
            first = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
            ctx = getattr(e, "ctx", None)
            if first.startswith("No such command") and hasattr(ctx, "command"):
                try:
                    names = ctx.command.list_commands(ctx)  # type: ignore[union-attr]
                except Exception:  # pragma: no cover - not a group
                    names = []
                if names:
                    first = f"{first.rstrip('.')}; allowed: {', '.join(names)}"
            print(f"npusched: error: {first}", file=sys.stderr)
            return 2
        return _internal(e)
    if _STATE["verbose"]:
        print(f"npusched: done in {time.perf_counter() - _STATE['t0']:.1f} s", file=sys.stderr)
    return 0


def _internal(e: BaseException) -> int:
    """An internal error (a bug, not bad input): one line, exit status 1; the traceback is
    behind ``--debug``."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    print(f"npusched: error: {type(e).__name__}: {text} (rerun with --debug)", file=sys.stderr)
    return 1


def _choice_message(e: Exception) -> str | None:
    """``--scenario 'Z'; allowed: A, B, C`` for a value outside an option's choices (the
    parser's own words otherwise: ``None``)."""
    import re

    param = getattr(e, "param", None)
    m = re.search(r"'(.*)' is not one of (.*?)\.?$", str(getattr(e, "message", "")))
    if param is None or m is None:
        return None
    name = max(getattr(param, "opts", None) or [str(getattr(param, "name", ""))], key=len)
    allowed = ", ".join(x.strip().strip("'") for x in m.group(2).split(","))
    return f"{name} {m.group(1)!r}; allowed: {allowed}"


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
