'use strict'
/**
 * The bridge's real op modules plus `scan_reach`, loaded through MCBUILD_BRIDGE_OPS by the Python
 * server backend (runtime/backends/server/link.py). The bridge runs with its own folder as the
 * working directory, so the real modules and node_modules are resolved from there.
 *
 * scan_reach: one pass over the cells within `radius` of the bot (no findBlocks octahedron), with
 * the simulator's access classes: reach 1 = a breakable block that is passable itself or has a
 * passable face neighbour; reach 2 = a breakable block behind one exposed solid block.
 *   args: {radius?: 32, ids?: [id, ...], max?: 64, chunk_wait_ms?: 5000}
 *   result with ids: {blocks: [{id, position, distance, reach}] nearest first, chunks_missing}
 *   result without:  {nearest: {id: distance}, chunks_missing}  (every reachable id)
 */
const path = require('path')
const { createRequire } = require('module')

const bridgeDir = process.cwd()
const real = require(path.join(bridgeDir, 'lib', 'ops'))
const { requireBot } = require(path.join(bridgeDir, 'lib', 'registry'))
const { waitForChunks } = require(path.join(bridgeDir, 'lib', 'ops', 'scanning'))
const { Vec3 } = createRequire(path.join(bridgeDir, 'index.js'))('vec3')

const NEIGHBOURS = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]
const UNBREAKABLE_FLUID = new Set(['air', 'cave_air', 'void_air', 'water', 'lava', 'bubble_column'])

function classify (bot) {
  const byState = bot.registry.blocksByStateId
  const cache = new Map()
  return (stateId) => {
    let c = cache.get(stateId)
    if (!c) {
      const b = byState[stateId]
      const name = b ? b.name : 'air'
      c = {
        name,
        passable: !b || b.boundingBox === 'empty',
        minable: !!b && !UNBREAKABLE_FLUID.has(name) && b.hardness !== null && b.hardness >= 0 && b.diggable !== false
      }
      cache.set(stateId, c)
    }
    return c
  }
}

async function scanReach (ctx, args, signal) {
  const bot = requireBot(ctx)
  const radius = args.radius ?? 32
  const chunksMissing = await waitForChunks(bot, radius + 2, args.chunk_wait_ms ?? 5000, signal)
  const origin = bot.entity.position.floored()
  const info = classify(bot)
  const R = Math.ceil(radius) + 2
  const side = 2 * R + 1
  const cells = new Array(side * side * side)
  const at = (dx, dy, dz) => cells[((dx + R) * side + (dy + R)) * side + (dz + R)]
  const p = new Vec3(0, 0, 0)
  for (let dx = -R; dx <= R; dx++) {
    for (let dy = -R; dy <= R; dy++) {
      for (let dz = -R; dz <= R; dz++) {
        p.set(origin.x + dx, origin.y + dy, origin.z + dz)
        const sid = bot.world.getBlockStateId(p)
        cells[((dx + R) * side + (dy + R)) * side + (dz + R)] = info(sid === undefined ? 0 : sid)
      }
    }
  }
  const inside = (dx, dy, dz) => Math.abs(dx) <= R && Math.abs(dy) <= R && Math.abs(dz) <= R
  const exposed = (dx, dy, dz) => {
    const c = at(dx, dy, dz)
    if (!c.minable) return false
    if (c.passable) return true
    return NEIGHBOURS.some(([a, b, e]) => inside(dx + a, dy + b, dz + e) && at(dx + a, dy + b, dz + e).passable)
  }
  const wanted = Array.isArray(args.ids) ? new Set(args.ids.map((id) => String(id).replace(/^minecraft:/, ''))) : null
  const hits = []
  const nearest = {}
  for (let dx = -R + 1; dx < R; dx++) {
    for (let dy = -R + 1; dy < R; dy++) {
      for (let dz = -R + 1; dz < R; dz++) {
        const d = Math.sqrt(dx * dx + dy * dy + dz * dz)
        if (d > radius) continue
        const c = at(dx, dy, dz)
        if (!c.minable || (wanted && !wanted.has(c.name))) continue
        let reach = exposed(dx, dy, dz) ? 1 : 0
        if (!reach && NEIGHBOURS.some(([a, b, e]) => !at(dx + a, dy + b, dz + e).passable && exposed(dx + a, dy + b, dz + e))) reach = 2
        if (!reach) continue
        const id = 'minecraft:' + c.name
        if (wanted) hits.push({ id, position: [origin.x + dx, origin.y + dy, origin.z + dz], distance: Math.round(d * 100) / 100, reach, d })
        else if (!(id in nearest) || d < nearest[id]) nearest[id] = d
      }
    }
  }
  if (!wanted) {
    const out = {}
    for (const id of Object.keys(nearest).sort()) out[id] = Math.round(nearest[id] * 100) / 100
    return { nearest: out, chunks_missing: chunksMissing }
  }
  hits.sort((a, b) => a.d - b.d || a.position[1] - b.position[1] || a.position[0] - b.position[0] || a.position[2] - b.position[2])
  return { blocks: hits.slice(0, args.max ?? 64).map(({ d, ...rest }) => rest), chunks_missing: chunksMissing }
}

const merged = { ops: { scan_reach: { fn: scanReach, exclusive: false } } }
const inits = real.filter((m) => m.init)
const hooks = real.filter((m) => m.onBot)
for (const mod of real) Object.assign(merged.ops, mod.ops || {})
merged.init = (ctx) => { for (const m of inits) m.init(ctx) }
merged.onBot = (ctx, bot) => { for (const m of hooks) m.onBot(ctx, bot) }

module.exports = merged
