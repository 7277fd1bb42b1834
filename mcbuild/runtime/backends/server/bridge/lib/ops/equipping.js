'use strict'
/**
 * equip an owned item into a destination (hand, head, torso, legs, feet, off-hand): of several
 * copies of an item that wears out, the most worn (dig and attack equip their tool the same way);
 * an item that stacks is left as mineflayer finds it (the stack in hand stays there).
 * args: {item, destination?: "hand"} -> {equipped, destination, held}
 */
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { ns, itemType } = require('../inventory')

const DESTINATIONS = ['hand', 'head', 'torso', 'legs', 'feet', 'off-hand']

/**
 * The owned copy of `type` the body works with: the most worn (the highest Damage; of equally worn
 * copies the first slot), as the simulator's body does (runtime/body/policy.py in_hand).
 */
function mostWorn (bot, type) {
  const worn = (i) => i.durabilityUsed || 0
  return bot.inventory.items().filter((i) => i.type === type.id)
    .reduce((best, i) => (!best || worn(i) > worn(best) ? i : best), null)
}

async function equipItem (bot, type, destination, signal) {
  const copy = mostWorn(bot, type)
  if (!copy) throw new OpError('missing_item', `no ${ns(type.name)} in inventory`, { missing: { [ns(type.name)]: 1 } })
  const held = bot.heldItem
  if (destination === 'hand' && held && (type.maxDurability ? held.slot === copy.slot : held.type === type.id)) return
  const abort = new Promise((resolve, reject) => signal?.addEventListener('abort', () => reject(new OpError('timeout', 'aborted')), { once: true }))
  try {
    await Promise.race([bot.equip(type.maxDurability ? copy : type.id, destination), abort])
  } catch (err) {
    if (err instanceof OpError) throw err
    throw new OpError('not_equippable', `cannot equip ${ns(type.name)} to ${destination}: ${err.message}`)
  }
}

async function equip (ctx, args, signal) {
  const bot = requireBot(ctx)
  const destination = args.destination || 'hand'
  if (!DESTINATIONS.includes(destination)) throw new OpError('invalid_args', `destination must be one of ${DESTINATIONS.join(', ')}`)
  const type = itemType(bot, args.item)
  await equipItem(bot, type, destination, signal)
  const held = bot.heldItem
  return { equipped: ns(type.name), destination, held: held ? ns(held.name) : null }
}

module.exports = { equipItem, ops: { equip } }
