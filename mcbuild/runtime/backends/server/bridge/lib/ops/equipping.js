'use strict'
/**
 * equip an owned item into a destination (hand, head, torso, legs, feet, off-hand).
 * args: {item, destination?: "hand"} -> {equipped, destination, held}
 */
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { ns, itemType } = require('../inventory')

const DESTINATIONS = ['hand', 'head', 'torso', 'legs', 'feet', 'off-hand']

async function equipItem (bot, type, destination, signal) {
  if (!bot.inventory.items().some((i) => i.type === type.id) && !(bot.heldItem && bot.heldItem.type === type.id)) {
    throw new OpError('missing_item', `no ${ns(type.name)} in inventory`, { missing: { [ns(type.name)]: 1 } })
  }
  if (destination === 'hand' && bot.heldItem && bot.heldItem.type === type.id) return
  const abort = new Promise((resolve, reject) => signal?.addEventListener('abort', () => reject(new OpError('timeout', 'aborted')), { once: true }))
  try {
    await Promise.race([bot.equip(type.id, destination), abort])
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
