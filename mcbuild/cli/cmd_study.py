"""``mcbuild study``: plan, run and report paired Vanilla/Mirror studies."""
from __future__ import annotations

import shlex
import sys
from pathlib import Path

import click
from pydantic import ValidationError

from mcbuild.cli.model_options import given_settings, model_options
from mcbuild.cli.server_options import apply_server_options, server_options
from mcbuild.cli.columns import aligned
from mcbuild.cli.progress import Stages, StudyBar
from mcbuild.cli.vocabulary import build_option, key_free, quiet_option
from mcbuild.llm.pricing import spent_text
from mcbuild.runtime.backends.registry import names as backend_names

DEFAULT_CONFIG = "studies/quick.yaml"


def _load(config: str):
    """The study config; a missing, unreadable or invalid file is one line (exit 2)."""
    from mcbuild.runtime.study.design.config import load_config

    try:
        return load_config(config)
    except FileNotFoundError as exc:
        raise click.UsageError(str(exc)) from exc


def _estimate_table(rows: list, from_prompts: bool) -> tuple[list[str], list[list[str]]]:
    """The header and cells of ``study estimate``'s table (a scripted configuration is free)."""
    header = ["configuration", "model", "planned", "prompt" if from_prompts else "pilot", "tokens in", "tokens out", "USD"]
    cells = []
    for r in rows:
        seen = r.first_prompt_tokens if from_prompts else r.pilot_episodes
        usd = ("free" if r.scripted else "no pilot" if not from_prompts and r.pilot_episodes == 0
               else "unpriced" if r.usd is None else f"{r.usd:.2f}")
        cells.append([r.configuration, r.model, str(r.planned), "" if seen is None else str(seen),
                      "" if r.tokens_in is None else f"{r.tokens_in:,}", "" if r.tokens_out is None else f"{r.tokens_out:,}",
                      usd])
    return header, cells


def with_model(cfg, model: str | None, given: dict):
    """The study run by ``--model NAME`` alone (its entry's settings, if listed) with the settings given
    on the command line laid over every model's own."""
    from mcbuild.llm.settings import layered

    if model is None and not given:
        return cfg
    names = [model] if model else cfg.models
    try:
        own = {m: layered(cfg.model_settings.get(m), given) for m in names}
    except ValidationError as exc:
        first = exc.errors()[0]
        raise click.UsageError(f"--{'-'.join(map(str, first['loc'])).replace('_', '-')}: {first['msg']}") from None
    return cfg.model_copy(update={"models": names, "model_settings": own})


def resume_command() -> str:
    """The command line that continues this run: the same arguments, with ``--resume`` when a
    ``study run`` did not have it."""
    ctx = click.get_current_context()
    args = list(getattr(ctx.find_root().command, "argv", []))
    if ctx.info_name == "run" and "--resume" not in args:
        args.append("--resume")
    return shlex.join(["mcbuild", *args])


def stopped(summary, command: str) -> None:
    """A run stopped by a signal: what the store holds, how to go on, and the signal's exit code."""
    click.echo(f"interrupted by {summary.interrupted.name}: {summary.stored}/{summary.planned} episodes stored in "
               f"{summary.store_path}; continue with: {command}", err=True)
    sys.exit(summary.interrupted.exit_code)


def card_beside_report(study: Path, out_dir: Path, build: Path | None) -> None:
    """``card.json`` beside the report (``mcbuild.analysis.card``); says when the build folder is not the
    study's build, so the card lacks the packs' and saves' hashes."""
    from mcbuild.analysis.card import build_card, save_card
    from mcbuild.compiler.core.paths import BUILD

    card = build_card(study, build)
    click.echo(f"card: {save_card(card, out_dir)}")
    if not card["build"]["verified"]:
        click.echo(f"warning: {build or BUILD} is not the build this study ran on (other fingerprint): the card "
                   "names the study's build fingerprint but not its packs' and saves' hashes; pass --build", err=True)


