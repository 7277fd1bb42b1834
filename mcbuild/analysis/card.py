"""Results cards: one JSON file that says what a study ran on and what it found (``card.json``).

``mcbuild study report`` writes ``report/card.json``: the toolkit version, the plan digest, the
build the study ran on (its fingerprint and, when the build folder is that build, the worlds
manifest's hash, each pack's hash, each save's hash and each suite's version), the models'
settings as stored (adaptations included), per configuration and model (and per condition)
Score, SR and RIE with 95% intervals and n, and every valid episode's outcome, so that another
lab can check the numbers and ``mcbuild study compare`` can pair its episodes with theirs.

The card's format is the versioned JSON Schema ``card.schema.json`` beside this module
(``$id`` :data:`SCHEMA_ID`; docs/analysis.md). The card is made from the stored records alone
(no wall clock), so the same study and build give the same bytes.
"""
from __future__ import annotations

import hashlib
import json
from functools import lru_cache
from pathlib import Path
from typing import Any, Iterable, Sequence

from mcbuild import __version__
from mcbuild.compiler.core.canonical import atomic_write, compact, dumps
from mcbuild.compiler.core.owned import check_file
from mcbuild.compiler.core.paths import BUILD
from mcbuild.compiler.worlds.layout import VANILLA
from mcbuild.analysis.source import StudySource
from mcbuild.runtime.records import HIDDEN, EpisodeRecord, select
from mcbuild.runtime.study import metrics as M
from mcbuild.runtime.study.design.config import StudyConfig
from mcbuild.runtime.study.design.plan import build_plan, expected_map
from mcbuild.runtime.study.metrics import stats
from mcbuild.runtime.study.store.results import StoreError, build_fingerprint

__all__ = ["CARD_VERSION", "SCHEMA_ID", "CardError", "build_card", "write_card", "save_card", "read_card", "card_text",
           "card_schema", "EPISODE_COLUMNS"]

CARD_VERSION = 1
SCHEMA_ID = f"urn:mcbuild:card:{CARD_VERSION}"
CARD_NAME = "card.json"
#: How every card file begins (``card_text``: sorted keys, and ``$schema`` sorts first).
CARD_HEAD = ('{\n  "$schema": "' + SCHEMA_ID.rsplit(":", 1)[0] + ":").encode()
SCHEMA_FILE = Path(__file__).with_name("card.schema.json")
#: The columns of the card's ``episodes.rows``.
_ROWS = "__mcbuild_card_episode_rows__"          # where card_text puts the episode rows
EPISODE_COLUMNS = ("episode_id", "world", "condition", "task", "configuration", "model", "disclosure", "repetition",
                   "budget", "score", "success", "actions")


class CardError(ValueError):
    """A card file that cannot be read or does not follow the schema (one line naming the file)."""


@lru_cache(maxsize=1)
def card_schema() -> dict[str, Any]:
    """The card's JSON Schema."""
    return json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))


def _validate(card: dict[str, Any], where: str) -> None:
    import jsonschema

    errors = sorted(jsonschema.Draft202012Validator(card_schema()).iter_errors(card), key=lambda e: list(e.path))
    if errors:
        first = errors[0]
        field = ".".join(map(str, first.path)) or "(top level)"
        raise CardError(f"{where}: {field}: {first.message}"[:400])


def _sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def build_identity(build: Path, fingerprint: str, suites: Sequence[str]) -> dict[str, Any]:
    """What a study's build is: its fingerprint and, when ``build`` is that build (the same
    fingerprint), the hashes of its worlds manifest, of each pack, of each save (``world/condition``;
    ``world`` for the world's own files) and each suite's version."""
    out: dict[str, Any] = {"fingerprint": fingerprint, "verified": False}
    try:
        if build_fingerprint(build) != fingerprint:
            return out
        manifest = build / "worlds" / "manifest.json"
        data = json.loads(manifest.read_bytes())
    except (StoreError, OSError, ValueError):
        return out
    saves: dict[str, dict[str, str]] = {}
    for entry in data["worlds"].values():
        for path, digest in entry["files"].items():
            world, _, rest = path.partition("/")
            condition, _, inner = rest.partition("/")
            key, name = (f"{world}/{condition}", inner) if inner else (world, rest)     # a save, or the world's own files
            saves.setdefault(key, {})[name] = str(digest)
    packs = {p.parent.name: _sha256_file(p) for p in sorted(build.glob("m0*/datapack.zip"))}
    out.update(verified=True, worlds_manifest_sha256=_sha256_file(manifest), packs=packs,
               saves={k: hashlib.sha256(compact(v).encode()).hexdigest() for k, v in sorted(saves.items())},
               suites=[_suite(build, s, packs.get(s)) for s in suites])
    return out


