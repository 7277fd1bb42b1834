'use strict'
/**
 * place an owned block at a given position, or at the nearest open spot next to the bot (an
 * empty cell on solid ground within `radius`, not the bot's own column); and ascend by
 * pillaring (jump, place the block under the feet, repeat).
 *
 * place args: {item, x?, y?, z?, radius?: 3} -> {placed, position, gained, lost}
 *   errors: missing_item, invalid_args (not a block), no_spot, place_failed
 * pillar args: {height: 1..6, item} -> {height, position, gained, lost}
 *   errors: missing_item, no_spot (no open space above), place_failed
 */
const { Vec3 } = require('vec3')
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { sleep } = require('../protocol')
const { counts, diff, settle, ns, itemType } = require('../inventory')
const { equipItem } = require('./equipping')
const { isAir } = require('./digging')
const { feet } = require('../position')

const UP = new Vec3(0, 1, 0)
const CENTRED = 0.2 // blocks from the middle of the feet's cell that count as centred

function solid (block) { return block && block.boundingBox === 'block' }

function occupied (bot, pos) {
  return Object.values(bot.entities).some((e) => e.type !== 'object' && e.name !== 'item' &&
    Math.floor(e.position.x) === pos.x && Math.floor(e.position.z) === pos.z &&
    pos.y >= Math.floor(e.position.y) && pos.y <= Math.floor(e.position.y + (e.height || 1.8)))
}

/** Nearest empty cell on solid ground within `radius` (Chebyshev) of the feet, not the own column. */
function openSpot (bot, radius) {
  const here = feet(bot)
  const spots = []
  for (let dx = -radius; dx <= radius; dx++) {
    for (let dy = -1; dy <= 1; dy++) {
      for (let dz = -radius; dz <= radius; dz++) {
        if (dx === 0 && dz === 0) continue
        const pos = here.offset(dx, dy, dz)
        if (!isAir(bot.blockAt(pos)) || !solid(bot.blockAt(pos.offset(0, -1, 0))) || occupied(bot, pos)) continue
        spots.push({ pos, d: pos.offset(0.5, 0.5, 0.5).distanceTo(bot.entity.position) })
      }
    }
  }
  spots.sort((a, b) => a.d - b.d || a.pos.y - b.pos.y || a.pos.x - b.pos.x || a.pos.z - b.pos.z)
  return spots.length ? spots[0].pos : null
}

function placeableType (bot, id) {
  const type = itemType(bot, id)
  if (!bot.registry.blocksByName[type.name]) throw new OpError('invalid_args', `${ns(type.name)} is not a placeable block`)
  return type
}

/** Place the held block on top of `below`; resolves when the server shows a block at `pos`. */
async function placeOn (bot, below, pos, signal) {
  try {
    await Promise.race([
      bot.placeBlock(below, UP),
      new Promise((resolve, reject) => signal?.addEventListener('abort', () => reject(new OpError('timeout', 'aborted')), { once: true }))
    ])
  } catch (err) {
    if (err instanceof OpError) throw err
    // mineflayer rejects when its own blockUpdate wait times out; the server's view decides below
  }
  const t = Date.now()
  while (isAir(bot.blockAt(pos)) && Date.now() - t < 1000) await sleep(50, signal)
  if (isAir(bot.blockAt(pos))) throw new OpError('place_failed', `the server shows no block at ${pos}`)
}

async function place (ctx, args, signal) {
  const bot = requireBot(ctx)
  const type = placeableType(bot, args.item)
  const before = counts(bot)
  if (!before[ns(type.name)]) throw new OpError('missing_item', `no ${ns(type.name)} in inventory`, { missing: { [ns(type.name)]: 1 } })
  let pos
  if ([args.x, args.y, args.z].every((v) => typeof v === 'number')) {
    pos = new Vec3(args.x, args.y, args.z)
    if (!isAir(bot.blockAt(pos)) || !solid(bot.blockAt(pos.offset(0, -1, 0)))) throw new OpError('no_spot', `${pos} is not an open cell on solid ground`)
  } else {
    pos = openSpot(bot, args.radius ?? 3)
    if (!pos) throw new OpError('no_spot', 'no open position nearby')
  }
  await equipItem(bot, type, 'hand', signal)
  await placeOn(bot, bot.blockAt(pos.offset(0, -1, 0)), pos, signal)
  await settle(bot, { signal })
  return { placed: ns(bot.blockAt(pos).name), position: [pos.x, pos.y, pos.z], ...diff(before, counts(bot)) }
}

