'use strict'
/**
 * find_blocks: wait until the chunk columns around the bot are loaded, then search the exact
 * sphere. mineflayer's findBlocks walks sections in an octahedron (a 32-block sphere needs
 * maxDistance ~88) and builds a Block object per position, which takes over 10 s on a 32-block
 * radius here; this scan reads state ids straight from the sections whose palette can match.
 *
 * args: {ids: ["minecraft:oak_log", ...], radius?: 32, max?: 64, chunk_wait_ms?: 5000}
 * result: {blocks: [{id, position: [x,y,z], distance}], chunks_missing}
 *
 * scan_reach: one pass over the cells within `radius` of the bot, with the simulator's access
 * classes: reach 1 = a breakable block that is passable itself or has a passable face neighbour;
 * reach 2 = a breakable block behind one exposed solid block. Passable and breakable come from
 * minecraft-data (bounding box "empty"; hardness >= 0, not air or a fluid), the source of
 * catalogs/block_physics.yaml.
 *   args: {radius?: 32, ids?: [id, ...], max?: 64, chunk_wait_ms?: 5000}
 *   result with ids: {blocks: [{id, position, distance, reach}] nearest first, chunks_missing}
 *   result without:  {nearest: {id: distance}, chunks_missing}  (every reachable id)
 *
 * count_blocks: {id, low: [x,y,z], high: [x,y,z]} -> {count, chunks_missing}: the blocks `id` in
 * the box (corners inclusive) as the bot's world view holds it (chunks the server sent).

 *
 * column: {x, z, y0?, y1?} -> {y0, ids: [id | null, ...]}: the blocks from y0 (the world's bottom)
 * to y1 (its top), bottom up; null where the chunk is not loaded.
 */
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { sleep } = require('../protocol')
const { Vec3 } = require('vec3')
const { ns, bare } = require('../inventory')
const { feet } = require('../position')

/** Chunk columns intersecting the square of half-side `radius` around the bot that are not loaded. */
function missingColumns (bot, radius) {
  const p = bot.entity.position
  const out = []
  for (let cx = Math.floor((p.x - radius) / 16); cx <= Math.floor((p.x + radius) / 16); cx++) {
    for (let cz = Math.floor((p.z - radius) / 16); cz <= Math.floor((p.z + radius) / 16); cz++) {
      if (!bot.world.getColumn(cx, cz)) out.push([cx, cz])
    }
  }
  return out
}

async function waitForChunks (bot, radius, timeoutMs, signal) {
  const start = Date.now()
  let missing = missingColumns(bot, radius)
  while (missing.length && Date.now() - start < timeoutMs) {
    await sleep(50, signal)
    missing = missingColumns(bot, radius)
  }
  return missing.length
}

function stateIdsOf (bot, types) {
  const ids = new Set()
  for (const type of types) {
    const b = bot.registry.blocks[type]
    for (let s = b.minStateId; s <= b.maxStateId; s++) ids.add(s)
  }
  return ids
}

/** The section's palette (state ids it can hold), or null for a direct (global) palette. */
function paletteOf (section) {
  const data = section.data
  if (data && Array.isArray(data.palette)) return data.palette
  if (data && data.value !== undefined) return [data.value]
  return Array.isArray(section.palette) ? section.palette : null
}

/** Every position within `radius` (Euclidean) of `origin` whose state id is in `states`. */
function scanSphere (bot, origin, radius, states) {
  const out = []
  const r2 = radius * radius
  const minY = bot.game.minY
  const maxY = minY + bot.game.height - 1
  const y0 = Math.max(minY, Math.ceil(origin.y - radius))
  const y1 = Math.min(maxY, Math.floor(origin.y + radius))
  for (let cx = Math.floor((origin.x - radius) / 16); cx <= Math.floor((origin.x + radius) / 16); cx++) {
    for (let cz = Math.floor((origin.z - radius) / 16); cz <= Math.floor((origin.z + radius) / 16); cz++) {
      const column = bot.world.getColumn(cx, cz)
      if (!column) continue
      for (let sy = (y0 - minY) >> 4; sy <= (y1 - minY) >> 4; sy++) {
        const section = column.sections[sy]
        if (!section) continue
        const palette = paletteOf(section)
        if (palette && !palette.some((id) => states.has(id))) continue
        const baseY = minY + sy * 16
        for (let ly = 0; ly < 16; ly++) {
          const y = baseY + ly
          const dy = y - origin.y
          if (y < y0 || y > y1 || dy * dy > r2) continue
          for (let lz = 0; lz < 16; lz++) {
            const z = cz * 16 + lz
            const dz = z - origin.z
            if (dy * dy + dz * dz > r2) continue
            for (let lx = 0; lx < 16; lx++) {
              const x = cx * 16 + lx
              const dx = x - origin.x
              const d2 = dx * dx + dy * dy + dz * dz
              if (d2 > r2) continue
              const state = section.get({ x: lx, y: ly, z: lz })
              if (states.has(state)) out.push({ pos: new Vec3(x, y, z), d: Math.sqrt(d2), state })
            }
          }
        }
      }
    }
  }
  return out
}

