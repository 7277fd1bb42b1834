'use strict'
/**
 * attack living entities of a type (or one entity id) until `count` are dead, then pick up their
 * drops; kills and gains are what the server showed (entity removal, inventory difference).
 *
 * args: {type?: "minecraft:cow", entity_id?, count?: 1, radius?: 32, weapon?: id,
 *        per_target_ms?: 20000, pickup_ms?: 5000}
 * result: {killed: {type: n}, gained, lost, left_on_ground}
 * errors: no_target, invalid_args
 */
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { sleep } = require('../protocol')
const { counts, diff, settle, ns, bare, itemType } = require('../inventory')
const { pickUp, arrived, ARRIVAL_MS, onGround, itemIds } = require('../pickup')
const { walk } = require('./movement')
const { equipItem } = require('./equipping')

const HIT_RANGE = 3.0
const COOLDOWN_MS = 650

function targets (bot, args) {
  return Object.values(bot.entities).filter((e) => e !== bot.entity && e.type !== 'object' && e.name !== 'item' &&
    (args.entity_id !== undefined ? e.id === args.entity_id : e.name === bare(args.type)) &&
    e.position.distanceTo(bot.entity.position) <= (args.radius ?? 32))
    .sort((a, b) => a.position.distanceTo(bot.entity.position) - b.position.distanceTo(bot.entity.position))
}

async function attack (ctx, args, signal) {
  const bot = requireBot(ctx)
  if (args.entity_id === undefined && !args.type) throw new OpError('invalid_args', 'type or entity_id is required')
  const count = args.count ?? 1
  if (args.weapon) await equipItem(bot, itemType(bot, args.weapon), 'hand', signal)
  const before = counts(bot)
  const earlier = itemIds(bot)
  const own = (e) => !earlier.has(e.id) // the kills' drops, not what lay around before
  const killed = {}
  const spots = []
  for (let n = 0; n < count; n++) {
    const target = targets(bot, args)[0]
    if (!target) {
      if (n === 0) throw new OpError('no_target', `no ${args.type || 'entity ' + args.entity_id} within ${args.radius ?? 32} blocks`)
      break
    }
    const t0 = Date.now()
    const budget = args.per_target_ms ?? 20000
    while (bot.entities[target.id] && Date.now() - t0 < budget) {
      if (target.position.distanceTo(bot.entity.position) > HIT_RANGE) {
        try {
          await walk(bot, { x: target.position.x, y: target.position.y, z: target.position.z, range: 2, segmentMs: 3000, stuckMs: 1500 }, signal)
        } catch (err) {
          if (err.code === 'timeout') throw err
        }
        continue
      }
      await bot.lookAt(target.position.offset(0, (target.height || 1) / 2, 0), true)
      bot.attack(target)
      await sleep(COOLDOWN_MS, signal)
    }
    if (bot.entities[target.id]) break // survived its budget
    const type = ns(target.name)
    killed[type] = (killed[type] || 0) + 1
    spots.push(target.position.clone())
  }
  const collected = {}
  for (const spot of spots) {
    const got = await pickUp(bot, spot, { radius: 4, budgetMs: args.pickup_ms ?? 5000, keep: own }, signal)
    for (const [id, n] of Object.entries(got)) collected[id] = (collected[id] || 0) + n
  }
  await settle(bot, { signal, maxMs: ARRIVAL_MS, until: arrived(before, collected) })
  const left = {}
  for (const spot of spots) for (const [id, k] of Object.entries(onGround(bot, spot, 4, own))) left[id] = Math.max(left[id] || 0, k)
  if (!Object.keys(killed).length) throw new OpError('no_target', 'no target died within its budget', diff(before, counts(bot)))
  return { killed, ...diff(before, counts(bot)), left_on_ground: left }
}

module.exports = { ops: { attack } }
