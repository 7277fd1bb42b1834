"""The local pool's lanes: each worker keeps to its own stretch of the (world-major) plan."""
from __future__ import annotations

from mcbuild.runtime.study.design.plan import PlanEntry
from mcbuild.runtime.study.run.attempt import AttemptResult, Fault, Status
from mcbuild.runtime.study.run.schedulers.local import LocalScheduler, Pool, lanes
from study_fakes import plan_entries


def _ids(lane) -> list[str]:
    return [entry.episode_id for entry, _ in lane]


def _numbered(n: int) -> list[PlanEntry]:
    return plan_entries(*(str(i) for i in range(n)))


def _pool(entries: list[PlanEntry], workers: int) -> Pool:
    pool = Pool(workers, lambda entry, done: None, lambda result: None, lambda eid, attempt, reason: True)
    pool.lanes = lanes(entries, workers)
    return pool


def test_lanes_are_consecutive_stretches_of_almost_equal_length():
    entries = _numbered(7)
    cut = lanes(entries, 3)
    assert [_ids(lane) for lane in cut] == [["0", "1"], ["2", "3"], ["4", "5", "6"]]
    assert all(done == 0 for lane in cut for _, done in lane)
    assert [len(lane) for lane in lanes(entries[:1], 2)] == [0, 1]


def test_a_worker_takes_reruns_first_then_its_lane_then_the_tail_of_the_longest():
    pool = _pool(_numbered(6), 2)
    pool.queue.append((plan_entries("again")[0], 1))
    order = []
    for lane in (0, 0, 0, 0, 0, 1):
        task, _ = pool.next_task(lane)
        order.append(task[0].episode_id)
    assert order == ["again", "0", "1", "2", "5", "3"]
    assert not pool.queue and _ids(pool.lanes[1]) == ["4"]


def test_a_task_that_cannot_be_sent_goes_back_where_it_came_from():
    pool = _pool(_numbered(4), 2)
    task, back = pool.next_task(1)
    back(task)
    assert _ids(pool.lanes[1]) == ["2", "3"]
    pool.lanes[0].clear()
    task, back = pool.next_task(0)
    assert task[0].episode_id == "3"
    back(task)
    assert _ids(pool.lanes[1]) == ["2", "3"]


def _echo(entry, done: int) -> AttemptResult:
    """An attempt that reports what it was given: the entry's type and fields."""
    return AttemptResult(Status.OK, entry.episode_id, done + 1, (Fault(1, "infrastructure", type(entry).__name__),),
                         row={"world": entry.world})


def test_entries_and_results_cross_the_forked_workers_as_themselves():
    got: list[AttemptResult] = []
    LocalScheduler(2).run(_numbered(4), _echo, got.append, lambda eid, attempt, reason: False)
    assert sorted(r.episode_id for r in got) == ["0", "1", "2", "3"]
    assert all(type(r) is AttemptResult and r.status is Status.OK and r.attempts == 1 for r in got)
    assert {r.faults for r in got} == {(Fault(1, "infrastructure", "PlanEntry"),)}      # the entry arrived typed
    assert all(r.row == {"world": "plains-1"} for r in got)