async function findBlocks (ctx, args, signal) {
  const bot = requireBot(ctx)
  const ids = Array.isArray(args.ids) ? args.ids : [args.ids]
  const types = ids.map((id) => {
    const block = bot.registry.blocksByName[bare(String(id))]
    if (!block) throw new OpError('invalid_args', `unknown block ${id}`)
    return block.id
  })
  const radius = args.radius ?? 32
  const max = args.max ?? 64
  const chunksMissing = await waitForChunks(bot, radius, args.chunk_wait_ms ?? 5000, signal)
  const origin = feet(bot)
  const blocks = scanSphere(bot, origin, radius, stateIdsOf(bot, types))
    .sort((a, b) => a.d - b.d || a.pos.y - b.pos.y || a.pos.x - b.pos.x || a.pos.z - b.pos.z)
    .slice(0, max)
    .map(({ pos, d, state }) => ({ id: ns(bot.registry.blocksByStateId[state].name), position: [pos.x, pos.y, pos.z], distance: Math.round(d * 100) / 100 }))
  return { blocks, chunks_missing: chunksMissing }
}

const NEIGHBOURS = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]]
const UNBREAKABLE_FLUID = new Set(['air', 'cave_air', 'void_air', 'water', 'lava', 'bubble_column'])

/** stateId -> {name, passable, minable}, memoised per call. */
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

/** scan_reach (see the module's doc). */
async function scanReach (ctx, args, signal) {
  const bot = requireBot(ctx)
  const radius = args.radius ?? 32
  const chunksMissing = await waitForChunks(bot, radius + 2, args.chunk_wait_ms ?? 5000, signal)
  const origin = feet(bot)
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


const MAX_BOX_CELLS = 1 << 20 // a checker box is a few thousand cells; refuse runaway boxes

/** count_blocks (see the module's doc). */
async function countBlocks (ctx, args, signal) {
  const bot = requireBot(ctx)
  const block = bot.registry.blocksByName[bare(String(args.id))]
  if (!block) throw new OpError('invalid_args', `unknown block ${args.id}`)
  const [lo, hi] = [args.low, args.high]
  if (![lo, hi].every((v) => Array.isArray(v) && v.length === 3 && v.every(Number.isInteger))) {
    throw new OpError('invalid_args', 'low and high must be [x, y, z] integers')
  }
  const size = [0, 1, 2].map((i) => hi[i] - lo[i] + 1)
  if (size.some((n) => n < 1) || size[0] * size[1] * size[2] > MAX_BOX_CELLS) throw new OpError('invalid_args', `bad box ${lo} .. ${hi}`)
  const at = bot.entity.position
  const span = Math.max(Math.abs(lo[0] - at.x), Math.abs(hi[0] - at.x), Math.abs(lo[2] - at.z), Math.abs(hi[2] - at.z))
  const chunksMissing = await waitForChunks(bot, span, args.chunk_wait_ms ?? 5000, signal)
  const states = stateIdsOf(bot, [block.id])
  const p = new Vec3(0, 0, 0)
  let count = 0
  for (let x = lo[0]; x <= hi[0]; x++) {
    for (let y = lo[1]; y <= hi[1]; y++) {
      for (let z = lo[2]; z <= hi[2]; z++) {
        p.set(x, y, z)
        if (states.has(bot.world.getBlockStateId(p))) count++
      }
    }
  }
  return { count, chunks_missing: chunksMissing }
}

/** column (see the module's doc). */
async function column (ctx, args) {
  const bot = requireBot(ctx)
  if (!Number.isInteger(args.x) || !Number.isInteger(args.z)) throw new OpError('invalid_args', 'x and z must be integers')
  const bottom = bot.game.minY
  const y0 = Math.max(args.y0 ?? bottom, bottom)
  const y1 = Math.min(args.y1 ?? bottom + bot.game.height - 1, bottom + bot.game.height - 1)
  const ids = []
  for (let y = y0; y <= y1; y++) {
    const block = bot.blockAt(new Vec3(args.x, y, args.z))
    ids.push(block ? ns(block.name) : null)
  }
  return { y0, ids }
}

/** block_at: the block id at a position (for checks after dig/place). */
async function blockAt (ctx, args) {
  const bot = requireBot(ctx)
  const block = bot.blockAt(new Vec3(args.x, args.y, args.z))
  return { id: block ? ns(block.name) : null }
}

module.exports = {
  waitForChunks,
  ops: {
    find_blocks: { fn: findBlocks, exclusive: false },
    scan_reach: { fn: scanReach, exclusive: false },
    count_blocks: { fn: countBlocks, exclusive: false },
    column: { fn: column, exclusive: false },
    block_at: { fn: blockAt, exclusive: false }
  }
}
