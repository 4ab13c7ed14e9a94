"""``npusched run``, ``bench``, ``map``, ``sweep``, ``report``, ``schema``, ``trace``, ``compare``
and ``validate``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from npusched.cli._app import (
    FigureFormatOpt,
    FormatOpt,
    PluginOpt,
    QuietOpt,
    VerboseOpt,
    _common,
    app,
)
from npusched.errors import ConfigError


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
    result = run_config_file(config, out, seed=seed, progress=progress, timeline=timeline)
    _print_summary(result, out, fmt)


#: Metrics shown in the terminal table (all of them are in summary.json).
_SHOWN = (
    "n_requests",
    "n_unfinished",
    "antt",
    "stp",
    "fairness",
    "mean_latency_s",
    "p95_latency_s",
    "p99_latency_s",
    "p95_high_priority_norm",
    "sla_violation_rate_n2",
    "sla_violation_rate_n4",
    "sla_violation_rate_n10",
    "slo_attainment",
    "throughput_rps",
    "utilisation",
    "preemptions",
    "energy_j",
    "peak_power_w",
    "avg_power_w",
)


def _print_summary(out: Any, out_dir: Path, fmt: str = "table") -> None:
    """The main metrics as a table; ``fmt="json"``: summary.json's text; ``"csv"``: every
    metric as a ``metric,value`` row."""
    if fmt == "json":
        from npusched.experiments.runner import summary_json

        print(summary_json(out.summary), end="")
        return
    if fmt == "csv":
        import numpy as np

        print("metric,value")
        for k, v in sorted(out.summary.items()):
            print(f"{k},{'' if not np.isfinite(v) else repr(float(v))}")
        return
    import numpy as np
    from rich.console import Console
    from rich.table import Table

    from npusched.report.tables import console_width

    cfg = out.config
    title = (
        f"{cfg.name + ': ' if cfg.name else ''}{cfg.policy.name} on {cfg.hardware.device}, "
        f"{cfg.workload.kind} workload, seed {cfg.seed}"
    )
    table = Table(title=title)
    table.add_column("metric")
    table.add_column("value", justify="right")
    for key in _SHOWN:
        if key in out.summary:
            v = out.summary[key]
            text = "-" if not np.isfinite(v) else (f"{v:,.0f}" if v == int(v) else f"{v:.4g}")
            table.add_row(key, text)
    console = Console(width=console_width() or None)
    console.print(table)
    console.print(f"{len(out.summary)} metrics in {out_dir / 'summary.json'}")


# --- bench -------------------------------------------------------------------------------------
@app.command("bench")
def bench_cmd(
    scenario: Annotated[
        list[str] | None,
        typer.Option(
            metavar="NAME",
            help="Scenario to run (repeatable): temporal, prema, spatial, concurrent, families, solver, haxconn, sweep. Default: all.",
        ),
    ] = None,
    requests: Annotated[
        int | None,
        typer.Option(
            help="Requests per scenario (default: temporal 100,000, prema 20,000, spatial 5,000, concurrent 20,000, families 5,000, haxconn and sweep 2,000)."
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
    render(bench_rows(result), fmt, title="bench (targets: issue 25)")


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
    from npusched.experiments.backends import check_backend_options, start_pool_server

    progress = _common(quiet=quiet, verbose=verbose, plugins=plugin)
    check_backend_options(backend, workers, address)
    if not dry_run:  # the pool's server imports on another core while this process does,
        # then runs the sweep's first point once so that every worker starts with its caches
        warm = {"experiment": str(file.resolve()), "filters": list(filters or ()), "write": True}
        start_pool_server(backend, warm=warm)
    from npusched.experiments.store import run_sweep
    from npusched.experiments.sweep import load_experiment, parse_filters

    exp = load_experiment(file)
    flt = parse_filters(filters or [], exp)
    if dry_run:
        from npusched.experiments.store import plan_sweep
        from npusched.report.tables import render

        title, rows = plan_sweep(exp, out, flt, max_points)
        render(rows, "table", title=title)
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
    from npusched.experiments.store import load_results
    from npusched.report.sweep_report import write_report

    show = _common(quiet=quiet, verbose=verbose)
    html, md = write_report(
        directory, out, figure_format=figure_format, progress=show, load_sweep=load_results
    )
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


@app.command("compare")
def compare_cmd(
    out: Annotated[Path, typer.Option("--out", "-o", help="Output directory.")] = Path(
        "out/compare"
    ),
    scenario: Annotated[
        Literal["A", "B", "C"], typer.Option(help="Planaria Table I workload.")
    ] = "C",
    qos: Annotated[
        Literal["S", "M", "H"], typer.Option(help="QoS level (Planaria Table I).")
    ] = "S",
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
            "antt_sd_meas": round(p["spread"]["measured"]["antt"]["std"], 3),
            "antt_pred": round(p["predicted"]["antt"], 3),
            "antt_inside": p["within_spread"]["antt"],
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
