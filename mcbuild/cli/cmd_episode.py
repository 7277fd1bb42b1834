"""``mcbuild episode run``: one agent, one task, one world and condition, on a backend (the simulator by default)."""
from __future__ import annotations

from pathlib import Path

import click

from mcbuild.compiler.core.paths import BUILD
from mcbuild.compiler.worlds.layout import VANILLA
from mcbuild.cli.adaptations import warn, warn_from_now_on
from mcbuild.cli.model_options import given_settings, model_options
from mcbuild.cli.server_options import apply_server_options, server_options
from mcbuild.cli.vocabulary import key_free
from mcbuild.runtime.backends.registry import names as backend_names


def register(main: click.Group) -> None:
    @main.group()
    def episode() -> None:
        """Run episodes on the embedded simulator (no Java, no server, no API key) or a real server."""

    @episode.command("run")
    @click.option("--world", required=True, help="Vanilla world id, e.g. plains-1")
    @click.option("--condition", default="vanilla", show_default=True, help="vanilla or m01 ... m06")
    @click.option("--task", required=True, help="a task of specs/tasks/, e.g. iron_armor, diamond, enchantment")
    @click.option("--agent", "agent_name", default="vanilla-planner", show_default=True,
                  help="a registered agent, package.module:factory or an entry point of mcbuild.agents")
    @click.option("--seed", type=click.IntRange(0, 2**31 - 1), default=0, show_default=True)
    @click.option("--budget", type=click.IntRange(min=1), default=None,
                  help="semantic actions, at least 1 (default: the task's budget)")
    @click.option("--trace", type=click.Path(dir_okay=False, path_type=Path), default=None,
                  help="write the trajectory (with hidden evaluator events) as JSONL")
    @click.option("--build", "build_dir", type=click.Path(file_okay=False, path_type=Path), default=BUILD,
                  show_default=True, help="build folder holding worlds/")
    @click.option("--backend", type=click.Choice(backend_names()), default="sim", show_default=True,
                  help="sim (embedded simulator) or server (Minecraft 1.19.0 server.jar)")
    @model_options()
    @server_options
    def run_episode(world, condition, task, agent_name, seed, budget, trace, build_dir, backend, model, server_jar,
                    accept_eula, allow_unverified_jar, prestart, **llm) -> None:
        """Run one episode, printing one line per action and the final Score/SR."""
        from mcbuild.runtime.agents.registry import UnknownAgent, create, offered, resolve
        from mcbuild.runtime.contract.skills import describe
        from mcbuild.runtime.episode.loop import run
        from mcbuild.runtime.episode.opening import UnknownName, check_names, open_episode
        from mcbuild.runtime.episode.trace import write_trace

        try:
            resolve(agent_name)
        except UnknownAgent as exc:
            raise click.BadParameter(str(exc), param_hint="--agent") from None
        if backend == "server":
            apply_server_options(server_jar, accept_eula, allow_unverified_jar, prestart)
        try:
            check_names(world, condition, task)
        except UnknownName as exc:
            raise click.BadParameter(str(exc), param_hint=f"--{exc.what}") from None
        options = _agent_options(agent_name, condition, build_dir, model, given_settings(llm))
        agent = create(agent_name, **offered(agent_name, seed=seed), **options)
        ep = open_episode(world, condition, task, budget, seed, build=build_dir, backend=backend)

        def show(index: int, action, result) -> None:
            status = "ok" if result["ok"] else f"FAIL {result['reason']}"
            gained = ", ".join(f"+{n} {i}" for i, n in result.get("gained", {}).items())
            lost = ", ".join(f"-{n} {i}" for i, n in result.get("lost", {}).items())
            change = "; ".join(part for part in (gained, lost) if part)
            click.echo(f"{index:3d} {describe(action)} -> {status}: {result['message']}"
                       + (f" [{change}]" if change else "") + f" | score {ep.score}")

        with ep:
            run(ep, agent, seed, [show])
            if trace:
                write_trace(ep, trace)
            click.echo(f"Score {ep.score}  SR {100 if ep.success else 0}%  "
                       f"({ep.used}/{ep.setup.budget} actions, {ep.end_reason})")


def _agent_options(agent: str, condition: str, build: Path, model: str | None, given: dict) -> dict:
    """Settings for an LLM configuration, checked against the endpoint before the episode starts. Another
    agent is given ``--model`` and the settings options as they are: one it does not take is refused
    (``registry.create``: one line, exit 2), never ignored."""
    from mcbuild.llm.settings import layered
    from mcbuild.runtime.agents.llm import CONFIGURATIONS, LLMError, needs_rules, preflight

    if agent not in CONFIGURATIONS:
        return {**({"model": model} if model else {}), **given}
    if not model:
        raise click.UsageError(f"--model is required for the LLM configuration {agent!r}")
    settings = layered(given, {"model": model})
    options: dict = {"settings": settings}
    if needs_rules(agent):
        if condition == VANILLA:
            raise click.UsageError(f"{agent} runs only in Mirror worlds (--condition m01 ... m06): "
                                   "a Vanilla world has no rule sheet")
        sheet = build / condition / "rules.md"
        if not sheet.is_file():
            raise click.UsageError(f"{agent} needs the compiled rule sheet {sheet}; run `mcbuild compile --all`")
        options["rules"] = sheet.read_text()
    try:
        warn(model, preflight(settings))       # the profile's changes and the preflight's adaptations
    except LLMError as exc:
        raise click.ClickException(key_free(exc, "episode")) from None
    warn_from_now_on()                         # any later adaptation, once
    return options
