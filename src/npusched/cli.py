"""The ``npusched`` command (thin: parses arguments, calls the library, prints).

Errors print one line ``npusched: error: ...`` on stderr and exit with status 2; ``--debug`` shows
the traceback instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from npusched import __version__
from npusched.errors import ConfigError, NpuschedError

app = typer.Typer(
    name="npusched",
    help="Simulate and schedule multi-tenant DNN inference on NPUs.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    rich_markup_mode="markdown",  # docstring paragraphs re-wrap instead of keeping line breaks
)
models_app = typer.Typer(
    help="List, show and import DNN models.", no_args_is_help=True, rich_markup_mode="markdown"
)
reproduce_app = typer.Typer(
    help="Reproduce a paper's evaluation.", no_args_is_help=True, rich_markup_mode="markdown"
)
app.add_typer(models_app, name="models")
app.add_typer(reproduce_app, name="reproduce")
suites_app = typer.Typer(
    help="The reproduce suites' experiment files: list, export for editing, convert to sweeps.",
    no_args_is_help=True,
)
app.add_typer(suites_app, name="suites")

FormatOpt = Annotated[str, typer.Option("--format", "-f", help="table, json or csv.")]


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
        typer.echo(f"npusched {__version__}")
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


def _layer_rows(net: object) -> list[dict[str, object]]:
    from npusched.models.ir import Network

    assert isinstance(net, Network)
    return [
        {
            "idx": i,
            "name": ly.name,
            "kind": str(ly.kind),
            "M": ly.m,
            "K": ly.k,
            "N": ly.n,
            "groups": ly.groups,
            "macs": ly.macs,
            "in_elems": ly.input_elems,
            "out_elems": ly.output_elems,
            "weights": ly.weight_elems,
            "repeat": ly.repeat or "",
        }
        for i, ly in enumerate(net.layers)
    ]


@models_app.command("show")
def models_show(name: str, fmt: FormatOpt = "table") -> None:
    """Print the layer table of zoo network NAME."""
    from npusched.models.zoo import entry, get_network
    from npusched.report.tables import render

    net = get_network(name)
    desc = entry(name).description
    title = f"{net.name}: {net.macs:,} MACs, {net.params:,} params" + (f" ({desc})" if desc else "")
    render(_layer_rows(net), fmt, title=title)


@models_app.command("import")
def models_import(
    file: Path,
    name: Annotated[str | None, typer.Option(help="Network name (default: file stem).")] = None,
    fmt: FormatOpt = "table",
) -> None:
    """Import a model and print its layer table: an ONNX file (``.onnx``) or a SCALE-Sim
    topology CSV (``.csv``: convolution or GEMM layout, SCALE-Sim's unpadded output sizes)."""
    from npusched.report.tables import render

    if file.suffix.lower() == ".csv":
        from npusched.models.scalesim import from_scalesim

        net = from_scalesim(file, name=name)
        render(_layer_rows(net), fmt, title=f"{net.name}: {net.macs:,} MACs, {net.params:,} params")
        return
    from npusched.models import from_onnx

    net = from_onnx(str(file), name=name)
    symbolic = net.meta.get("symbolic_dims")
    if symbolic:
        # non-batch sizes are only right if these really are 1: say so instead of staying silent
        print(
            f"npusched: warning: {file}: symbolic dimensions taken as 1 (give them fixed sizes "
            f"in the model for exact layer sizes): {', '.join(map(str, symbolic))}",
            file=sys.stderr,
        )
    render(_layer_rows(net), fmt, title=f"{net.name}: {net.macs:,} MACs, {net.params:,} params")


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
    import numpy as np

    from npusched.models.exits import early_exit_network
    from npusched.report.tables import render

    net = early_exit_network(name, rates, n_exits)
    cum = np.cumsum(net.columns["macs"]) / max(net.macs, 1)
    lut = None
    if device is not None:
        from npusched.hardware import get_device

        dev = get_device(device)
        exit_lut = getattr(dev, "exit_lut", None)
        if exit_lut is None:
            from npusched.errors import ConfigError

            raise ConfigError(f"device {device!r} has no exit latency table (try zc706-npu)")
        lut = exit_lut(net, b_max)
    rows: list[dict[str, object]] = []
    for i, ex in enumerate(net.exits):
        row: dict[str, object] = {
            "exit": ex.name,
            "after": net.layers[ex.after].name,
            "flops_frac": round(float(cum[ex.after]), 3),
            "rate": ex.rate,
            "head_macs": sum(x.macs for x in ex.layers),
        }
        if lut is not None:
            row.update(
                {f"B={b}": round(float(lut[i, b - 1]) * 1e3, 2) for b in range(1, b_max + 1)}
            )
        rows.append(row)
    render(rows, fmt, title=f"{net.name}: {len(net.exits)} exits")


@app.command("profile")
def profile_cmd(
    network: str,
    device: Annotated[
        str,
        typer.Option(
            help="Device name: prema-npu (PREMA Table I) or one a plugin registers; a wrong "
            "name lists every registered device."
        ),
    ] = "prema-npu",
    batch: Annotated[list[int] | None, typer.Option(help="Batch size (repeatable).")] = None,
    fmt: FormatOpt = "table",
    layers: Annotated[bool, typer.Option("--layers/--no-layers", help="Per-layer rows.")] = True,
    subarrays: Annotated[
        int | None,
        typer.Option(help="Subarrays allocated (devices with a 'subarrays' axis: planaria 1-16)."),
    ] = None,
) -> None:
    """Per-layer cycles and time of NETWORK on a device, and the total (isolated latency).

    NETWORK is a zoo name or a path to an ``.onnx`` file or a SCALE-Sim topology ``.csv``
    (imported as by ``models import``).
    Recurrent layers are listed once (one time step); totals unroll them at the network's
    default sequence lengths. JSON output is one object: device, totals and (with --layers)
    per-layer rows; CSV output is the per-layer rows (or the totals with --no-layers).
    """
    from npusched.hardware import get_device
    from npusched.hardware.profile import compile_profile
    from npusched.models.zoo import get_network
    from npusched.report.tables import render

    bad = [b for b in batch or [] if b < 1]
    if bad:
        raise ConfigError(f"--batch must be an integer >= 1, got {bad[0]}")
    batches = sorted(set(batch or [1]))
    if network.lower().endswith(".onnx"):
        from npusched.models import from_onnx

        net = from_onnx(network)
    elif network.lower().endswith(".csv"):
        from npusched.models.scalesim import from_scalesim

        net = from_scalesim(network)
    else:
        net = get_network(network)
    dev = get_device(device)
    axes = getattr(dev, "variant_axes", {})
    if subarrays is None and "subarrays" in axes:
        subarrays = max(axes["subarrays"])  # the whole array unless asked otherwise
    if subarrays is not None:
        if "subarrays" not in axes:
            raise ConfigError(f"--subarrays: device {device!r} has no subarrays axis")
        if subarrays not in axes["subarrays"]:
            allowed = axes["subarrays"]
            raise ConfigError(
                f"--subarrays must be in {allowed[0]}..{allowed[-1]} for {device!r}, "
                f"got {subarrays}"
            )
        dev = dev.variant(subarrays=subarrays)  # type: ignore[attr-defined]
    prof = compile_profile(net, dev, batches)
    peak = getattr(dev, "peak_macs_per_s", None)

    layer_rows: list[dict[str, object]] = []
    totals: list[dict[str, object]] = []
    for b in batches:
        r = prof.row(b)
        plan = prof.plan(b)
        busy_s = plan.total_s
        total: dict[str, object] = {
            "network": net.name,
            "device": dev.name,
            "batch": b,
            "cycles": int(prof.cycles[r, plan.layer].sum()),
            "isolated_ms": round(busy_s * 1e3, 4),
            "tiles": int(plan.tiles.sum()),
            "mbytes_moved": round(float(prof.bytes_moved[r, plan.layer].sum()) / 1e6, 3),
            "energy_mj": round(prof.energy(b) * 1e3, 4),
        }
        if isinstance(peak, float) and busy_s > 0:
            macs = net.total_macs() * b
            total["util_pct"] = round(100.0 * macs / (peak * busy_s), 2)
        totals.append(total)
        layer_rows.extend(
            {
                "batch": b,
                "idx": i,
                "layer": ly.name,
                "kind": str(ly.kind),
                "cycles": int(prof.cycles[r, i]),
                "time_us": round(float(prof.latency_s[r, i]) * 1e6, 3),
                "tiles": int(prof.tiles[r, i]),
                "bytes_moved": int(prof.bytes_moved[r, i]),
                "ckpt_bytes": int(prof.checkpoint_bytes[r, i]),
            }
            for i, ly in enumerate(net.layers)
        )

    if fmt == "json":
        doc: dict[str, object] = {
            "network": net.name,
            "device": dev.name,
            "device_params": getattr(dev, "get_params", dict)(),
            "totals": totals,
        }
        if layers:
            doc["layers"] = layer_rows
        typer.echo(json.dumps(doc, indent=2, default=float))
        return
    if fmt == "csv":
        render(layer_rows if layers else totals, fmt)
        return
    if layers:
        for b in batches:
            rows = [
                {k: v for k, v in row.items() if k != "batch"}
                for row in layer_rows
                if row["batch"] == b
            ]
            render(rows, fmt, title=f"{net.name} on {dev.name}, batch {b}")
    render(totals, fmt, title="total (isolated latency)")


# --- run ---------------------------------------------------------------------------------------
@app.command("run")
def run_cmd(
    config: Path,
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path("out"),
    seed: Annotated[int | None, typer.Option(help="Override the config's seed.")] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
    timeline: Annotated[
        bool,
        typer.Option(
            "--timeline",
            help="Also write timeline.json (open in ui.perfetto.dev), timeline.png, latency_cdf.png.",
        ),
    ] = False,
) -> None:
    """Run one simulation from a TOML/YAML config; writes records.parquet and summary.json."""
    from npusched.experiments.runner import run_config_file

    run_config_file(config, out, seed=seed, progress=not quiet, timeline=timeline)


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
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
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
    """Engine speed against SimPy and a bare event loop on the same system, and the targets."""
    from npusched.bench import bench_rows, run_bench

    if as_json:
        result = run_bench(
            scenario, requests=requests, seed=seed, reference=reference, repeat=repeat
        )
        typer.echo(json.dumps(result, indent=2))
        return
    from npusched.bench import rich_reporter
    from npusched.report.tables import render

    with rich_reporter() as report:
        result = run_bench(
            scenario,
            requests=requests,
            seed=seed,
            reference=reference,
            report=report,
            repeat=repeat,
        )
    render(bench_rows(result), "table", title="bench (targets: issue 9)")


@app.command("map")
def map_cmd(
    networks: Annotated[list[str], typer.Argument(help="Two or three zoo networks.")],
    soc: Annotated[str, typer.Option(help="orin, xavier or snapdragon-865.")] = "orin",
    goal: Annotated[str, typer.Option(help="latency (Eq. 11) or throughput (Eq. 10).")] = "latency",
    space: Annotated[str, typer.Option(help="restricted or free.")] = "restricted",
    transitions: Annotated[int, typer.Option(help="Transitions per DNN (restricted).")] = 1,
    groups: Annotated[int, typer.Option(help="Layer groups per DNN (generated profiles).")] = 10,
    profile_csv: Annotated[
        Path | None, typer.Option(help="Measured profiles (CSV, see the README) instead.")
    ] = None,
    time_limit: Annotated[float, typer.Option(help="CP-SAT seconds (free space).")] = 1.0,
    fmt: FormatOpt = "table",
) -> None:
    """HaX-CoNN: the contention-aware layer-group schedule of DNNs on an SoC, with baselines."""
    from npusched.hardware.soc import generate_profile, get_soc, load_profile_csv
    from npusched.models.zoo import get_network
    from npusched.policies.mapping import Task, Workload
    from npusched.policies.mapping.haxconn import haxconn
    from npusched.report.tables import render

    spec = get_soc(soc)
    measured = load_profile_csv(profile_csv, spec) if profile_csv is not None else {}
    tasks = []
    for n in networks:
        if profile_csv is not None:
            if n not in measured:
                raise ConfigError(
                    f"{profile_csv}: no rows for network {n!r}; networks: {', '.join(sorted(measured))}"
                )
            tasks.append(Task(n, measured[n]))
        else:
            tasks.append(Task(n, generate_profile(get_network(n), spec, n_groups=groups)))
    h = haxconn(
        Workload(spec, tuple(tasks)),
        goal,
        space=space,
        max_transitions=transitions,
        time_limit_s=time_limit,
    )
    accs = spec.accelerators
    rows: list[dict[str, object]] = [
        {
            "method": m,
            "predicted_ms": round(r.predicted.makespan_s * 1e3, 3),
            "realised_ms": round(r.realised.makespan_s * 1e3, 3),
            "fps": round(r.realised.fps, 1),
            "transitions": str(r.schedule.transitions()),
        }
        for m, r in h.baselines.items()
    ]
    rows.append(
        {
            "method": f"HaX-CoNN ({h.source}{', proven' if h.proven else ''})",
            "predicted_ms": round(
                (h.predicted_objective if goal == "latency" else h.realised.makespan_s) * 1e3, 3
            ),
            "realised_ms": round(h.realised.makespan_s * 1e3, 3),
            "fps": round(h.realised.fps, 1),
            "transitions": str(h.schedule.transitions()),
        }
    )
    render(rows, fmt, title=f"HaX-CoNN on {spec.name}: {' + '.join(networks)} ({goal})")
    if fmt == "table":
        for t, row in zip(tasks, h.schedule.assignment, strict=True):
            segs, start = [], 0
            for g in range(1, len(row) + 1):
                if g == len(row) or row[g] != row[start]:
                    segs.append(f"groups {start}-{g - 1} on {accs[row[start]]}")
                    start = g
            typer.echo(f"{t.name}: " + "; ".join(segs))


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


def _run_suite(
    name: str,
    out: Path,
    quick: bool,
    config: Path | None,
    export: Path | None,
    **options: tuple[str, Any],
) -> dict[str, Any] | None:
    """Export the packaged suite file (``--export``; returns ``None``) or run the suite with its
    packaged or ``--config`` parameters and the command-line ``options`` given (field ->
    ``(option, value)``, ``None`` values left to the file)."""
    from npusched.experiments.suite_files import export_suite, run_suite

    if export is not None:
        path = export_suite(name, export)
        typer.echo(f"{name} suite: {path} (edit it, then: npusched reproduce {name} --config {path})")
        return None
    given = {k: v for k, v in options.items() if v[1] is not None}
    return run_suite(name, out, config=config, quick=quick, progress=True, overrides=given)


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
    config: ConfigOpt = None,
    export: ExportOpt = None,
) -> None:
    """PREMA (HPCA 2020) Sec. VI: Fig. 5/6, 11-15 and the predictor study."""
    summary = _run_suite(
        "prema",
        out,
        quick,
        config,
        export,
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
    config: ConfigOpt = None,
    export: ExportOpt = None,
) -> None:
    """HaX-CoNN (PPoPP'24) Sec. 5: Table 6, Table 8, Fig. 5, Fig. 7 and a CP-SAT vs Z3 benchmark."""
    summary = _run_suite(
        "haxconn",
        out,
        quick,
        config,
        export,
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
    config: ConfigOpt = None,
    export: ExportOpt = None,
) -> None:
    """Layer-wise DFS vs DVFS under a power limit (ETRI J. 2022): Fig. 4-6, Table 6."""
    summary = _run_suite(
        "dfs",
        out,
        quick,
        config,
        export,
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
    config: ConfigOpt = None,
    export: ExportOpt = None,
) -> None:
    """Planaria (MICRO 2020) Sec. VI: Fig. 17 (isolated speedup and energy) and, with
    --multi-tenant, Fig. 12-15 against PREMA."""
    summary = _run_suite(
        "planaria", out, quick, config, export, multi_tenant=("--multi-tenant", multi_tenant)
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
        str, typer.Option(help="inprocess, process (default: a pool of all cores) or dask.")
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
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress bar.")] = False,
) -> None:
    """Run every point of an experiment file (a grid of run configs x seeds)."""
    from npusched.experiments.store import done_ids, run_sweep
    from npusched.experiments.sweep import load_experiment, parse_filters, select_points

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
        progress=not quiet,
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
) -> None:
    """Write index.html (self-contained) and index.md: tables and plots of every sweep and the
    headline numbers of every reproduction below DIRECTORY."""
    from npusched.report.sweep_report import write_report

    html, md = write_report(directory, out)
    typer.echo(f"report: {html} and {md}")


