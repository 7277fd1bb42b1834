"""``mcbuild design``: the Designer/Judge loop, or a static-only sampled spec."""
from __future__ import annotations

import sys
from pathlib import Path

import click

from mcbuild.cli.model_options import given_settings, model_options
from mcbuild.cli.progress import log
from mcbuild.cli.vocabulary import backend_option, build_option, key_free, old_spelling
from mcbuild.designer_judge.loop import DESIGN_SETTINGS


def _count(n: int, noun: str) -> str:
    """``1 sample``, ``14 samples``: the unit the loop's own lines use (static samples or LLM rounds)."""
    return f"{n} {noun}" + ("" if n == 1 else "s")


def register(main: click.Group) -> None:
    @main.command("design")
    @click.option("--kind", type=click.Choice(["mirror", "biome", "task"]), required=True)
    @click.option("--tasks", default="iron_armor,diamond,enchantment", show_default=True,
                  help="Comma-separated task ids (mirror and biome).")
    @click.option("--from", "from_path", type=click.Path(path_type=Path), help="Start from this spec.")
    @click.option("--rounds", type=click.IntRange(min=1), default=4, show_default=True, help="Designer/Judge rounds at most.")
    @model_options(DESIGN_SETTINGS)
    @old_spelling("--retries", "--max-retries", "max_retries", type=click.IntRange(min=0))
    @click.option("--static-only", is_flag=True, help="No LLM: compile and audit --from, or a seeded sample.")
    @click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
    @click.option("--run-id", default=None, help="Name of the run under the designs folder (default: a timestamp).")
    @click.option("--design-dir", type=click.Path(file_okay=False, path_type=Path), default=None,
                  help="Designs folder: transcripts in <dir>/<run-id>/, accepted specs as <dir>/<run-id>.yaml "
                  "(default: <build>/designs).")
    @click.option("--out", type=click.Path(dir_okay=False, path_type=Path), default=None,
                  help="Accepted spec (YAML); default <design-dir>/<run-id>.yaml.")
    @click.option("--into-specs", is_flag=True, help="Allow --out inside specs/ (adds the spec to the benchmark set); "
                  "a task without --out goes to specs/tasks/<id>.yaml.")
    @build_option(help="Build folder: task designs run `task check` on its saves; holds designs/.")
    @click.option("--world", "worlds", multiple=True, help="Task: check only this world (repeatable; default every world).")
    @backend_option(help="Task: backend that checks the start states.")
    def design_cmd(kind, tasks, from_path, rounds, model, static_only, seed, run_id, design_dir, out, into_specs,
                   build_dir, worlds, backend, **llm) -> None:
        """Design a spec with an LLM Designer and Judge (a task: Designer and Validator), or sample one;
        write it only if accepted."""
        from mcbuild.compiler.core.paths import SPECS
        from mcbuild.compiler.spec.base import read_yaml
        from mcbuild.llm.client import ChatClient, LLMError
        from mcbuild.llm.settings import layered
        from mcbuild.designer_judge.loop import DesignError, DesignRequest, run_design
        from mcbuild.designer_judge.task_loop import run_task_design

        if out is not None and out.resolve().is_relative_to(SPECS.resolve()) and not into_specs:
            raise click.BadParameter(f"{out} is among the benchmark specs ({SPECS}); write designs elsewhere "
                                     f"(default {build_dir / 'designs'}/) or pass --into-specs", param_hint="--out")
        task_list = [t.strip() for t in tasks.split(",") if t.strip()]
        req = DesignRequest(kind=kind, tasks=[] if kind == "task" else task_list, rounds=rounds, out=out,
                            static_only=static_only, seed=seed, run_id=run_id,
                            from_path=str(from_path) if from_path else None,
                            from_spec=read_yaml(from_path) if from_path else None, build=build_dir,
                            worlds=tuple(worlds), backend=backend, into_specs=into_specs,
                            design_root=design_dir or build_dir / "designs")
        echo = log()
        try:
            client = None
            if not static_only:
                client = ChatClient(layered(DESIGN_SETTINGS, given_settings(llm), {"model": model}))
            result = (run_task_design if kind == "task" else run_design)(req, client, progress=echo)
        except DesignError as exc:             # a request the loop cannot run: bad input
            click.echo(f"error: {exc}", err=True)
            sys.exit(2)
        except LLMError as exc:
            click.echo(f"error: {key_free(exc, 'design')}", err=True)
            sys.exit(1)
        u = result.usage
        if u.calls:
            click.echo(f"usage: {u.calls} call(s), {u.prompt_tokens} prompt + {u.completion_tokens} completion tokens, "
                       f"${u.cost_usd:.4f}" + ("" if u.priced else " (model not in the price table)"))
        tries = _count(result.rounds, "sample" if static_only else "round")
        if result.accepted:
            click.echo(f"accepted after {tries}: wrote {result.out}")
            return
        click.echo(f"not accepted ({result.status} after {tries}); no spec written", err=True)
        for f in (result.last_static or {}).get("hard_failures", []):
            click.echo(f"  static: {f['code']}: {f['field']}: {f['message']}", err=True)
        judge, role = result.last_judge or {}, "validator" if kind == "task" else "judge"
        click.echo(f"  {role}: {judge.get('verdict')}: {judge.get('summary', '')}", err=True)
        for line in judge.get("hard_failures", judge.get("problems", [])) + judge.get("revision_instructions", []):
            click.echo(f"  {role}: {line}", err=True)
        sys.exit(1)