@click.command("compare")
@click.argument("a", type=click.Path(path_type=Path))
@click.argument("b", type=click.Path(path_type=Path))
@click.option("--a-arm", default=None, help="A's configuration (CONFIGURATION[@MODEL]) when A has several.")
@click.option("--b-arm", default=None, help="B's configuration (CONFIGURATION[@MODEL]) when B has several.")
@build_option("build_root", help="build folder the studies' cards are made against (a card file needs none)")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
def compare_cmd(a: Path, b: Path, a_arm: str | None, b_arm: str | None, build_root: Path, as_json: bool) -> None:
    """Compare the studies (folders) or results cards (card.json) A and B on their common episodes, paired by
    world, condition, task and repetition: Score and SR per condition, the paired t-test of the Score and
    McNemar's exact test of success. Refuses studies run on other worlds or packs, naming what differs."""
    from mcbuild.analysis.card import CardError
    from mcbuild.analysis.compare import Incomparable, compare, load_side
    from mcbuild.compiler.core.canonical import dumps
    from mcbuild.runtime.study.store.results import StoreError

    try:
        result = compare(load_side(a, build_root), load_side(b, build_root), arm_a=a_arm, arm_b=b_arm)
    except CardError as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(2)
    except (Incomparable, StoreError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(dumps(result.to_json()) if as_json else "\n".join(result.lines()), nl=not as_json)


@click.group("study")
def study() -> None:
    """Plan, run and report paired Vanilla/Mirror studies."""

@click.command("plan")
@click.argument("config", default=DEFAULT_CONFIG)
def plan_cmd(config: str) -> None:
    """Print the number of episodes of CONFIG by condition and configuration."""
    from mcbuild.runtime.study.design.plan import build_plan, count_by

    cfg = _load(config)
    plan = build_plan(cfg)
    counts = count_by(plan, ("configuration", "condition"))
    conds = cfg.conditions
    configs = cfg.all_configurations()
    w = max(13, *(len(c) for c in configs)) + 1
    click.echo(f"study {cfg.name}: {len(plan)} episodes "
               f"({len(cfg.models)} models x {len(cfg.tasks)} tasks x {len(cfg.worlds)} worlds x "
               f"{cfg.repetitions} repetitions; budgets {cfg.task_budgets()})")
    click.echo("configuration".ljust(w) + "".join(c.rjust(8) for c in conds) + "total".rjust(8))
    for c in configs:
        row = [counts.get((c, k), 0) for k in conds]
        click.echo(c.ljust(w) + "".join(str(n).rjust(8) for n in row) + str(sum(row)).rjust(8))
    tot = [sum(counts.get((c, k), 0) for c in configs) for k in conds]
    click.echo("total".ljust(w) + "".join(str(n).rjust(8) for n in tot) + str(sum(tot)).rjust(8))

@click.command("run")
@click.argument("config", default=DEFAULT_CONFIG)
@click.option("--workers", type=click.IntRange(min=1), default=None, help="Worker processes (default: the config's).")
@click.option("--concurrency", type=click.IntRange(min=1), default=None,
              help="Episodes in flight per worker (threads; default: the config's).")
@click.option("--resume", is_flag=True, help="Continue an existing store, skipping finished episodes.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="Run at most N of the remaining episodes.")
@build_option("build_root", help="build folder whose packs and saves the episodes run on")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Study folder (default build/studies/<name>).")
@quiet_option()
@model_options()
@click.option("--backend", type=click.Choice(backend_names()), default=None,
              help="Backend (default: the config's `backend`).")
@server_options
@click.option("--replay", "replay", type=click.Path(path_type=Path), default=None,
              help="Answer every model request from this study's store (offline; write to another --out).")
@click.option("--scheduler", type=click.Choice(["local", "ray"]), default=None,
              help="Where episodes run (default: the config's, else local); see docs/distributed.md.")
@click.option("--ray-address", default=None, help="Ray cluster address (implies --scheduler ray).")
@click.option("--break-lock", is_flag=True,
              help="Take over a store locked by a run on another host (only when that run is gone).")
@click.option("--dry-run", is_flag=True,
              help="Send nothing: print each model's provider profile, endpoint and exact first request.")
def run_cmd(config: str, workers: int | None, concurrency: int | None, resume: bool, limit: int | None,
            build_root: Path, out: Path | None, quiet: bool, model: str | None, backend: str | None,
            server_jar: Path | None, accept_eula: bool, allow_unverified_jar: bool, prestart: bool,
            replay: Path | None, scheduler: str | None, ray_address: str | None, break_lock: bool,
            dry_run: bool, **llm) -> None:
    """Run the episodes of CONFIG (default studies/quick.yaml) into build/studies/<name>/results.sqlite."""
    from mcbuild.runtime.errors import BackendUnavailable
    from mcbuild.runtime.study.run.runner import run_study
    from mcbuild.runtime.study.store.results import StoreError

    if ray_address and scheduler == "local":
        raise click.UsageError("--ray-address needs --scheduler ray; --scheduler local would ignore it")
    cfg = with_model(_load(config), model, given_settings(llm))
    if backend:
        cfg = cfg.model_copy(update={"backend": backend})
    if cfg.backend == "server":
        apply_server_options(server_jar, accept_eula, allow_unverified_jar, prestart)
    if ray_address:
        cfg = cfg.model_copy(update={"ray_address": ray_address, "scheduler": scheduler or "ray"})
    elif scheduler:
        cfg = cfg.model_copy(update={"scheduler": scheduler})
    if dry_run:
        from mcbuild.runtime.study.run.dry_run import dry_run as first_requests

        click.echo("\n".join(first_requests(cfg, build_root)))
        return
    try:
        with StudyBar(f"study {cfg.name}", quiet) as bar:
            summary = run_study(cfg, workers=workers, concurrency=concurrency, resume=resume, limit=limit,
                                build_root=build_root, out_dir=out, progress=bar, replay=replay,
                                break_lock=break_lock)
    except (StoreError, BackendUnavailable) as exc:
        click.echo(f"error: {key_free(exc, 'study')}", err=True)
        sys.exit(1)
    click.echo("\n".join(summary.lines()))
    for line in summary.agent_problems():
        click.echo(f"error: {line}", err=True)
    if summary.interrupted is not None:
        stopped(summary, resume_command())
    if summary.agent_errors:
        sys.exit(2)
    if summary.errors:
        sys.exit(1)
    if summary.gave_up:
        sys.exit(1)

@click.command("status")
@click.argument("path", type=click.Path(path_type=Path))
def status_cmd(path: Path) -> None:
    """Read the study at PATH, live or finished, without disturbing its writer: episodes stored of
    planned, faults, running Score/SR by condition, money spent against the cap, the writer."""
    from mcbuild.runtime.study.store.status import read_status

    click.echo("\n".join(read_status(path).lines()))

@click.command("watch")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to serve on (another than loopback shows the study to your network).")
@click.option("--port", type=click.IntRange(0, 65535), default=8765, show_default=True,
              help="Port to serve on (0: any free port).")
@build_option("build_dir", help="build folder whose saves draw the maps")
def watch_cmd(path: Path, host: str, port: int, build_dir: Path) -> None:
    """Serve a read-only page that follows the study at PATH while it runs (from another shell):
    progress per cell, faults, money against the cap, the episodes in flight with their last actions,
    each one's map and actions as it plays, and the report once the study has ended."""
    from mcbuild.runtime.study.store.results import Store
    from mcbuild.runtime.study.watch import WatchServer

    Store.read_only(path).close()             # a missing or unreadable store is one line before serving
    try:
        server = WatchServer(path, build_dir, host, port)
    except OSError as exc:
        raise click.UsageError(f"cannot serve on {host}:{port}: {exc.strerror or exc}") from None
    click.echo(f"watching {path} at {server.url} (read-only; Ctrl-C to stop)", err=True)
    try:
        server.serve_forever(poll_interval=0.5)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()

@click.command("estimate")
@click.argument("config", default=DEFAULT_CONFIG)
@click.option("--pilot", type=click.Path(path_type=Path), default=None,
              help="Project from the results store of a short pilot (e.g. the study run with --limit N --out DIR).")
@click.option("--from-prompts", "from_prompts", is_flag=True,
              help="Count budget x each configuration's rendered first prompt (the default without --pilot).")
@build_option("build_root", help="build folder whose worlds render the first prompts")
def estimate_cmd(config: str, pilot: Path | None, from_prompts: bool, build_root: Path) -> None:
    """Tokens and USD per configuration and model for CONFIG, projected from a pilot run (--pilot)
    or, by default, from the configurations' rendered first prompts (no model call, no key)."""
    from mcbuild.runtime.study.estimate import CHARS_PER_TOKEN, REPLY_TOKENS, estimate, estimate_from_prompts
    from mcbuild.runtime.study.store.results import StoreError

    if pilot is not None and from_prompts:
        raise click.UsageError("give one of --pilot DIR and --from-prompts")
    cfg = _load(config)
    if pilot is None:
        rows = estimate_from_prompts(cfg, build_root)
        click.echo(f"method: first prompts (system + first observation of each configuration and task, rendered "
                   f"on the simulator without a model call; ~{CHARS_PER_TOKEN} characters a token; one call an "
                   f"action for the whole budget; replies assumed {REPLY_TOKENS} tokens). Prompts grow during "
                   "an episode: a floor, not a forecast. A pilot measures them: --pilot DIR.")
    else:
        try:
            rows = estimate(cfg, pilot)
        except StoreError as exc:
            click.echo(f"error: {exc}; run a pilot first: mcbuild study run {config} --limit N --out {pilot}",
                       err=True)
            sys.exit(1)
        click.echo(f"method: pilot {pilot} (mean tokens of its episodes per configuration and model x planned "
                   "episodes)")
    click.echo("\n".join(aligned(*_estimate_table(rows, pilot is None), right=frozenset(range(2, 7)))))
    known = [r.usd for r in rows if r.usd is not None]
    gaps = sum(1 for r in rows if r.usd is None)
    click.echo(f"total: {spent_text(sum(known), gaps)}" + (f" ({gaps} row(s) without a pilot or a price)"
                                                          if gaps else ""))

@click.command("export")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--format", "fmt", type=click.Choice(["csv", "parquet", "jsonl", "full"]), default="csv",
              show_default=True, help="The tables episodes, actions and calls as CSV, Parquet (pyarrow) or JSONL; "
                                      "full: one expanded JSONL line per episode, prompts included.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Folder of the tables (default PATH/export/); with --format full, the file (default "
                   "PATH/export.jsonl).")
def export_cmd(path: Path, fmt: str, out: Path | None) -> None:
    """Write the study at PATH as tables (one row per episode, action and model call; docs/analysis.md), read-only."""
    from mcbuild.analysis.export import export
    from mcbuild.runtime.study.store.results import StoreError

    try:
        done = export(path, fmt, out)
    except (StoreError, ImportError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    if fmt == "full":
        click.echo(f"{done.episodes} episodes -> {done.files['full'][0]}")
        return
    per = done.bytes / done.episodes if done.episodes else 0
    click.echo(f"{done.episodes} episodes -> {done.files['episodes'][0].parent} "
               f"({', '.join(f'{p.name}: {n:,} rows' for p, n in done.files.values())}; "
               f"{done.bytes:,} bytes, {per:,.0f} an episode)")

@click.command("report")
@click.argument("path", type=click.Path(path_type=Path))
@click.option("--min-episodes", type=click.IntRange(min=1), default=5, show_default=True,
              help="Cells with fewer episodes (or comparisons) print n<k.")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Report folder (default PATH/report).")
@click.option("--no-trajectories", is_flag=True, help="Do not export per-episode trajectory files.")
@click.option("--build", "build_dir", type=click.Path(path_type=Path), default=None,
              help="Build folder with the suites' report.json and the world saves (default: build/).")
@click.option("--no-viewer", is_flag=True, help="Do not write the trajectory viewer (report/viewer/).")
@click.option("--map-limit", type=click.IntRange(min=0), default=None,
              help="Episodes whose path is replayed for the viewer's maps (default 500; 0 for none).")
@quiet_option()
def report_cmd(path: Path, min_episodes: int, out: Path | None, no_trajectories: bool, build_dir: Path | None,
               no_viewer: bool, map_limit: int | None, quiet: bool) -> None:
    """Write tables (Markdown, CSV, LaTeX), plots, report.html and the trajectory viewer for the study at PATH."""
    from mcbuild.runtime.study.report import write_report
    from mcbuild.runtime.study.store.results import StoreError
    from mcbuild.runtime.study.viewer import write_viewer

    try:
        with Stages(quiet) as stages:
            res = write_report(path, out_dir=out, min_episodes=min_episodes, trajectories=not no_trajectories,
                               build=build_dir, viewer=None if no_viewer else write_viewer, map_limit=map_limit, progress=stages)
    except (StoreError, ValueError) as exc:
        click.echo(f"error: {exc}", err=True)
        sys.exit(1)
    click.echo(res.table("table3_suite").markdown())
    click.echo(f"{res.n_valid} valid episodes, {res.n_excluded} excluded, {res.n_missing} missing")
    click.echo(f"markdown: {res.markdown}")
    click.echo(f"html: {res.html}")
    card_beside_report(path, res.out_dir, build_dir)
    if res.viewer is not None:
        v = res.viewer
        click.echo(f"viewer: {v.out_dir / 'index.html'} ({v.episodes} episodes, {v.replayed} paths replayed, "
                   f"{v.bytes / 1e6:.1f} MB, {v.seconds:.1f} s)")


def register(main: click.Group) -> None:
    for command in (plan_cmd, run_cmd, status_cmd, watch_cmd, estimate_cmd, export_cmd, compare_cmd, report_cmd):
        study.add_command(command)
    main.add_command(study)
