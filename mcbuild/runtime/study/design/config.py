"""Study configuration: which episodes a paired study runs (pydantic model + YAML).

A study is the full cross product

    worlds x conditions x tasks x configurations x models x repetitions

with one action budget per task, plus the *disclosed* configurations (ReAct
w/rules, ``react_rules``) which run only under the Mirror conditions (paper
Section 3.5 / 4.1).  ``studies/paper.yaml`` is the paper's 8,640-episode main
study, ``studies/quick.yaml`` the key-free demo with scripted agents.

YAML layout (every key except ``worlds``/``configurations`` has a default)::

    name: quick                      # default: file stem
    worlds: [plains-1, plains-2, ...]
    biomes: {plains-1: plains}       # optional; default: the world's biome in specs/worlds.yaml
    conditions: [vanilla, m01, ..., m06]
    tasks: [iron_armor, diamond, enchantment]
    configurations: [vanilla-planner, adaptive-planner]   # or package.module:factory, or an entry
                                     # point of the group mcbuild.agents (docs/agents.md)
    disclosure:
      configurations: [react_rules]  # disclosed runs, Mirror conditions only
    models: [none]                   # names, or mappings: {name: NAME, <ModelSettings fields>}
    endpoint: {timeout: 300}         # ModelSettings fields for every model (an entry's own win;
                                     # mcbuild/llm/settings.py, docs/study.md)
    repetitions: 1                   # at most MAX_REPETITIONS; the plan at most MAX_EPISODES episodes
    budget: null                     # one budget for every task (e.g. 200; at most MAX_BUDGET), or
    budgets: {iron_armor: 50}        # per-task overrides of specs/tasks/
    checkpoints: [100, 150, 200]     # cumulative-SR checkpoints (Table 5)
    backend: sim                     # a name of runtime/backends/registry.py: sim | server
    workers: 1                       # or auto: the CPUs this process may use, less the busy ones (printed)
    concurrency: 1                   # episodes in flight per worker (threads; for LLM studies)
    max_cost_usd: null               # stop cleanly once the stored episodes cost this much (resumable)
    scheduler: local                 # local (this machine's process pool) | ray (docs/distributed.md)
    ray_address: null                # ray cluster address (default: a private instance on this machine)
    ray_batch: 50                    # simulator episodes per Ray task
    ray_llm_in_flight: 32            # LLM episodes in flight over the Ray cluster
    base_seed: 0
    agents: {react: adaptive-planner} # optional: agent implementation per configuration
    build_fingerprint: null          # optional pin of the build (content:<sha256>)
"""
from __future__ import annotations

import functools
import re
from pathlib import Path
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_serializer, field_validator, model_validator

from mcbuild.compiler.core.paths import ROOT
from mcbuild.compiler.worlds.layout import VANILLA, world_biomes
from mcbuild.llm.settings import ModelSettings, layered
from mcbuild.runtime.backends.registry import names as backend_names
from mcbuild.runtime.records import CONDITION_RE

__all__ = ["all_conditions", "check_agents", "Disclosure", "StudyConfig", "load_config", "STUDIES", "default_budgets",
           "MAX_REPETITIONS", "MAX_BUDGET", "MAX_EPISODES"]

STUDIES = ROOT / "studies"
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
MAX_REPETITIONS = 1_000         # repetitions of each cell
MAX_BUDGET = 10_000             # actions of one episode (the paper's budgets are 50 and 75)
MAX_EPISODES = 100_000          # episodes of one plan (the paper's main study has 8,640), built in memory


def all_conditions() -> list[str]:
    """``vanilla`` and the id of every rule manifest in ``specs/`` (the default conditions)."""
    from mcbuild.compiler.core.paths import SPECS
    from mcbuild.compiler.spec.base import read_yaml

    docs = (read_yaml(p) for p in sorted(SPECS.glob("*.yaml")))
    return [VANILLA, *sorted(d["id"] for d in docs if isinstance(d, dict) and d.get("kind") == "mirror")]


def default_budgets() -> dict[str, int]:
    """Per-task budgets of the task specs (``specs/tasks/``; 50 / 50 / 75 for the paper tasks)."""
    from mcbuild.compiler.spec.task import tasks

    return {tid: t.budget for tid, t in tasks().items()}


def _no_duplicates(v: list[str]) -> list[str]:
    dup = sorted({x for x in v if v.count(x) > 1})
    if dup:
        raise ValueError(f"duplicate entries {dup}")
    return v


