"""The behaviour hash of a study's stored episodes: one 16-hex-digit digest to compare two runs by.

    .venv/bin/python bench/behaviour_hash.py STORE_DIR    # a study folder or its results.sqlite

Covers every stored episode's identity and behaviour: id, score, success, actions, end reason,
encounters, evaluator events and the sequence of (action, result) pairs of its trajectory. Episodes
are taken in id order, so the hash does not depend on run order, workers or timing; wall time,
attempts and the finishing timestamp are left out. A refactor that must not change what the
agents did leaves it unchanged. Prints the hash and the number of episodes; exit 2 when the store
cannot be read.
"""
from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import harness  # also puts this checkout on the path
from mcbuild.compiler.core.canonical import compact
from mcbuild.runtime.study.store.results import Store, StoreError

FIELDS = ("episode_id", "score", "success", "actions", "end_reason", "encounters")


def behaviour_hash(store_dir: Path) -> tuple[str, int]:
    """(hash, episodes) of the store at ``store_dir``."""
    digest = hashlib.sha256()
    with Store.open(store_dir, create=False) as store:
        records = {r["episode_id"]: r for r in store.records()}
        n = 0
        for eid, trajectory, events in store.iter_trajectories():     # in episode-id order
            steps = [json.loads(line) for line in trajectory.splitlines() if line.strip()]
            item = {f: records[eid][f] for f in FIELDS}
            item["events"] = json.loads(events or "[]")
            item["steps"] = [[s["action"], s["result"]] for s in steps if "action" in s]
            digest.update((compact(item) + "\n").encode())
            n += 1
    return digest.hexdigest()[:16], n


def main(argv: list[str]) -> int:
    ap = harness.parser(__doc__, baseline=False)
    ap.add_argument("store", type=Path, help="a study folder or its results.sqlite")
    store = ap.parse_args(argv).store
    try:
        value, n = behaviour_hash(store)
    except StoreError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"{value}  ({n} episodes, {store})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
