"""The planner's transition model: copies, edits, hidden steps and the shared cost table."""
from __future__ import annotations

from mcbuild.compiler.planning.model import PLACED, Step, TransitionModel
from mcbuild.compiler.planning.search import plan

LOG, PLANKS, STICK, TABLE, PICK = ("minecraft:oak_log", "minecraft:oak_planks", "minecraft:stick",
                                   "minecraft:crafting_table", "minecraft:wooden_pickaxe")


def model() -> TransitionModel:
    def one(item: str) -> frozenset[str]:
        return frozenset({item})

    steps = [
        Step("mine:log", "mine", "mine:log", {"block": LOG}, (), (), {LOG: 1.0}, 4),
        Step("attack:chest_mob", "attack", "attack:x", {"target": "x"}, (), (), {PLANKS: 0.5}, 4),
        Step("craft:planks", "craft_grid", "craft:planks", {"station": "inventory"}, ((one(LOG), 1),), (),
             {PLANKS: 4.0}, 1, 0, ((one(LOG),),)),
        Step("craft:stick", "craft_grid", "craft:stick", {"station": "inventory"}, ((one(PLANKS), 2),), (),
             {STICK: 4.0}, 1, 0, ((one(PLANKS),), (one(PLANKS),))),
        Step("craft:table", "craft_grid", "craft:table", {"station": "inventory"}, ((one(PLANKS), 4),), (),
             {TABLE: 1.0}, 1, 0, ((one(PLANKS), one(PLANKS)), (one(PLANKS), one(PLANKS)))),
        Step("craft:pick", "craft_grid", "craft:pick", {"station": "crafting_table"},
             ((one(PLANKS), 3), (one(STICK), 2)), (frozenset({PLACED + TABLE}),), {PICK: 1.0}, 1, 0,
             ((one(PLANKS), one(PLANKS), one(PLANKS)), (None, one(STICK), None), (None, one(STICK), None))),
    ]
    return TransitionModel(steps, {}, 200)


def fresh_costs(m: TransitionModel) -> dict[str, float]:
    """Costs of a brand-new model with exactly the steps ``m`` plans with."""
    return TransitionModel(m.active(), m.fuels, m.fuel_per_item).costs()


def test_costs_follow_every_edit_and_never_come_from_a_stale_table():
    base = model()
    a = base.copy()
    assert a.costs() == fresh_costs(a)
    a.observe("craft:planks", {PLANKS: 2})                 # a Mirror-style halved yield
    assert a.costs() == fresh_costs(a) != base.costs()
    a.hide({"mine:log"})
    assert LOG not in a.costs() and a.costs() == fresh_costs(a)
    a.hide(())
    a.observe("craft:planks", {PLANKS: 4})                 # back to the original: the first table again
    assert a.costs() == base.costs()
    b = base.copy()
    b.observe("craft:planks", {PLANKS: 2})
    assert b.costs() is not base.costs() and b.costs() == fresh_costs(b)


def test_copies_are_independent_and_added_steps_count_as_edits():
    base = model()
    a, b = base.copy(), base.copy()
    a.observe("mine:log", {})
    assert base.steps["mine:log"].outputs == {LOG: 1.0} and b.steps["mine:log"].outputs == {LOG: 1.0}
    probe = Step("craft_grid:probe", "craft_grid", "craft_grid:probe", {"station": "inventory"},
                 ((frozenset({STICK}), 1),), (), {PICK: 1.0}, 1, 0, ((frozenset({STICK}),),))
    b.add(probe)
    assert "craft_grid:probe" not in base.steps and b.costs() == fresh_costs(b) != base.costs()
    assert [a.step_key for a in plan(b, {STICK: 1.0}, (), frozenset({PICK}))] == ["craft_grid:probe"]
    assert plan(base, {STICK: 1.0}, (), frozenset({PICK})) == plan(model(), {STICK: 1.0}, (), frozenset({PICK}))
    assert "craft_grid:probe" not in {a.step_key for a in plan(base, {STICK: 1.0}, (), frozenset({PICK}))}


def test_hidden_steps_are_left_out_of_plans_but_keep_their_outputs():
    m = model()
    m.hide({"mine:log"})
    assert m.steps["mine:log"].outputs == {LOG: 1.0}
    route = plan(m, {}, (), frozenset({PICK}))
    assert route and all(a.step_key != "mine:log" for a in route)
    assert route[0].step_key == "attack:chest_mob"
    m.hide({"mine:log", "attack:chest_mob"})
    assert plan(m, {}, (), frozenset({PICK})) is None
    m.hide(())
    assert plan(m, {}, (), frozenset({PICK}))[0].step_key == "mine:log"


