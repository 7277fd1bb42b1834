"""IRR and RL: behaviour after rule encounters (Section 3.6).

Both come from the :class:`mcbuild.runtime.records.Encounter` records of Mirror
episodes (see there for the field layout).  Pooled over suites, both are the
equal-weight mean of the per-suite values (Section 4.1).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from mcbuild.runtime.records import Encounter, EpisodeRecord

from ._grouping import key_of, mean, norm_by


@dataclass(frozen=True)
class Behavior:
    """Behavioural diagnostics of a cell (Section 3.6).

    ``irr`` in percent, ``rl`` in semantic actions; ``None`` when undefined
    (no followed / no recovered encounters).  Counts are summed over suites.
    """

    n_encounters: int
    n_followed: int
    n_repeated: int
    n_recovered: int
    irr: float | None
    rl: float | None


def _behavior_cell(encs: Sequence[Encounter], min_encounters: int) -> Behavior:
    followed = [e for e in encs if e.followed]
    recovered = [e.latency for e in encs if e.latency is not None]
    n_rep = sum(1 for e in followed if e.repeated)
    irr = 100.0 * n_rep / len(followed) if len(followed) >= max(min_encounters, 1) else None
    rl = mean(recovered) if len(recovered) >= max(min_encounters, 1) else None
    return Behavior(len(encs), len(followed), n_rep, len(recovered), irr, rl)


def behavior(
    records: Iterable[EpisodeRecord],
    by: str | Sequence[str] = (),
    *,
    min_encounters: int = 1,
) -> dict[tuple, Behavior]:
    """IRR and RL per group of Mirror episodes (Vanilla episodes are skipped).

    Per suite: ``IRR = #{next_signature == signature} / #{next_signature is not
    None}`` and ``RL = mean(recovery_index - action_index)`` over encounters
    with a recovery.  When ``by`` does not contain ``condition``, each group's
    IRR and RL are the equal-weight means of its per-suite values (suites
    where a value is undefined are left out).  A per-suite value needs at least
    ``min_encounters`` contributing encounters.
    """
    by_t = norm_by(by)
    per: dict[tuple, dict[str, list[Encounter]]] = {}
    for r in records:
        if r.is_vanilla:
            continue
        per.setdefault(key_of(r, by_t), {}).setdefault(r.condition, []).extend(r.encounters)
    out: dict[tuple, Behavior] = {}
    for g, suites in per.items():
        cells = [_behavior_cell(encs, min_encounters) for encs in suites.values()]
        irrs = [c.irr for c in cells if c.irr is not None]
        rls = [c.rl for c in cells if c.rl is not None]
        out[g] = Behavior(
            n_encounters=sum(c.n_encounters for c in cells),
            n_followed=sum(c.n_followed for c in cells),
            n_repeated=sum(c.n_repeated for c in cells),
            n_recovered=sum(c.n_recovered for c in cells),
            irr=mean(irrs) if irrs else None,
            rl=mean(rls) if rls else None,
        )
    return out