/** Wait until the bot stands on the block at `cell`; returns whether it does. */
async function standOn (bot, cell, timeoutMs, signal) {
  const t = Date.now()
  for (;;) {
    if (bot.entity.onGround && bot.entity.position.y >= cell.y + 1 - 0.01) return true
    if (Date.now() - t > timeoutMs) return false
    await sleep(20, signal)
  }
}

/**
 * Sneak to the middle of `cell` (the feet's block), so that jumps straight up land on the same
 * column: a body near a block edge would otherwise rise beside its own pillar.
 */
async function centre (bot, cell, signal, budgetMs = 2000) {
  const middle = cell.offset(0.5, 0, 0.5)
  const off = () => Math.hypot(bot.entity.position.x - middle.x, bot.entity.position.z - middle.z)
  const t = Date.now()
  bot.setControlState('sneak', true)
  try {
    while (off() > CENTRED && Date.now() - t < budgetMs) {
      await bot.lookAt(new Vec3(middle.x, bot.entity.position.y + bot.entity.height, middle.z), true)
      bot.setControlState('forward', true)
      await sleep(25, signal)
      bot.setControlState('forward', false)
    }
  } finally {
    bot.clearControlStates()
  }
  if (!feet(bot).equals(cell)) throw new OpError('no_spot', 'cannot stand in the middle of the column')
}

/**
 * Jump and place a block into `cell` (where the feet were) once the server has seen the feet
 * above it; a placement the server refused (it still saw the player in the cell) is retried.
 */
async function jumpAndPlace (bot, cell, signal, attempts = 3) {
  for (let attempt = 1; ; attempt++) {
    bot.setControlState('jump', true)
    const t = Date.now()
    while (bot.entity.position.y < cell.y + 1.1 && Date.now() - t < 1500) await sleep(10, signal)
    bot.setControlState('jump', false)
    await sleep(60, signal) // one position packet with the raised feet
    try {
      await placeOn(bot, bot.blockAt(cell.offset(0, -1, 0)), cell, signal)
    } catch (err) {
      if (err.code !== 'place_failed' || attempt >= attempts) throw err
      await sleep(300, signal) // land, then jump again
      continue
    }
    if (!(await standOn(bot, cell, 2000, signal))) {
      // the block arrived while the feet were low: jump again to get on top of it
      bot.setControlState('jump', true)
      const onTop = await standOn(bot, cell, 2000, signal)
      bot.setControlState('jump', false)
      if (!onTop) await standOn(bot, cell, 1000, signal)
    }
    return
  }
}

async function pillar (ctx, args, signal) {
  const bot = requireBot(ctx)
  const height = args.height
  if (!Number.isInteger(height) || height < 1 || height > 6) throw new OpError('invalid_args', 'height must be 1..6')
  const type = placeableType(bot, args.item)
  const before = counts(bot)
  if ((before[ns(type.name)] || 0) < height) {
    throw new OpError('missing_item', `needs ${height} ${ns(type.name)}`, { missing: { [ns(type.name)]: height - (before[ns(type.name)] || 0) } })
  }
  const start = feet(bot)
  for (let k = 0; k < height + 2; k++) {
    if (!isAir(bot.blockAt(start.offset(0, k, 0)))) throw new OpError('no_spot', 'no open space above')
  }
  await centre(bot, start, signal)
  await equipItem(bot, type, 'hand', signal)
  await bot.look(bot.entity.yaw, -Math.PI / 2, true)
  for (let k = 0; k < height; k++) {
    await jumpAndPlace(bot, start.offset(0, k, 0), signal)
  }
  await settle(bot, { signal })
  const y = feet(bot).y
  return { height: y - start.y, position: [bot.entity.position.x, bot.entity.position.y, bot.entity.position.z], ...diff(before, counts(bot)) }
}

module.exports = { openSpot, ops: { place, pillar } }
