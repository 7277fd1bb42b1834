'use strict'
/**
 * Layer 2: the bridge (a real child process, NDJSON) driving mineflayer against a scripted
 * minecraft-protocol server. The server decides every outcome; the bridge must report it.
 */
const { describe, it } = require('node:test')
const assert = require('node:assert')
const { startBridge } = require('./helpers/bridge')
const { startServer, item } = require('./helpers/scripted_server')

async function session (script, t) {
  const srv = startServer(script)
  const port = await srv.ready
  const bridge = startBridge()
  t.after(async () => { await bridge.close(); await srv.close() })
  const spawned = await bridge.request('connect', { host: '127.0.0.1', port, username: 'wire', spawn_timeout_ms: 30000, markers: ['minecraft:structure_void'] }, 35000)
  return { srv, bridge, spawned }
}

const names = (cells) => cells.map((c) => (c ? c.name : null))

async function waitUntil (cond, timeoutMs = 5000) {
  const start = Date.now()
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time')
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}

// every case has its own server, port and bridge process: run a few at a time
describe('bridge against a scripted 1.19 server', { concurrency: 3 }, () => {
  it('craft_grid in the 2x2 grid reports the result slot the server set (not vanilla\'s)', async (t) => {
    const seen = []
    const { bridge, srv } = await session({
      inventory: { 36: item('oak_log', 3) },
      // non-vanilla: one log makes 2 planks (vanilla: 4)
      craftResult: (cells) => { seen.push(names(cells)); return cells[0] && cells[0].name === 'oak_log' && cells.slice(1).every((c) => !c) ? item('oak_planks', 2) : null }
    }, t)
    const res = await bridge.request('craft_grid', { station: 'inventory', grid: [['minecraft:oak_log']] })
    assert.deepStrictEqual(res.result_item, 'minecraft:oak_planks')
    assert.strictEqual(res.result_count, 2)
    assert.deepStrictEqual(res.gained, { 'minecraft:oak_planks': 2 })
    assert.deepStrictEqual(res.lost, { 'minecraft:oak_log': 1 })
    assert.deepStrictEqual(seen[0], ['oak_log', null, null, null]) // exactly one item in the first cell
    const clicks = srv.log.filter((p) => p.name === 'window_click')
    assert.ok(clicks.some((c) => c.data.slot === 0 && c.data.mode === 1), 'result was shift-clicked out')
    const state = await bridge.request('state')
    assert.deepStrictEqual(state.inventory, { 'minecraft:oak_log': 2, 'minecraft:oak_planks': 2 })
    assert.deepStrictEqual(bridge.stray, [])
  })

  it('craft_grid on a crafting table places one item per cell of a 3x3 grid', async (t) => {
    const seen = []
    const { bridge } = await session({
      inventory: { 36: item('oak_planks', 10), 37: item('stick', 4) },
      blocks: [['crafting_table', [1, 65, 0]]],
      craftResult: (cells) => { seen.push(names(cells)); return cells.filter(Boolean).length === 5 ? item('wooden_pickaxe', 1) : null }
    }, t)
    const grid = [['minecraft:oak_planks', 'minecraft:oak_planks', 'minecraft:oak_planks'],
      [null, 'minecraft:stick', null], [null, 'minecraft:stick', null]]
    const res = await bridge.request('craft_grid', { station: 'crafting_table', grid })
    assert.strictEqual(res.result_item, 'minecraft:wooden_pickaxe')
    assert.deepStrictEqual(res.gained, { 'minecraft:wooden_pickaxe': 1 })
    assert.deepStrictEqual(res.lost, { 'minecraft:oak_planks': 3, 'minecraft:stick': 2 })
    assert.deepStrictEqual(seen.at(-2), ['oak_planks', 'oak_planks', 'oak_planks', null, 'stick', null, null, 'stick', null])
  })

  it('craft_grid reports no_result within its timeout when the server fills nothing', async (t) => {
    const { bridge } = await session({ inventory: { 36: item('dirt', 4) }, craftResult: () => undefined }, t)
    const start = Date.now()
    const res = await bridge.call('craft_grid', { station: 'inventory', grid: [['minecraft:dirt', 'minecraft:dirt']], result_timeout_ms: 800 }, 10000)
    assert.strictEqual(res.ok, false)
    assert.strictEqual(res.error.code, 'no_result')
    assert.match(res.error.message, /set no result within 800 ms/)
    assert.deepStrictEqual(res.error.details.lost, {})
    assert.ok(Date.now() - start < 4000)
    const state = await bridge.request('state')
    assert.deepStrictEqual(state.inventory, { 'minecraft:dirt': 4 }) // the grid was given back
  })

  it('craft_grid: an empty result slot from the server is no_result; missing items are refused', async (t) => {
    const { bridge } = await session({ inventory: { 36: item('dirt', 1) }, craftResult: () => null }, t)
    let res = await bridge.call('craft_grid', { station: 'inventory', grid: [['minecraft:dirt']] })
    assert.strictEqual(res.error.code, 'no_result')
    res = await bridge.call('craft_grid', { station: 'inventory', grid: [['minecraft:dirt', 'minecraft:dirt']] })
    assert.strictEqual(res.error.code, 'missing_item')
    assert.deepStrictEqual(res.error.details, { missing: { 'minecraft:dirt': 1 } })
    res = await bridge.call('craft_grid', { station: 'crafting_table', grid: [['minecraft:dirt']] })
    assert.strictEqual(res.error.code, 'needs_table')
  })

  it('advancements packets -> the done set (AND of ORs), events on change, recipes hidden', async (t) => {
    const adv = (key, requirements) => ({ key, value: { criteria: requirements.flat().map((k) => ({ key: k })), requirements } })
    const progress = (key, got) => ({ key, value: got.map(([c, date]) => ({ criterionIdentifier: c, criterionProgress: date === null ? undefined : [0, date] })) })
    let client
    const { bridge } = await session({ onJoin: (c) => { client = c } }, t)
    client.write('advancements', {
      reset: true,
      advancementMapping: [
        adv('minecraft:story/smelt_iron', [['iron']]),
        adv('minecraft:story/obtain_armor', [['helmet', 'chestplate', 'leggings', 'boots']]),
        adv('mcbuild:two_groups', [['a', 'b'], ['c']]),
        adv('minecraft:recipes/misc/iron_nugget', [['has_iron']])
      ],
      identifiers: [],
      progressMapping: [
        progress('minecraft:story/smelt_iron', [['iron', 1000]]),
        progress('minecraft:story/obtain_armor', [['helmet', null], ['boots', null]]),
        progress('mcbuild:two_groups', [['a', 5], ['c', null]]),
        progress('minecraft:recipes/misc/iron_nugget', [['has_iron', 7]])
      ]
    })
    await waitUntil(() => bridge.events.some((e) => e.event === 'advancements'))
    assert.deepStrictEqual((await bridge.request('advancements')).done, ['minecraft:story/smelt_iron'])
    client.write('advancements', {
      reset: false,
      advancementMapping: [],
      identifiers: [],
      progressMapping: [progress('mcbuild:two_groups', [['a', 5], ['c', 9]]), progress('minecraft:story/obtain_armor', [['boots', 11]])]
    })
    await waitUntil(() => bridge.events.filter((e) => e.event === 'advancements').length === 2)
    const last = bridge.events.filter((e) => e.event === 'advancements').at(-1)
    assert.deepStrictEqual(last.added, ['mcbuild:two_groups', 'minecraft:story/obtain_armor'])
    assert.deepStrictEqual((await bridge.request('advancements')).done,
      ['mcbuild:two_groups', 'minecraft:story/obtain_armor', 'minecraft:story/smelt_iron'])
    // removal of an advancement takes it out of the done set
    client.write('advancements', { reset: false, advancementMapping: [], identifiers: ['mcbuild:two_groups'], progressMapping: [] })
    await waitUntil(() => bridge.events.filter((e) => e.event === 'advancements').length === 3)
    assert.deepStrictEqual((await bridge.request('advancements')).done, ['minecraft:story/obtain_armor', 'minecraft:story/smelt_iron'])
    // no chat ever reaches the protocol stream
    client.write('system_chat', { content: JSON.stringify({ text: 'wire has made the advancement [Acquire Hardware]' }), type: 1 })
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.ok(!bridge.events.some((e) => JSON.stringify(e).includes('Acquire Hardware')))
  })


  it('smelt through the furnace window: inputs and fuel in, outputs taken as the server makes them', async (t) => {
    const { bridge, srv } = await session({
      inventory: { 36: item('raw_iron', 5), 37: item('coal', 8) },
      blocks: [['furnace', [1, 65, 0]]],
      smelt: (input) => (input.name === 'raw_iron' ? item('iron_ingot', 1) : null)
    }, t)
    const res = await bridge.request('smelt', { station: 'furnace', input: 'minecraft:raw_iron', count: 3, fuel: [['minecraft:coal', 3]] })
    assert.strictEqual(res.cooked, 3)
    assert.deepStrictEqual(res.gained, { 'minecraft:iron_ingot': 3 })
    assert.deepStrictEqual(res.lost, { 'minecraft:coal': 3, 'minecraft:raw_iron': 3 })
    const clicks = srv.log.filter((p) => p.name === 'window_click' && p.data.windowId === 7)
    assert.strictEqual(clicks.filter((c) => c.data.slot === 0 && c.data.mouseButton === 1).length, 3) // one input per right-click
    assert.ok(clicks.some((c) => c.data.slot === 2 && c.data.mode === 1))
    assert.deepStrictEqual((await bridge.request('state')).inventory,
      { 'minecraft:coal': 5, 'minecraft:iron_ingot': 3, 'minecraft:raw_iron': 2 })
  })

  it('smelt with fuel of two kinds: the next kind goes in when the server burnt the last of the first', async (t) => {
    const { bridge, srv } = await session({
      inventory: { 36: item('raw_iron', 3), 37: item('coal', 1), 38: item('oak_planks', 4) },
      blocks: [['furnace', [1, 65, 0]]],
      smelt: (input) => (input.name === 'raw_iron' ? item('iron_ingot', 1) : null) // one fuel item per output
    }, t)
    const res = await bridge.request('smelt', { station: 'furnace', input: 'minecraft:raw_iron', count: 3, fuel: [['minecraft:coal', 1], ['minecraft:oak_planks', 2]] })
    assert.strictEqual(res.cooked, 3)
    assert.deepStrictEqual(res.gained, { 'minecraft:iron_ingot': 3 })
    assert.deepStrictEqual(res.lost, { 'minecraft:coal': 1, 'minecraft:oak_planks': 2, 'minecraft:raw_iron': 3 })
    const fuelClicks = srv.log.filter((p) => p.name === 'window_click' && p.data.windowId === 7 && p.data.slot === 1 && p.data.mouseButton === 1)
    assert.strictEqual(fuelClicks.length, 3)
  })

  it('smelt reports the settled outcome of a pack conversion, never the marker item', async (t) => {
    const { bridge } = await session({
      inventory: { 36: item('raw_iron', 1), 37: item('coal', 1) },
      blocks: [['furnace', [1, 65, 0]]],
      smelt: () => item('structure_void', 1),
      convert: { from: 'structure_void', to: { name: 'iron_nugget', count: 3 } }
    }, t)
    const res = await bridge.request('smelt', { station: 'furnace', input: 'minecraft:raw_iron', count: 1, fuel: [['minecraft:coal', 1]] })
    assert.deepStrictEqual(res.gained, { 'minecraft:iron_nugget': 3 })
    assert.ok(!JSON.stringify(res).includes('structure_void'))
  })

  it('smelt: a station that never cooks the input is not_smeltable and gives everything back', async (t) => {
    const { bridge } = await session({
      inventory: { 36: item('dirt', 1), 37: item('coal', 1) },
      blocks: [['furnace', [1, 65, 0]]],
      smelt: () => null
    }, t)
    const res = await bridge.call('smelt', { station: 'furnace', input: 'minecraft:dirt', count: 1, fuel: [['minecraft:coal', 1]], stall_ms: 800 })
    assert.strictEqual(res.error.code, 'not_smeltable')
    assert.deepStrictEqual((await bridge.request('state')).inventory, { 'minecraft:coal': 1, 'minecraft:dirt': 1 })
    const wrong = await bridge.call('smelt', { station: 'smoker', input: 'minecraft:dirt', count: 1, fuel: [['minecraft:coal', 1]] })
    assert.strictEqual(wrong.error.code, 'needs_station')
  })

  it('enchant through the enchanting table window: lapis, offers, chosen option, enchanted item back', async (t) => {
    const nbt = require('prismarine-nbt')
    const got = (key, id, option) => nbt.comp({ [key]: nbt.list(nbt.comp([{ id: nbt.string(id), lvl: nbt.short(option + 1) }])) })
    const { bridge, srv } = await session({
      inventory: { 36: item('iron_pickaxe', 1), 37: item('lapis_lazuli', 8), 38: item('book', 2), 39: item('iron_pickaxe', 1) },
      blocks: [['enchanting_table', [1, 65, 0]]],
      // a book becomes an enchanted book holding its enchantment as a stored one, as vanilla does
      enchant: (it, option) => (it.name === 'book'
        ? item('enchanted_book', 1, got('StoredEnchantments', 'minecraft:unbreaking', option))
        : item(it.name, 1, got('Enchantments', 'minecraft:efficiency', option)))
    }, t)
    const res = await bridge.request('enchant', { item: 'minecraft:iron_pickaxe', option: 'middle' })
    assert.strictEqual(res.enchanted, 'minecraft:iron_pickaxe')
    assert.deepStrictEqual(res.enchantments, [{ id: 'minecraft:efficiency', level: 2 }])
    assert.strictEqual(res.level_requirement, 12)
    assert.deepStrictEqual([res.xp_level_before, res.xp_level_after], [30, 28])
    assert.deepStrictEqual(res.lost, { 'minecraft:lapis_lazuli': 2 })
    assert.deepStrictEqual(res.gained, {})
    assert.deepStrictEqual(srv.log.filter((p) => p.name === 'enchant_item').map((p) => p.data.enchantment), [1])
    let state = await bridge.request('state')
    assert.deepStrictEqual(state.inventory, { 'minecraft:book': 2, 'minecraft:iron_pickaxe': 2, 'minecraft:lapis_lazuli': 6 })
    assert.deepStrictEqual(state.copies.map((c) => c.enchantments), [[], [{ id: 'minecraft:efficiency', level: 2 }]])
    const book = await bridge.request('enchant', { item: 'minecraft:book', option: 'lowest' })
    assert.strictEqual(book.enchanted, 'minecraft:enchanted_book')
    assert.deepStrictEqual(book.enchantments, [{ id: 'minecraft:unbreaking', level: 1 }])
    assert.deepStrictEqual(book.gained, { 'minecraft:enchanted_book': 1 })
    assert.deepStrictEqual(book.lost, { 'minecraft:book': 1, 'minecraft:lapis_lazuli': 1 })
    state = await bridge.request('state')
    assert.deepStrictEqual(state.copies.find((c) => c.id === 'minecraft:enchanted_book').enchantments, book.enchantments)
    // the plain pickaxe goes in; a loaded machine (the Python suite beside it) can hold the scripted
    // server's offers past the 3 s default
    const poor = await bridge.call('enchant', { item: 'minecraft:iron_pickaxe', option: 'highest', offer_timeout_ms: 15000 })
    assert.strictEqual(poor.error.code, 'needs_level') // level 30 offer, 27 levels left
    await bridge.request('enchant', { item: 'minecraft:iron_pickaxe', option: 'lowest', offer_timeout_ms: 15000 })
    const again = await bridge.call('enchant', { item: 'minecraft:iron_pickaxe', option: 'lowest' })
    assert.strictEqual(again.error.code, 'not_enchantable') // both copies enchanted: the table offers nothing
    assert.match(again.error.message, /already enchanted/)
    assert.strictEqual(srv.log.filter((p) => p.name === 'enchant_item').length, 3)
  })

  it('state reports each copy\'s Damage as the server sent it; equip takes the most worn copy', async (t) => {
    const nbt = require('prismarine-nbt')
    const worn = (damage) => nbt.comp({ Damage: nbt.int(damage) })
    const { bridge, srv } = await session({
      inventory: { 36: item('wooden_pickaxe', 1, worn(5)), 37: item('wooden_pickaxe', 1, worn(30)), 38: item('stone', 3) }
    }, t)
    const state = await bridge.request('state')
    assert.deepStrictEqual(state.copies, [ // stone stacks: not a copy
      { id: 'minecraft:wooden_pickaxe', damage: 5, enchantments: [] },
      { id: 'minecraft:wooden_pickaxe', damage: 30, enchantments: [] }])
    await bridge.request('equip', { item: 'minecraft:wooden_pickaxe' })
    await waitUntil(() => srv.log.some((p) => p.name === 'held_item_slot'))
    assert.strictEqual(srv.log.filter((p) => p.name === 'held_item_slot').at(-1).data.slotId, 1) // hotbar slot 37
  })

  it('equip leaves a held stack in hand: no other stack of the item is moved in (a pillar places from it)', async (t) => {
    const { bridge, srv } = await session({ inventory: { 9: item('dirt', 5), 36: item('dirt', 3) } }, t) // hand: hotbar slot 36
    const res = await bridge.request('equip', { item: 'minecraft:dirt' })
    assert.strictEqual(res.held, 'minecraft:dirt')
    assert.deepStrictEqual(srv.log.filter((p) => p.name === 'window_click'), [])
  })

  it('find_blocks returns exactly the matching blocks of the sphere, nearest first', async (t) => {
    const { bridge } = await session({
      blocks: [['oak_log', [3, 65, 4]], ['oak_log', [0, 66, 0]], ['birch_log', [15, 70, 15]], ['oak_log', [0, 64, 15]]]
    }, t)
    const res = await bridge.request('find_blocks', { ids: ['minecraft:oak_log', 'minecraft:birch_log'], radius: 16, chunk_wait_ms: 300 })
    // the bot stands at (0, 65, 0)
    assert.deepStrictEqual(res.blocks.map((b) => [b.id, b.position]), [
      ['minecraft:oak_log', [0, 66, 0]], ['minecraft:oak_log', [3, 65, 4]], ['minecraft:oak_log', [0, 64, 15]]])
    assert.deepStrictEqual(res.blocks.map((b) => b.distance), [1, 5, 15.03])
    const stone = await bridge.request('find_blocks', { ids: ['minecraft:stone'], radius: 2, max: 1000, chunk_wait_ms: 300 })
    // the floor y=64 within 2 blocks of (0,65,0): dx, dz in -1..1, of which only chunk 0,0 exists
    assert.deepStrictEqual(stone.blocks.map((b) => b.position).sort(), [[0, 64, 0], [0, 64, 1], [1, 64, 0], [1, 64, 1]])
    assert.strictEqual(stone.chunks_missing, 3) // the server sent only chunk 0,0
  })

  it('attack hits a mob until the server removes it, then walks over its drop', async (t) => {
    const { bridge, srv } = await session({
      mobs: [{ id: 50, type: 'cow', pos: [2.5, 65, 2.5], hits: 2, drop: { name: 'beef', count: 2 } }]
    }, t)
    const seen = await bridge.request('entities', { radius: 8 })
    assert.deepStrictEqual(seen.entities.map((e) => [e.id, e.type]), [[50, 'minecraft:cow']])
    const res = await bridge.request('attack', { type: 'minecraft:cow', count: 1 }, 30000)
    assert.deepStrictEqual(res.killed, { 'minecraft:cow': 1 })
    assert.deepStrictEqual(res.gained, { 'minecraft:beef': 2 })
    // it hit until it saw the server remove the cow (a late removal may cost one extra swing)
    assert.ok(srv.log.filter((p) => p.name === 'use_entity' && p.data.mouse === 1 && p.data.target === 50).length >= 2)
    const none = await bridge.call('attack', { type: 'minecraft:cow' })
    assert.strictEqual(none.error.code, 'no_target')
  })

  it('attack picks up only the kill\'s drops, not an item that lay near it before', async (t) => {
    const { bridge } = await session({
      mobs: [{ id: 50, type: 'cow', pos: [2.5, 65, 2.5], hits: 1, drop: { name: 'beef', count: 1 } }],
      drops: [{ id: 60, pos: [2.5, 65, 4.5], drop: { name: 'dirt', count: 1 } }]
    }, t)
    const res = await bridge.request('attack', { type: 'minecraft:cow', count: 1 }, 30000)
    assert.deepStrictEqual(res.gained, { 'minecraft:beef': 1 })
    assert.deepStrictEqual(res.left_on_ground, {})
    assert.strictEqual((await bridge.request('entities', { radius: 8 })).entities.filter((e) => e.id === 60).length, 1)
  })

  it('collect takes the nearest dropped stack of the item only', async (t) => {
    const { bridge } = await session({
      drops: [
        { id: 61, pos: [6.5, 65, 0.5], drop: { name: 'dirt', count: 2 } },
        { id: 62, pos: [3.5, 65, 0.5], drop: { name: 'dirt', count: 3 } },
        { id: 63, pos: [0.5, 65, 3.0], drop: { name: 'stick', count: 1 } }
      ]
    }, t)
    const res = await bridge.request('collect', { item: 'minecraft:dirt', radius: 12 }, 20000)
    assert.deepStrictEqual(res.gained, { 'minecraft:dirt': 3 })
    assert.deepStrictEqual(res.left_on_ground, { 'minecraft:dirt': 2, 'minecraft:stick': 1 })
  })
})
