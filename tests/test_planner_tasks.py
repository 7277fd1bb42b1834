"""The scripted planners take their route from the task spec: every task of ``specs/tasks/`` whose
milestones the tracer can plan is won in a Vanilla world, custom tasks included."""
from __future__ import annotations

import pytest

from mcbuild.compiler.rules.tasks import POSITIONS
from mcbuild.compiler.spec.task import tasks
from mcbuild.runtime.agents.scripted.planners import AdaptivePlanner, VanillaPlanner
from mcbuild.runtime.episode.loop import run
from mcbuild.runtime.episode.opening import open_episode

PLANNED = sorted(t.id for t in tasks().values()
                 if not any(c.type in POSITIONS for m in t.milestones for c in m.checkers))


def test_every_task_but_the_positional_one_is_planned():
    """A planner can aim at items, blocks, mobs and placements, but no skill walks to a position."""
    assert set(tasks()) - set(PLANNED) == {"camp"} and "iron_sword" in PLANNED


@pytest.mark.parametrize("task", PLANNED)
def test_the_adaptive_planner_wins_every_planned_task_in_vanilla(world_build, built_world_ids, task):
    with open_episode(built_world_ids[0], "vanilla", task, build=world_build) as ep:
        run(ep, AdaptivePlanner())
        assert ep.success, (task, ep.score)


@pytest.mark.parametrize("agent", [VanillaPlanner, AdaptivePlanner])
def test_camp_is_played_up_to_its_positions(world_build, built_world_ids, agent):
    """Camp's hunt, placed table and cleared herd come from its spec's checkers (no milestone of
    it has an advancement); its position milestones are out of reach of a plan."""
    with open_episode(built_world_ids[0], "vanilla", "camp", build=world_build) as ep:
        run(ep, agent())
        assert {"hunt", "table_at_camp", "clear_cows"} <= set(ep.milestones_met)
        assert ep.used > 0


def test_task_check_names_the_milestones_no_plan_reaches(world_build, built_world_ids):
    from mcbuild.compiler.spec.task import TASKS_DIR
    from mcbuild.compiler.worlds.taskcheck import check_task

    assert check_task(TASKS_DIR / "camp.yaml", world_build, ["vanilla"], built_world_ids[:1]).unplanned == ["scout", "back_home"]
    assert check_task(TASKS_DIR / "iron_sword.yaml", world_build, ["vanilla"], built_world_ids[:1]).unplanned == []
