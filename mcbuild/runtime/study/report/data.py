"""A study opened for reporting: its config, plan size and the records that pass the plan check."""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from mcbuild.runtime.records import EpisodeRecord
from mcbuild.runtime.study import metrics as M
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import build_plan, expected_map
from mcbuild.runtime.study.store.results import COST_STOP, Store

#: Per-episode store columns the report and the viewer use beside the record.
INFO_FIELDS = ("end_reason", "attempts", "tokens_in", "tokens_out", "seed", "agent")

#: Suffixes that name a disclosed configuration after its hidden one (``react_rules`` -> ``react``).
_DISCLOSED_SUFFIXES = ("_rules", "-rules", "_disclosed")


@dataclass
class StudyData:
    """A study folder's config and plan size, its valid records, exclusions, missing ids and faults."""

    path: Path
    config: StudyConfig
    plan_size: int
    records: list[EpisodeRecord]
    excluded: list[M.Exclusion]
    missing: list[str]
    faults: list[dict]
    store_path: Path
    meta: dict = field(default_factory=dict)
    info: dict[str, dict] = field(default_factory=dict)

    def end_reason(self, episode_id: str) -> str:
        """Why an episode ended (``final_milestone``, ``budget_exhausted``, ``no_action``, ...)."""
        reason = str(self.info.get(episode_id, {}).get("end_reason") or "unknown")
        return reason.split(":", 1)[0]

    @property
    def cost_stop(self) -> dict | None:
        """How the latest run stopped at ``max_cost_usd`` (spent_usd, limit_usd, stored, planned), or None."""
        raw = self.meta.get(COST_STOP)
        return json.loads(raw) if raw else None

    @property
    def hidden_configs(self) -> list[str]:
        return list(self.config.configurations)

    @property
    def disclosed_configs(self) -> list[str]:
        return list(self.config.disclosure.configurations)

    @property
    def configs(self) -> list[str]:
        """Every configuration, hidden ones first."""
        return self.hidden_configs + self.disclosed_configs

    @property
    def models(self) -> list[str]:
        return list(self.config.models)

    @property
    def suites(self) -> list[str]:
        return list(self.config.mirror_conditions)

    @property
    def disclosure_pairs(self) -> list[tuple[str, str]]:
        """(hidden configuration, disclosed configuration) pairs: ``react_rules`` -> ``react``."""
        out = []
        for dc in self.disclosed_configs:
            for suffix in _DISCLOSED_SUFFIXES:
                if dc.endswith(suffix) and dc[: -len(suffix)] in self.hidden_configs:
                    out.append((dc[: -len(suffix)], dc))
                    break
        return out


def load_study(path: str | Path) -> StudyData:
    """Open a study folder (or its results.sqlite), check records against the plan."""
    path = Path(path)
    store = Store.read_only(path)
    try:
        cfg_json = store.config_json()
        if cfg_json is None:
            raise ValueError(f"{store.path} has no study config; was it written by `mcbuild study run`?")
        config = StudyConfig.model_validate(cfg_json)
        plan = build_plan(config)
        expected = expected_map(plan)
        raw = store.records()
        info = {str(d["episode_id"]): {f: d.get(f) for f in INFO_FIELDS} for d in raw}
        valid, excluded = M.check_records(raw, expected)
        return StudyData(
            path=store.path.parent, config=config, plan_size=len(plan), records=valid, excluded=excluded,
            missing=M.missing_episodes(valid, expected), faults=store.faults(), store_path=store.path, meta=store.meta(),
            info=info,
        )
    finally:
        store.close()
