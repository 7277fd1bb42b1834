"""``mcbuild study run --dry-run``: what each model of a study would be sent first, and why, without
sending anything.

For each model an LLM configuration calls: the provider profile that shapes its requests (its row of
``mcbuild/llm/profiles.yaml``), the URL and the key variable (set or not), every way its requests
differ from its settings (the profile's adjustments; an endpoint's own refusals show only once a run
has met them), and the exact body of its first request: the first planned LLM episode's first model
call, rendered on the simulator (``executor.first_request``), ``response_format`` included.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

from mcbuild.llm.client import planned_request
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import build_plan
from mcbuild.runtime.study.run.executor import first_request


def dry_run(config: StudyConfig, build_root: Path) -> list[str]:
    """The lines ``--dry-run`` prints: per model, its profile, endpoint, adjustments and first request."""
    from mcbuild.runtime.agents.llm import CONFIGURATIONS

    out: list[str] = []
    seen: set[str] = set()
    for entry in build_plan(config):
        if entry.model in seen or (entry.agent or entry.configuration) not in CONFIGURATIONS:
            continue
        seen.add(entry.model)
        settings = config.llm_settings(entry.model)
        messages, schema = first_request(entry, build_root)
        profile, url, body, adjustments = planned_request(settings, messages, schema)
        key_env = settings.api_key_env or profile.key_env or "OPENAI_API_KEY"
        key = "set" if os.environ.get(key_env, "").strip() else ("not set" if profile.key == "required" else
                                                                  "not set, not needed")
        out += [f"model {entry.model!r}: provider profile {profile.name} ({profile.title})",
                f"  POST {url}  key ${key_env} ({key})"]
        out += [f"  differs from its settings: {a.line()}" for a in adjustments]
        out += [f"  first request ({entry.configuration}, {entry.task}, {entry.world} {entry.condition}, "
                f"episode {entry.episode_id}):", json.dumps(body, indent=1, ensure_ascii=False)]
    return out or ["no LLM configuration: no model is called"]