class Disclosure(BaseModel):
    """Configurations that receive the exact rule descriptions (Mirror worlds only)."""

    model_config = ConfigDict(extra="forbid")
    configurations: list[str] = Field(default_factory=list)

    @field_validator("configurations")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        return _no_duplicates(v)


class StudyConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    description: str = ""
    worlds: list[str] = Field(default_factory=lambda: list(world_biomes()))
    biomes: dict[str, str] = Field(default_factory=dict)
    conditions: list[str] = Field(default_factory=all_conditions)
    tasks: list[str] = Field(default_factory=lambda: ["iron_armor", "diamond", "enchantment"])
    configurations: list[str]
    disclosure: Disclosure = Field(default_factory=Disclosure)
    models: list[str] = Field(default_factory=lambda: ["none"])
    model_settings: dict[str, ModelSettings] = Field(default_factory=dict)   # from mapping entries of `models:`
    endpoint: ModelSettings | None = None          # settings of every model; an entry's own win
    repetitions: int = Field(1, ge=1, le=MAX_REPETITIONS)
    budget: int | None = Field(None, ge=1, le=MAX_BUDGET)
    budgets: dict[str, Annotated[int, Field(ge=1, le=MAX_BUDGET)]] = Field(default_factory=dict)
    checkpoints: list[int] = Field(default_factory=list)
    backend: str = "sim"
    workers: Annotated[int, Field(ge=1)] | Literal["auto"] = 1
    concurrency: int = Field(1, ge=1)
    max_cost_usd: float | None = Field(None, gt=0)
    scheduler: Literal["local", "ray"] = "local"
    ray_address: str | None = None
    ray_batch: int = Field(50, ge=1)
    ray_llm_in_flight: int = Field(32, ge=1)
    base_seed: int = 0
    agents: dict[str, str] = Field(default_factory=dict)
    build_fingerprint: str | None = None

    # ------------------------------------------------------------------ checks
    @model_validator(mode="before")
    @classmethod
    def _model_entries(cls, data: Any) -> Any:
        """``models:`` entries given as mappings become names plus ``model_settings``."""
        if not isinstance(data, dict) or not isinstance(data.get("models"), list):
            return data
        names, given = [], dict(data.get("model_settings") or {})
        for entry in data["models"]:
            if isinstance(entry, dict):
                name, own = entry.get("name"), {k: v for k, v in entry.items() if k != "name"}
                if isinstance(name, str):
                    given[name] = own
                entry = name
            names.append(entry)
        return {**data, "models": names, "model_settings": given}

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, v: ModelSettings | None) -> ModelSettings | None:
        if v is not None and "model" in v.model_fields_set:
            raise ValueError("names no model: a model is named in `models:`")
        return v

    @field_validator("model_settings")
    @classmethod
    def _own(cls, v: dict[str, ModelSettings]) -> dict[str, ModelSettings]:
        for name, own in v.items():
            if "model" in own.model_fields_set and own.model != name:
                raise ValueError(f"{name}: `model` is the entry's `name` ({name!r}), not a setting")
        return v

    @field_serializer("endpoint", "model_settings")
    def _given_only(self, v: Any) -> Any:
        """Layers keep only the settings given, so that a dumped config validates to the same layers."""
        if isinstance(v, ModelSettings):
            return v.model_dump(mode="json", include=v.model_fields_set)
        if isinstance(v, dict):
            return {m: s.model_dump(mode="json", include=s.model_fields_set) for m, s in v.items()}
        return v

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not _NAME_RE.match(v):
            raise ValueError(f"study name {v!r} must be a simple folder name (letters, digits, . _ -)")
        return v

    @field_validator("conditions")
    @classmethod
    def _conditions(cls, v: list[str]) -> list[str]:
        v = [c.lower() for c in v]
        bad = [c for c in v if not CONDITION_RE.match(c)]
        if bad:
            raise ValueError(f"conditions must be 'vanilla' or 'm01'..'m06', got {bad}")
        return v

    @field_validator("worlds", "conditions", "tasks", "configurations", "models")
    @classmethod
    def _unique(cls, v: list[str]) -> list[str]:
        if not v:
            raise ValueError("must not be empty")
        return _no_duplicates(v)

    @field_validator("repetitions")
    @classmethod
    def _plan_size(cls, v: int, info: ValidationInfo) -> int:
        """The plan's episodes (counted, not built) stay within :data:`MAX_EPISODES`."""
        d = info.data
        if not all(k in d for k in ("worlds", "conditions", "tasks", "configurations", "disclosure", "models")):
            return v                # an earlier field failed and is reported first
        mirror = sum(c != VANILLA for c in d["conditions"])
        cells = len(d["configurations"]) * len(d["conditions"]) + len(d["disclosure"].configurations) * mirror
        n = len(d["worlds"]) * len(d["tasks"]) * len(d["models"]) * cells * v
        if n > MAX_EPISODES:
            raise ValueError(f"{v} repetitions make a plan of {n:,} episodes, over the bound of {MAX_EPISODES:,} "
                             "(docs/study.md); split the study")
        return v

    @field_validator("ray_address")
    @classmethod
    def _ray_address(cls, v: str | None, info: ValidationInfo) -> str | None:
        if v and info.data.get("scheduler") == "local":
            raise ValueError("set, but scheduler is local, which would ignore it; set scheduler: ray")
        return v

    @field_validator("backend")
    @classmethod
    def _backend(cls, v: str) -> str:
        if v not in backend_names():
            raise ValueError(f"unknown backend {v!r}; known: {', '.join(backend_names())}")
        return v

    @field_validator("checkpoints")
    @classmethod
    def _checkpoints(cls, v: list[int]) -> list[int]:
        if any(c < 1 for c in v):
            raise ValueError("checkpoints must be positive action counts")
        return sorted(set(v))

    @model_validator(mode="after")
    def _consistent(self) -> "StudyConfig":
        from mcbuild.compiler.spec.base import FieldError

        def first(name: str, values: list[str], known: Any, what: str) -> None:
            bad = next(((i, v) for i, v in enumerate(values) if v not in known), None)
            if bad is not None:
                raise FieldError(f"{name}[{bad[0]}]", f"unknown {what} {bad[1]!r}; known: {', '.join(known)}")

        first("conditions", self.conditions, all_conditions(), "condition")
        known = default_budgets()
        first("tasks", self.tasks, sorted(known), "task")
        bad = next((t for t in self.budgets if t not in known), None)
        if bad is not None:
            raise FieldError(f"budgets.{bad}", f"unknown task {bad!r}; known: {', '.join(sorted(known))}")
        unplaced = next(((i, w) for i, w in enumerate(self.worlds) if w not in self.biomes and w not in world_biomes()),
                        None)
        if unplaced is not None:
            raise FieldError(f"worlds[{unplaced[0]}]", f"{unplaced[1]!r} is not in specs/worlds.yaml (known: "
                             f"{', '.join(world_biomes())}); a world of your own needs its biome under `biomes:`")
        stray = sorted(set(self.model_settings) - set(self.models))
        if stray:
            raise FieldError(f"model_settings.{stray[0]}", "settings for a model that is not in `models:`")
        both = sorted(set(self.configurations) & set(self.disclosure.configurations))
        if both:
            raise FieldError("disclosure.configurations", f"{both} are listed both hidden (configurations) and "
                             "disclosed")
        if self.disclosure.configurations and not self.mirror_conditions:
            raise FieldError("disclosure.configurations", "disclosed configurations need at least one Mirror "
                             "condition (m01..m06) in conditions")
        if self.checkpoints and max(self.checkpoints) > max(self.task_budgets().values()):
            raise FieldError("checkpoints", f"checkpoint {max(self.checkpoints)} exceeds every task budget")
        if self.max_cost_usd is not None:
            self._enforceable_cap()
        return self

    def _enforceable_cap(self) -> None:
        """``max_cost_usd`` counts money, so every model an LLM configuration calls needs a price."""
        from mcbuild.compiler.spec.base import FieldError
        from mcbuild.llm.pricing import price_entry
        from mcbuild.runtime.agents.llm import CONFIGURATIONS

        if not any(self.agent_for(c) in CONFIGURATIONS for c in self.all_configurations()):
            return
        for model in self.models:
            try:
                table = self.llm_settings(model).price_table()
            except (OSError, ValueError) as exc:
                raise FieldError("max_cost_usd", f"cannot be enforced: the price table of model {model!r} cannot "
                                 f"be read ({exc})") from None
            if price_entry(table, model) is None:
                raise FieldError("max_cost_usd", f"cannot be enforced: model {model!r} has no price in its price "
                                 "table (give it one in a table named by its `prices` setting, or drop max_cost_usd)")

    # ----------------------------------------------------------------- derived
    @property
    def mirror_conditions(self) -> list[str]:
        return [c for c in self.conditions if c != VANILLA]

    def task_budgets(self) -> dict[str, int]:
        """Budget per task: catalog default < ``budget`` (all tasks) < ``budgets`` (per task)."""
        base = default_budgets()
        out = {}
        for t in self.tasks:
            b = base[t] if self.budget is None else self.budget
            out[t] = int(self.budgets.get(t, b))
        return out

    def biome_of(self, world: str) -> str:
        if world in self.biomes:
            return self.biomes[world]
        known = world_biomes()
        if world not in known:
            raise ValueError(f"world {world!r} is not in specs/worlds.yaml; name its biome under `biomes:`")
        return known[world]

    def report_checkpoints(self) -> list[int]:
        """Checkpoints for Table 5: configured ones, else half the smallest budget and each budget."""
        if self.checkpoints:
            return list(self.checkpoints)
        bs = sorted(set(self.task_budgets().values()))
        return sorted({max(1, bs[0] // 2), *bs})

    def llm_settings(self, model: str) -> ModelSettings:
        """The settings ``model`` is called with: the study's ``endpoint:``, then its own entry's."""
        return layered(self.endpoint, self.model_settings.get(model), {"model": model})

    def agent_for(self, configuration: str) -> str:
        """Agent implementation name for a configuration (identity unless mapped)."""
        return self.agents.get(configuration, configuration)

    def all_configurations(self) -> list[str]:
        return list(self.configurations) + list(self.disclosure.configurations)

    def to_json(self) -> dict:
        return self.model_dump(mode="json")


def load_config(path: str | Path, **overrides) -> StudyConfig:
    """Read a study YAML; ``name`` defaults to the file stem.  A bare name
    (``quick``) is looked up as ``studies/<name>.yaml``. Bad input is a one-line
    ``SpecError`` naming the file and the field."""
    p = Path(path)
    if not p.exists():
        for cand in (ROOT / p, STUDIES / p.name, STUDIES / f"{p.name}.yaml"):
            if cand.is_file():
                p = cand
                break
    if not p.exists():
        raise FileNotFoundError(f"study config {p} not found")
    from mcbuild.compiler.core.errors import SpecError
    from mcbuild.compiler.spec.base import read_yaml, validate

    data = read_yaml(p) or {}
    if not isinstance(data, dict):
        raise SpecError(str(p), "", "a study config must be a YAML mapping")
    data.setdefault("name", p.stem)
    data.update({k: v for k, v in overrides.items() if v is not None})
    config = validate(StudyConfig, data, str(p), functools.partial(as_written, data))
    check_agents(config, str(p))
    return config


def as_written(data: dict, loc: tuple) -> tuple:
    """The path of a problem as the file spells it: the settings of a ``models:`` entry written as a
    mapping are validated under ``model_settings.<name>``, and are shown as ``models[i]``."""
    if len(loc) >= 2 and loc[0] == "model_settings" and isinstance(data.get("models"), list):
        for i, entry in enumerate(data["models"]):
            if isinstance(entry, dict) and entry.get("name") == loc[1]:
                return ("models", i, *loc[2:])
    return loc


def check_agents(config: StudyConfig, file: str) -> None:
    """Every configuration (or its ``agents:`` mapping) names a registered agent, a
    ``package.module:factory`` or an entry point of ``mcbuild.agents`` that loads, and an agent from
    outside the package builds (once, with the study's base seed and first model, before any store
    exists); else a SpecError naming the field, the name and the cause."""
    from mcbuild.compiler.core.errors import SpecError
    from mcbuild.runtime.agents.registry import AGENTS, AgentError, create, offered, resolve

    fields = [(f"configurations[{i}]", c, False) for i, c in enumerate(config.configurations)]
    fields += [(f"disclosure.configurations[{i}]", c, True) for i, c in enumerate(config.disclosure.configurations)]
    built: set[tuple[str, bool]] = set()
    for field, configuration, disclosed in fields:
        if configuration in config.agents:
            field = f"agents.{configuration}"
        name = config.agent_for(configuration)
        try:
            resolve(name)
            if name not in AGENTS and (name, disclosed) not in built:     # trusted code of the user's
                create(name, **offered(name, seed=config.base_seed, model=config.models[0],
                                       **({"rules": ""} if disclosed else {})))
                built.add((name, disclosed))
        except AgentError as exc:
            raise SpecError(file, field, str(exc)) from None