@app.command("trace")
def trace_cmd(
    config: Path,
    out: Annotated[Path, typer.Option("--out", "-o", help="Trace file (JSON).")] = Path(
        "trace.json"
    ),
    seed: Annotated[int | None, typer.Option(help="Override the config's seed.")] = None,
) -> None:
    """Export one run's timeline as Chrome trace / Perfetto JSON (open in ui.perfetto.dev)."""
    from npusched.report.trace import trace_config_file

    path, n = trace_config_file(config, out, seed=seed)
    typer.echo(f"trace: {path} ({n} segments; open in https://ui.perfetto.dev)")


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
) -> None:
    """Every reproduction suite and packaged sweep, then one report (index.html, index.md)."""
    from npusched.experiments.reproduce.suites import reproduce_all

    html, md = reproduce_all(
        out,
        quick=quick,
        only=only,
        sweeps=sweeps,
        compare=compare,
        echo=typer.echo,
        configs=config or (),
    )
    typer.echo(f"report: {html} and {md}")


@app.command("compare")
def compare_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path(
        "out/compare"
    ),
    scenario: Annotated[str, typer.Option(help="Planaria Table I workload: A, B or C.")] = "C",
    qos: Annotated[str, typer.Option(help="QoS level: S, M or H (Planaria Table I).")] = "S",
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
) -> None:
    """NP-FCFS, PREMA, Planaria, and PREMA and Planaria under a DFS power cap, on the same
    workload and the same 128x128 MACs: ANTT, STP, fairness, SLA rate, p99, energy, peak and
    average power side by side."""
    from npusched.experiments.compare import compare
    from npusched.report.tables import render

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
    )
    rows = [{str(k): v for k, v in r.items()} for r in means.to_dict(orient="records")]
    render(rows, "table", title="compare (means over instances)")
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
        str | None,
        typer.Option(
            help="NPU per serving policy: dse (default: its own DSE at B = 8) or table1."
        ),
    ] = None,
    config: ConfigOpt = None,
    export: ExportOpt = None,
) -> None:
    """Fluid Batching (Kouris et al.): DSE vs Table I, Fig. 10, Fig. 7-9, Table II."""
    summary = _run_suite(
        "fluid",
        out,
        quick,
        config,
        export,
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
def suites_list() -> None:
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
    render(rows, "table", title="reproduce suites")


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
    except Exception as e:
        if debug:
            raise
        if hasattr(e, "format_message") and hasattr(e, "exit_code"):
            # A usage error from the argument parser (typer/click): one line, no traceback.
            msg = e.format_message()
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
        # Last resort: still one line; the traceback is behind --debug.
        text = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print(f"npusched: error: {type(e).__name__}: {text} (rerun with --debug)", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
