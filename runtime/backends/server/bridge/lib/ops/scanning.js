'use strict'
/**
 * find_blocks: wait until the chunk columns around the bot are loaded, then search the exact
 * sphere. mineflayer's findBlocks walks sections in an octahedron (a 32-block sphere needs
 * maxDistance ~88) and builds a Block object per position, which takes over 10 s on a 32-block
 * radius here; this scan reads state ids straight from the sections whose palette can match.
 *
 * args: {ids: ["minecraft:oak_log", ...], radius?: 32, max?: 64, chunk_wait_ms?: 5000}
 * result: {blocks: [{id, position: [x,y,z], distance}], chunks_missing}
 */
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { sleep } = require('../protocol')
const { Vec3 } = require('vec3')
const { ns, bare } = require('../inventory')

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
  const origin = bot.entity.position.floored()
  const blocks = scanSphere(bot, origin, radius, stateIdsOf(bot, types))
    .sort((a, b) => a.d - b.d || a.pos.y - b.pos.y || a.pos.x - b.pos.x || a.pos.z - b.pos.z)
    .slice(0, max)
    .map(({ pos, d, state }) => ({ id: ns(bot.registry.blocksByStateId[state].name), position: [pos.x, pos.y, pos.z], distance: Math.round(d * 100) / 100 }))
  return { blocks, chunks_missing: chunksMissing }
}

/** block_at: the block id at a position (for checks after dig/place). */
async function blockAt (ctx, args) {
  const bot = requireBot(ctx)
  const block = bot.blockAt(new Vec3(args.x, args.y, args.z))
  return { id: block ? ns(block.name) : null }
}

module.exports = {
  waitForChunks,
  ops: { find_blocks: { fn: findBlocks, exclusive: false }, block_at: { fn: blockAt, exclusive: false } }
}
