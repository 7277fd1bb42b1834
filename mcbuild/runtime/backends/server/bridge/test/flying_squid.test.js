'use strict'
/**
 * Layer 3: the bridge against flying-squid 1.12.0 serving a copy of a real save built by
 * `mcbuild build worlds` (MCBUILD_TEST_SAVE=<build/worlds/<world>/vanilla>). flying-squid has no
 * crafting, furnaces, advancements or datapacks; it covers login at the save's spawn, movement,
 * block search, digging with pickup, placing, equipping and pillaring.
 */
const test = require('node:test')
const assert = require('node:assert')
const { startSquid } = require('./helpers/squid')
const { startBridge } = require('./helpers/bridge')

const SAVE = process.env.MCBUILD_TEST_SAVE
const LOGS = ['oak_log', 'birch_log', 'spruce_log', 'jungle_log', 'acacia_log', 'dark_oak_log', 'mangrove_log'].map((b) => `minecraft:${b}`)
const LOGIN_BUDGET_MS = 120000
const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** /give through the harness-only command op; waits until the items arrived. */
async function give (bridge, item, count) {
  const id = `minecraft:${item}`
  const have = (await bridge.request('state')).inventory[id] || 0
  await bridge.request('command', { command: `give squid ${item} ${count}` })
  for (let i = 0; i < 50; i++) {
    if (((await bridge.request('state')).inventory[id] || 0) >= have + count) return
    await sleep(100)
  }
  throw new Error(`/give ${item} ${count} did not arrive`)
}