def test_plans_are_memoized_per_state_and_handed_out_as_new_lists():
    m = model()
    first = plan(m, {}, (), frozenset({PICK}))
    first.clear()
    again = plan(m, {}, (), frozenset({PICK}))
    assert again and again == plan(model(), {}, (), frozenset({PICK}))
    assert len(plan(m, {LOG: 3.0}, (), frozenset({PICK}))) < len(again)      # another state, another plan


def test_recipes_without_a_skill_are_on_no_route():
    """crafting_special_*, campfire_cooking, stonecutting and smithing have no skill: enumerated from the
    game's data, none of their recipes is a step of the vanilla model, even with every block minable,
    and what only they make (the netherite pickaxe, say) is unreachable."""
    from mcbuild.compiler.planning.model import model_from_rulebook
    from mcbuild.compiler.rules.crafting import CRAFTING_TYPES
    from mcbuild.compiler.rules.rulebook import STATION_RECIPE_TYPES, vanilla
    from mcbuild.compiler.rules.tasks import world_resources

    rb = vanilla()
    skilled = {*CRAFTING_TYPES, *STATION_RECIPE_TYPES.values()}
    unskilled = {rid: r for rid, r in rb.recipes.items() if r["type"] not in skilled}
    types = {r["type"] for r in unskilled.values()}
    assert {"minecraft:campfire_cooking", "minecraft:stonecutting", "minecraft:smithing"} <= types
    assert {t for t in types if not t.startswith("minecraft:crafting_special_")} == {
        "minecraft:campfire_cooking", "minecraft:stonecutting", "minecraft:smithing"}
    assert len([t for t in types if t.startswith("minecraft:crafting_special_")]) >= 10
    blocks = sorted({b for b in rb.catalog.blocks if rb.block_loot(b) is not None} | set(world_resources()["blocks"]))
    model = model_from_rulebook(rb, blocks, world_resources()["entities"])
    assert not {f"craft_grid:{rid}" for rid in unskilled} & set(model.steps)
    made = {i for s in model.steps.values() for i in s.outputs}
    only_unskilled = {(r.get("result") or {}).get("item") if isinstance(r.get("result"), dict) else r.get("result")
                      for r in unskilled.values()} - made - {None}
    assert "minecraft:netherite_pickaxe" in only_unskilled
    assert not only_unskilled & set(model.costs())


def test_a_twin_consumes_no_other_inputs_and_yields_the_vanilla_outputs():
    """Bypass twins (mcbuild.compiler.planning.bypass): the same skill, inputs drawn from the changed step's, at
    least its vanilla yield; a recipe from other inputs is no twin, nor one that yields less."""
    from mcbuild.compiler.planning.bypass import twins

    vanilla = model()
    suite = model()
    suite.observe("craft:planks", {PLANKS: 2.0})
    suite.add(Step("craft:planks_again", "craft_grid", "craft:planks_again", {"station": "inventory"},
                   ((frozenset({LOG}), 1),), (), {PLANKS: 4.0}, 1, 0, ((frozenset({LOG}),),)))
    suite.add(Step("craft:planks_few", "craft_grid", "craft:planks_few", {"station": "inventory"},
                   ((frozenset({LOG}), 1),), (), {PLANKS: 3.0}, 1, 0, ((frozenset({LOG}),),)))
    suite.add(Step("craft:planks_sticks", "craft_grid", "craft:planks_sticks", {"station": "inventory"},
                   ((frozenset({STICK}), 1),), (), {PLANKS: 4.0}, 1, 0, ((frozenset({STICK}),),)))
    assert twins(vanilla, suite, {"craft:planks"}) == {"craft:planks": ["craft:planks_again"]}
    assert twins(vanilla, suite, {"craft:planks", "craft:planks_again"}) == {}


def test_a_step_rebuilt_with_other_inputs_is_wired_anew():
    base = model()
    a = base.copy()
    a.add(Step("craft:stick", "craft_grid", "craft:stick", {"station": "inventory"}, ((frozenset({TABLE}), 1),), (),
               {STICK: 4.0}, 1, 0, ((frozenset({TABLE}),),)))        # sticks from a crafting table, made later
    assert a.costs() == fresh_costs(a) != base.costs()
    assert a.costs()[STICK] == (1 + a.costs()[TABLE]) / 4
