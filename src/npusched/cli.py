"""The ``npusched`` command (thin: parses arguments, calls the library, prints).

Errors print one line ``npusched: error: ...`` on stderr and exit with status 2; ``--debug`` shows
the traceback instead.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

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

FormatOpt = Annotated[str, typer.Option("--format", "-f", help="table, json or csv.")]


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
    """Import an ONNX model and print its layer table."""
    from npusched.models import from_onnx
    from npusched.report.tables import render

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
@app.command("profile")
def profile_cmd(
    network: str,
    device: Annotated[str, typer.Option(help="Device name (see the README).")] = "prema-npu",
    batch: Annotated[list[int] | None, typer.Option(help="Batch size (repeatable).")] = None,
    fmt: FormatOpt = "table",
    layers: Annotated[bool, typer.Option("--layers/--no-layers", help="Per-layer rows.")] = True,
) -> None:
    """Per-layer cycles and time of NETWORK on a device, and the total (isolated latency).

    NETWORK is a zoo name or a path to an ``.onnx`` file (imported as by ``models import``).
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
    else:
        net = get_network(network)
    dev = get_device(device)
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
    requests: Annotated[int, typer.Option(help="Requests in the workload.")] = 100_000,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    reference: Annotated[
        bool, typer.Option("--reference/--no-reference", help="Also run the SimPy reference.")
    ] = True,
    seed: Annotated[int, typer.Option(help="Workload seed (>= 0).")] = 0,
) -> None:
    """Engine speed against a SimPy reference on a PREMA-style workload."""
    from npusched.bench import run_bench

    result = run_bench(n_requests=requests, seed=seed, reference=reference, progress=not as_json)
    if as_json:
        typer.echo(json.dumps(result, indent=2, sort_keys=True))
    else:
        from npusched.report.tables import render

        render([{"metric": k, "value": v} for k, v in result.items()], "table", title="bench")


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
    h = haxconn(Workload(spec, tuple(tasks)), goal, space=space, max_transitions=transitions,
                time_limit_s=time_limit)
    accs = spec.accelerators
    rows: list[dict[str, object]] = [
        {"method": m, "predicted_ms": round(r.predicted.makespan_s * 1e3, 3),
         "realised_ms": round(r.realised.makespan_s * 1e3, 3),
         "fps": round(r.realised.fps, 1), "transitions": str(r.schedule.transitions())}
        for m, r in h.baselines.items()
    ]
    rows.append({"method": f"HaX-CoNN ({h.source}{', proven' if h.proven else ''})",
                 "predicted_ms": round((h.predicted_objective if goal == "latency"
                                        else h.realised.makespan_s) * 1e3, 3),
                 "realised_ms": round(h.realised.makespan_s * 1e3, 3),
                 "fps": round(h.realised.fps, 1), "transitions": str(h.schedule.transitions())})
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
@reproduce_app.command("prema")
def reproduce_prema(
    out: Annotated[
        Path,
        typer.Option("--out", "-o", help="Output directory; a rerun resumes the finished points."),
    ] = Path("out/prema"),
    quick: Annotated[bool, typer.Option(help="Fewer runs (under a minute).")] = False,
    runs: Annotated[int | None, typer.Option(help="Workloads per point (default 25).")] = None,
    seed: Annotated[int, typer.Option(help="Base seed of every workload (>= 0).")] = 0,
    load: Annotated[
        float | None,
        typer.Option(help="Offered load while tasks arrive (default 1.5; sets the window)."),
    ] = None,
) -> None:
    """PREMA (HPCA 2020) Sec. VI: Fig. 5/6, 11-15 and the predictor study."""
    from npusched.experiments.reproduce.prema import reproduce

    summary = reproduce(out, quick=quick, runs=runs, seed=seed, load=load, progress=True)
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
        typer.Option(help="Parts to run (repeatable): table6, table8, fig5, fig7, solver."),
    ] = None,
    experiment: Annotated[
        list[int] | None, typer.Option(help="Table 6 experiment numbers (repeatable).")
    ] = None,
) -> None:
    """HaX-CoNN (PPoPP'24) Sec. 5: Table 6, Table 8, Fig. 5, Fig. 7 and a CP-SAT vs Z3 benchmark."""
    from npusched.experiments.reproduce.haxconn import PARTS, reproduce

    summary = reproduce(out, quick=quick, parts=tuple(only or PARTS), experiments=experiment)
    from npusched.report.tables import render

    rows = [
        {"exp": k, "best baseline": v["best_baseline"],
         "baseline ms": v["best_baseline_latency_ms"], "HaX-CoNN ms": v["haxconn_latency_ms"],
         "improvement %": v["improvement_pct"], "paper %": v["paper_improvement_pct"]}
        for k, v in summary["experiments"].items()
    ]
    render(rows, "table", title="HaX-CoNN Table 6: ours vs the paper's improvement")
    typer.echo(f"report: {Path(out) / 'report.md'} (tables, CSVs and plots in {out})")


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the exit status."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    if debug:  # accepted anywhere (``npusched run x.toml --debug``), not only before the command
        args = ["--debug", *(a for a in args if a != "--debug")]
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