def _suite(build: Path, suite: str, pack: str | None) -> dict[str, Any]:
    spec_file = build / suite / "spec.json"
    try:
        spec = json.loads(spec_file.read_bytes())
        spec_sha = _sha256_file(spec_file)
    except (OSError, ValueError):
        spec, spec_sha = {}, None
    return {"id": suite, "title": spec.get("title"), "schema_version": spec.get("schema_version"),
            "spec_sha256": spec_sha, "pack_sha256": pack}


def _estimate(value: float, lower: float | None, upper: float | None, n: int, method: str) -> dict[str, Any]:
    return {"value": value, "ci": None if lower is None else [lower, upper], "n": n, "method": method}


_NO_RIE = {"rie_sc": None, "rie_sr": None}


def _score_sr(records: Sequence[EpisodeRecord]) -> dict[str, Any]:
    """Mean Score with its normal interval (within 0..100) and SR with its Wilson interval, in percent."""
    if not records:
        return {"score": None, "sr": None}
    n = len(records)
    mean = stats.mean_interval([r.score for r in records])
    wins = sum(1 for r in records if r.success)
    lo, hi = stats.wilson_interval(wins, n)
    return {"score": _estimate(mean.value, max(0.0, mean.lower), min(100.0, mean.upper), n, "normal"),
            "sr": _estimate(100.0 * wins / n, 100.0 * lo, 100.0 * hi, n, "wilson")}


def _rie(records: Sequence[EpisodeRecord], by: tuple[str, ...], key: tuple) -> dict[str, Any]:
    """RIE_SC and RIE_SR of the ``key`` group of ``records`` grouped ``by`` (paired by comparison) with n
    comparisons, each +- the half-width of the paper's stratified 95% interval (model x task strata;
    no interval where a stratum has too few episodes)."""
    r = M.rie(records, by).get(key)
    if r is None:
        return dict(_NO_RIE)
    out = {}
    for name, value, interval, method in (
            ("rie_sc", r.rie_sc, M.rie_sc_interval(records, by).get(key), "stratified-normal"),
            ("rie_sr", r.rie_sr, M.rie_sr_interval(records, by).get(key), "stratified-binomial")):
        half = None if interval is None else interval.half_width
        out[name] = _estimate(value, None if half is None else value - half, None if half is None else value + half,
                              r.n_pairs, method)
    return out


def _results(records: list[EpisodeRecord], config: StudyConfig) -> list[dict[str, Any]]:
    """Per configuration and model, then per condition: Score, SR, RIE with intervals and n."""
    out = []
    configs = [(c, HIDDEN) for c in config.configurations] + [(c, "disclosed") for c in config.disclosure.configurations]
    for configuration, disclosure in configs:
        for model in config.models:
            own = select(records, configuration=configuration, model=model)
            mirror = [r for r in own if r.is_mirror]
            means = M.mean_actions_cost(mirror).get(()) if mirror else None
            conditions = config.conditions if disclosure == HIDDEN else config.mirror_conditions
            out.append({
                "configuration": configuration, "model": model, "disclosure": disclosure,
                "vanilla": _score_sr([r for r in own if r.is_vanilla]), "mirror": _score_sr(mirror),
                **_rie(own, ("configuration", "model"), (configuration, model)),
                "mirror_actions": None if means is None else means.actions,
                "mirror_cost_usd": None if means is None else means.cost_usd,
                "conditions": [{"condition": c, **_score_sr([r for r in own if r.condition == c]),
                                **(_rie(own, ("condition",), (c,)) if c != VANILLA else _NO_RIE)} for c in conditions],
            })
    return out


