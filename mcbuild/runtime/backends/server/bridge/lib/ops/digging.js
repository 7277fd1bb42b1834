'use strict'
/**
 * dig one block and pick up its own drops (item entities that appeared after the dig, never
 * older drops such as a cleared obstruction's); reports what actually entered the inventory
 * (inventory difference after settling), not what the block "should" drop. The server's view
 * decides: if the block is still there after digging, that is dig_failed.
 *
 * dig args: {x, y, z, tool?: id, pickup?: true, pickup_ms?: 5000}
 *   result: {block, tool, gained, lost, left_on_ground (its own drops only)}
 *   errors: no_target, unreachable, missing_item, dig_failed
 * collect args: {item?: id, radius?: 12, pickup_ms?: 5000} -> {gained, lost, left_on_ground}:
 *   the nearest dropped stack only (the simulator's collect), nearest to the bot, then lowest x, y, z
 * line_of_sight args: {x, y, z} -> {clear, obstruction: {id, position} | null}
 */
const { Vec3 } = require('vec3')
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { sleep } = require('../protocol')
const { counts, diff, settle, ns, itemType } = require('../inventory')
const { pickUp, arrived, ARRIVAL_MS, onGround, droppedItems, droppedItem, itemIds } = require('../pickup')
const { equipItem } = require('./equipping')
const { eye, REACH } = require('../position')

function isAir (block) { return !block || block.name === 'air' || block.name === 'cave_air' || block.name === 'void_air' }

async function dig (ctx, args, signal) {
  const bot = requireBot(ctx)
  const pos = new Vec3(args.x, args.y, args.z)
  const block = bot.blockAt(pos)
  if (isAir(block)) throw new OpError('no_target', `no block at ${pos}`)
  if (eye(bot).distanceTo(pos.offset(0.5, 0.5, 0.5)) > REACH) throw new OpError('unreachable', `${block.name} at ${pos} is out of reach`)
  if (args.tool) await equipItem(bot, itemType(bot, args.tool), 'hand', signal)
  const before = counts(bot)
  const earlier = itemIds(bot)
  const own = (e) => !earlier.has(e.id)
  const name = ns(block.name)
  const onAbort = () => { try { bot.stopDigging() } catch (_) {} }
  signal.addEventListener('abort', onAbort, { once: true })
  try {
    await bot.dig(block, true)
  } catch (err) {
    if (signal.aborted) throw new OpError('timeout', 'aborted while digging')
    throw new OpError('dig_failed', `digging ${name} failed: ${err.message}`)
  } finally {
    signal.removeEventListener('abort', onAbort)
  }
  const t = Date.now()
  while (!isAir(bot.blockAt(pos)) && Date.now() - t < 1000) await sleep(50, signal)
  if (!isAir(bot.blockAt(pos))) throw new OpError('dig_failed', `the server kept ${name} at ${pos}`)
  const center = pos.offset(0.5, 0.5, 0.5)
  let collected = {}
  if (args.pickup !== false) collected = await pickUp(bot, center, { radius: 3, budgetMs: args.pickup_ms ?? 5000, keep: own }, signal)
  else await sleep(400, signal) // let the drops appear, to report them on the ground
  await settle(bot, { signal, maxMs: ARRIVAL_MS, until: arrived(before, collected) })
  const held = bot.heldItem
  return { block: name, tool: held ? ns(held.name) : null, ...diff(before, counts(bot)), left_on_ground: onGround(bot, center, 3, own) }
}

/** The dropped stack of `id` nearest to the bot within `radius` (ties: lowest x, y, z), or null. */
function nearestStack (bot, id, radius) {
  const me = bot.entity.position
  const order = (e) => [e.position.distanceTo(me), e.position.x, e.position.y, e.position.z]
  const stacks = droppedItems(bot, me, radius, id).filter((e) => droppedItem(bot, e)) // its item is known
  stacks.sort((a, b) => {
    const [p, q] = [order(a), order(b)]
    return p[0] - q[0] || p[1] - q[1] || p[2] - q[2] || p[3] - q[3]
  })
  return stacks[0] || null
}

async function collect (ctx, args, signal) {
  const bot = requireBot(ctx)
  const id = args.item ? ns(itemType(bot, args.item).name) : null
  const radius = args.radius ?? 12
  const center = bot.entity.position.clone()
  const before = counts(bot)
  const stack = nearestStack(bot, id, radius)
  if (!stack) throw new OpError('no_target', `no dropped ${id || 'item'} within ${radius} blocks`)
  const collected = await pickUp(bot, center, { radius, budgetMs: args.pickup_ms ?? 5000, appearMs: 0, id, keep: (e) => e.id === stack.id }, signal)
  await settle(bot, { signal, maxMs: ARRIVAL_MS, until: arrived(before, collected) })
  return { ...diff(before, counts(bot)), left_on_ground: onGround(bot, center, radius) }
}

async function lineOfSight (ctx, args) {
  const bot = requireBot(ctx)
  const target = new Vec3(args.x, args.y, args.z)
  const from = eye(bot)
  const to = target.offset(0.5, 0.5, 0.5)
  const dir = to.minus(from).normalize()
  const hit = bot.world.raycast(from, dir, from.distanceTo(to) + 1)
  if (!hit || hit.position.equals(target)) return { clear: true, obstruction: null }
  return { clear: false, obstruction: { id: ns(hit.name), position: [hit.position.x, hit.position.y, hit.position.z] } }
}

module.exports = { isAir, ops: { dig, collect, line_of_sight: { fn: lineOfSight, exclusive: false } } }
