'use strict'
/** Picking up dropped item entities near a spot by walking over them (used by dig, attack, collect). */
const { sleep } = require('./protocol')
const { ns } = require('./inventory')
const { walk } = require('./ops/movement')

// How long an op that picked stacks up waits for them to show in the inventory (a loaded server
// sends the slot updates late; the outcome is the inventory difference either way).
const ARRIVAL_MS = 10000

/**
 * The item an item entity carries, or null while its metadata has not arrived yet. Vanilla 1.19
 * sends it at metadata index 8 (what mineflayer reads); flying-squid puts it at 6/7, so any
 * slot-shaped metadata value is accepted as a fallback.
 */
function droppedItem (bot, entity) {
  if (entity.name !== 'item') return null
  try {
    const item = entity.getDroppedItem()
    if (item) return item
  } catch (_) {}
  const Item = require('prismarine-item')(bot.registry)
  for (const value of Object.values(entity.metadata || {})) {
    if (value && typeof value === 'object' && value.present && value.itemId !== undefined) return Item.fromNotch(value)
  }
  return null
}

/** Ids of the item entities the bot sees now: an op's own drops are the ones that appear later. */
function itemIds (bot) {
  return new Set(Object.values(bot.entities).filter((e) => e.name === 'item').map((e) => e.id))
}

/** Item entities within `radius` of `center` that pass `keep` (all by default), of item `id` if given. */
function droppedItems (bot, center, radius, id, keep = () => true) {
  return Object.values(bot.entities).filter((e) => {
    if (e.name !== 'item' || e.position.distanceTo(center) > radius || !keep(e)) return false
    if (!id) return true
    const it = droppedItem(bot, e)
    return !it || ns(it.name) === id // unknown yet: walk over it anyway
  })
}

/** {id: count} of dropped items near `center` (those passing `keep`). */
function onGround (bot, center, radius, keep) {
  const out = {}
  for (const e of droppedItems(bot, center, radius, null, keep)) {
    const it = droppedItem(bot, e)
    if (it) out[ns(it.name)] = (out[ns(it.name)] || 0) + it.count
  }
  return out
}

/**
 * Walk over the dropped items within `radius` of `center` that pass `keep` (nearest first) until
 * none is left or `budgetMs` passed. Spawned drops appear a few ticks after the event: wait
 * `appearMs` first. Vanilla also hands the player any other item it walks over (pickup range).
 * Returns {id: count} of the stacks walked over that then left the world (the server collected
 * them): what the inventory should gain, once the server's slot updates arrive (`arrived`).
 */
async function pickUp (bot, center, { radius = 3, budgetMs = 3000, appearMs = 400, id = null, keep } = {}, signal) {
  await sleep(appearMs, signal)
  const collected = {}
  const start = Date.now()
  while (Date.now() - start < budgetMs) {
    const items = droppedItems(bot, center, radius, id, keep)
      .sort((a, b) => a.position.distanceTo(bot.entity.position) - b.position.distanceTo(bot.entity.position))
    if (!items.length) break
    const target = items[0]
    try {
      await walk(bot, { x: target.position.x, y: target.position.y, z: target.position.z, range: 0, segmentMs: Math.max(500, budgetMs - (Date.now() - start)), stuckMs: 1500 }, signal)
    } catch (err) {
      if (err.code === 'timeout') throw err
    }
    // collection happens server-side when the player is close: give it a moment
    const item = droppedItem(bot, target)
    const t = Date.now()
    while (bot.entities[target.id] && Date.now() - t < 600) await sleep(50, signal)
    if (bot.entities[target.id]) await sleep(100, signal)
    else if (item) collected[ns(item.name)] = (collected[ns(item.name)] || 0) + item.count
  }
  return collected
}

/**
 * A `settle` condition: the inventory holds, over `before`, at least what `pickUp` saw collected
 * (a loaded server can send the slot updates well after the stacks left the world).
 */
function arrived (before, collected) {
  return (now) => Object.entries(collected).every(([id, n]) => (now[id] || 0) - (before[id] || 0) >= n)
}

module.exports = { pickUp, arrived, ARRIVAL_MS, onGround, droppedItems, droppedItem, itemIds }