test('flying-squid serving a copy of a built save', { skip: !SAVE && 'MCBUILD_TEST_SAVE is not set (run through tests/test_server_bridge.py)' }, async (t) => {
  const squid = await startSquid(SAVE)
  const bridge = startBridge()
  t.after(async () => { await bridge.close(); await squid.close() })

  // flying-squid accepts logins only some seconds after "listening" (about 8 s, more under load): retry
  let spawned
  let last
  const start = Date.now()
  while (!spawned && Date.now() - start < LOGIN_BUDGET_MS) {
    last = await bridge.call('connect', { port: squid.port, username: 'squid', spawn_timeout_ms: 20000 }, 25000)
    if (last.ok) spawned = last.result
    else await sleep(1000)
  }
  assert.ok(spawned, `no login within ${LOGIN_BUDGET_MS / 1000} s: ${JSON.stringify(last)}`)

  await t.test('spawns at the save\'s level.dat spawn', async () => {
    const [x, y, z] = spawned.position
    assert.deepStrictEqual([Math.floor(x), Math.floor(z)], [squid.spawn.x, squid.spawn.z])
    assert.ok(Math.abs(y - squid.spawn.y) <= 2, `spawn y ${y} vs level.dat ${squid.spawn.y}`)
  })

  let log
  await t.test('find_blocks covers the 32-block sphere, nearest first', async () => {
    const res = await bridge.request('find_blocks', { ids: LOGS, radius: 32, max: 200 })
    assert.strictEqual(res.chunks_missing, 0)
    assert.ok(res.blocks.length > 0, 'the plains save has trees within 32 blocks of spawn')
    const d = res.blocks.map((b) => b.distance)
    assert.deepStrictEqual(d, [...d].sort((a, b) => a - b))
    assert.ok(d.every((v) => v <= 32))
    // a tree trunk is reachable from the ground: its lowest log
    const lowest = res.blocks.filter((b) => b.id === res.blocks[0].id)
      .sort((a, b) => a.position[1] - b.position[1] || a.distance - b.distance)[0]
    log = lowest
    const near = await bridge.request('find_blocks', { ids: LOGS, radius: 12, max: 200 })
    assert.deepStrictEqual(near.blocks, res.blocks.filter((b) => b.distance <= 12))
  })

  await t.test('scan_reach: the reachable part of the sphere with reach classes; count_blocks counts a box', async () => {
    const all = await bridge.request('find_blocks', { ids: LOGS, radius: 32, max: 2000 })
    const key = (b) => `${b.id}@${b.position}`
    const inSphere = new Map(all.blocks.map((b) => [key(b), b]))
    const res = await bridge.request('scan_reach', { ids: LOGS, radius: 32, max: 2000 })
    assert.ok(res.blocks.length > 0 && res.blocks.length < all.blocks.length, 'some logs are hidden inside the canopy')
    for (const b of res.blocks) {
      assert.ok([1, 2].includes(b.reach), JSON.stringify(b))
      assert.strictEqual(inSphere.get(key(b)).distance, b.distance)
    }
    const d = res.blocks.map((b) => b.distance)
    assert.deepStrictEqual(d, [...d].sort((a, b) => a - b))
    assert.strictEqual(res.blocks.find((b) => key(b) === key(log)).reach, 1, 'the lowest trunk log touches the air')
    const nearest = (await bridge.request('scan_reach', { radius: 32 })).nearest
    for (const id of new Set(res.blocks.map((b) => b.id))) assert.strictEqual(nearest[id], res.blocks.find((b) => b.id === id).distance)
    const [x, y, z] = log.position
    const low = [x - 2, y - 1, z - 2]
    const high = [x + 2, y + 4, z + 2]
    const inBox = (b) => b.id === log.id && b.position.every((v, i) => low[i] <= v && v <= high[i])
    const counted = await bridge.request('count_blocks', { id: log.id, low, high })
    assert.strictEqual(counted.count, all.blocks.filter(inBox).length)
    assert.ok(counted.count >= 1)
    assert.strictEqual((await bridge.call('count_blocks', { id: log.id, low: high, high: low })).error.code, 'invalid_args')
  })

  await t.test('goto walks next to a tree (bounded, no digging)', async () => {
    const [x, y, z] = log.position
    const res = await bridge.request('goto', { x, y, z, range: 2, segment_ms: 20000 }, 30000)
    const state = await bridge.request('state')
    const [px, py, pz] = state.position
    assert.ok(Math.hypot(px - x - 0.5, py - y, pz - z - 0.5) <= 3.5, JSON.stringify({ res, log }))
    assert.deepStrictEqual(state.inventory, {})
  })

  await t.test('dig + pickup reports what entered the inventory', async () => {
    const [x, y, z] = log.position
    const res = await bridge.request('dig', { x, y, z }, 30000)
    assert.strictEqual(res.block, log.id)
    assert.deepStrictEqual(res.gained, { [log.id]: 1 }, JSON.stringify({ res, log }))
    assert.deepStrictEqual((await bridge.request('block_at', { x, y, z })).id, 'minecraft:air')
    assert.deepStrictEqual((await bridge.request('state')).inventory, { [log.id]: 1 })
  })

  await t.test('place puts a block on an open spot; collect picks up a drop left on the ground', async () => {
    await give(bridge, 'dirt', 2)
    const res = await bridge.request('place', { item: 'minecraft:dirt' }, 15000)
    assert.strictEqual(res.placed, 'minecraft:dirt')
    assert.deepStrictEqual(res.lost, { 'minecraft:dirt': 1 })
    let [x, y, z] = res.position
    assert.strictEqual((await bridge.request('block_at', { x, y, z })).id, 'minecraft:dirt')
    assert.deepStrictEqual((await bridge.request('dig', { x, y, z }, 15000)).gained, { 'minecraft:dirt': 1 })
    // place one 3 blocks away (beyond the server's 1.75-block auto pickup), dig it leaving the drop
    const [bx, by, bz] = (await bridge.request('state')).block_position
    let placed = null
    for (const [dx, dz] of [[3, 0], [-3, 0], [0, 3], [0, -3], [3, 3], [-3, -3], [3, -3], [-3, 3]]) {
      for (const dy of [0, 1, -1]) {
        const r = await bridge.call('place', { item: 'minecraft:dirt', x: bx + dx, y: by + dy, z: bz + dz }, 15000)
        if (r.ok) { placed = r.result; break }
        assert.strictEqual(r.error.code, 'no_spot')
      }
      if (placed) break
    }
    assert.ok(placed, 'an open cell 3 blocks away');
    [x, y, z] = placed.position
    const dug = await bridge.request('dig', { x, y, z, pickup: false }, 15000)
    assert.deepStrictEqual(dug.gained, {})
    assert.deepStrictEqual(dug.left_on_ground, { 'minecraft:dirt': 1 })
    const got = await bridge.request('collect', { item: 'minecraft:dirt' }, 15000)
    assert.deepStrictEqual(got.gained, { 'minecraft:dirt': 1 })
    assert.strictEqual((await bridge.call('collect', { item: 'minecraft:dirt' })).error.code, 'no_target')
  })

  await t.test('equip puts an owned item in the hand; a missing one is refused', async () => {
    const res = await bridge.request('equip', { item: log.id })
    assert.strictEqual(res.held, log.id)
    const missing = await bridge.call('equip', { item: 'minecraft:diamond_sword' })
    assert.strictEqual(missing.error.code, 'missing_item')
  })

  await t.test('prepare_access: clear the obstruction in front of a buried block', async () => {
    // the dirt/stone under the bot is hidden behind the grass it stands on
    const state = await bridge.request('state')
    const by = state.block_position[1]
    const buried = (await bridge.request('find_blocks', { ids: ['minecraft:dirt', 'minecraft:stone'], radius: 6, max: 50 }))
      .blocks.find((b) => b.position[1] < by - 1)
    assert.ok(buried, 'a buried block near the bot')
    const sight = await bridge.request('line_of_sight', { x: buried.position[0], y: buried.position[1], z: buried.position[2] })
    assert.strictEqual(sight.clear, false)
    const [ox, oy, oz] = sight.obstruction.position
    const cleared = await bridge.request('dig', { x: ox, y: oy, z: oz }, 20000)
    assert.strictEqual(cleared.block, sight.obstruction.id)
    assert.ok(Object.keys(cleared.gained).length <= 1)
  })

  await t.test('pillar: ascend by placing blocks under the feet', async () => {
    // back to the open spawn (no leaves overhead)
    await bridge.request('goto', { x: squid.spawn.x, y: squid.spawn.y, z: squid.spawn.z, range: 1, segment_ms: 20000 }, 30000)
    await give(bridge, 'dirt', 3)
    const start = await bridge.request('state')
    const res = await bridge.request('pillar', { height: 3, item: 'minecraft:dirt' }, 30000)
    assert.strictEqual(res.height, 3)
    assert.deepStrictEqual(res.lost, { 'minecraft:dirt': 3 })
    const end = await bridge.request('state')
    assert.strictEqual(end.block_position[1], start.block_position[1] + 3)
    assert.deepStrictEqual(bridge.stray, [])
  })
})