def _episodes(records: Iterable[EpisodeRecord]) -> dict[str, Any]:
    return {"columns": list(EPISODE_COLUMNS),
            "rows": [[getattr(r, c) if c != "success" else bool(r.success) for c in EPISODE_COLUMNS] for r in records]}


def _adaptations(meta: dict[str, str]) -> Any:
    raw = meta.get("adaptations")
    return json.loads(raw) if raw else {}


def build_card(study: str | Path, build: str | Path | None = None) -> dict[str, Any]:
    """The results card of the study at ``study`` (read-only), against the build folder ``build``."""
    with StudySource(study) as source:
        config_json = source.config()
        raw = source.records()
        meta = dict(source.meta)
        settings = dict(source.settings)
    config = StudyConfig.model_validate(config_json)
    plan = build_plan(config)
    valid, excluded = M.check_records(raw, expected_map(plan))
    missing = M.missing_episodes(valid, expected_map(plan))
    card = {
        "$schema": SCHEMA_ID,
        "card_version": CARD_VERSION,
        "toolkit": {"name": "mcbuild", "version": __version__, "minecraft": "1.19.0"},
        "study": {"name": config.name, "plan_digest": meta.get("plan_digest", ""),
                  "config_sha256": hashlib.sha256(compact(config_json).encode()).hexdigest(),
                  "backend": config.backend, "base_seed": config.base_seed, "repetitions": config.repetitions,
                  "conditions": list(config.conditions), "tasks": list(config.tasks), "worlds": list(config.worlds),
                  "configurations": list(config.all_configurations()), "models": list(config.models),
                  "planned": len(plan), "stored": len(raw), "valid": len(valid), "excluded": len(excluded),
                  "missing": len(missing)},
        "build": build_identity(Path(build) if build is not None else BUILD, meta.get("fingerprint", ""),
                                config.mirror_conditions),
        "models": {"settings": settings, "adaptations": _adaptations(meta)},
        "results": _results(valid, config),
        "episodes": _episodes(valid),
    }
    _validate(card, "the card made here")
    return card


def write_card(study: str | Path, out: str | Path, build: str | Path | None = None) -> Path:
    """Write the card of ``study`` as ``out`` (a folder gets ``card.json``); returns its path."""
    return save_card(build_card(study, build), out)


def save_card(card: dict[str, Any], out: str | Path) -> Path:
    """Write ``card`` as ``out`` (a folder gets ``card.json``), under a temporary name renamed when whole;
    a file there that is not a card is refused (``NotOurs``), never replaced."""
    target = Path(out)
    if target.suffix != ".json":
        target = target / CARD_NAME
    check_file(target, "report", CARD_HEAD)
    atomic_write(target, card_text(card).encode("utf-8"), tool="report")     # `study report` writes cards
    return target


def card_text(card: dict[str, Any]) -> str:
    """The card as canonical JSON (sorted keys, 2-space indent), each episode row on one line."""
    rows = card["episodes"]["rows"]
    text = dumps({**card, "episodes": {**card["episodes"], "rows": _ROWS}})
    lines = "[]" if not rows else "[\n" + ",\n".join("      " + compact(r) for r in rows) + "\n    ]"
    return text.replace(f'"{_ROWS}"', lines, 1)


def read_card(path: str | Path) -> dict[str, Any]:
    """A card file, checked against the schema; a card of a newer version is refused."""
    path = Path(path)
    try:
        card = json.loads(path.read_bytes())
    except (OSError, ValueError) as exc:
        raise CardError(f"{path}: not a readable card ({type(exc).__name__}: {exc})"[:300]) from None
    if not isinstance(card, dict):
        raise CardError(f"{path}: not a card (a JSON {type(card).__name__})")
    version = card.get("card_version")
    if isinstance(version, int) and version > CARD_VERSION:
        raise CardError(f"{path}: card version {version} is newer than this mcbuild reads ({CARD_VERSION}); "
                        "upgrade mcbuild")
    _validate(card, str(path))
    return card
