'use strict'
/**
 * What the bot owns, as namespaced id -> count, and outcome reporting by inventory difference:
 * every op that can change the inventory reports what actually entered/left it, measured only
 * after the inventory has settled (no slot update for a quiet period), so a datapack's
 * conversions (e.g. the smelting marker item) have run before anything is reported.
 */
const { sleep } = require('./protocol')

// The pack's marker items (the Python side sends the catalog's pool with `connect`): a rule pack
// converts them right after they arrive, and they are never reported.
const MARKER_ITEMS = new Set()
const OWNED_SLOTS = [5, 46] // armor, main inventory, hotbar, off-hand (not the 2x2 grid or its result)

function ns (name) { return name.includes(':') ? name : `minecraft:${name}` }
function bare (id) { return id.startsWith('minecraft:') ? id.slice('minecraft:'.length) : id }

/** Owned items: {"minecraft:oak_log": 3, ...} (sorted keys). */
function counts (bot) {
  const out = {}
  const slots = bot.inventory.slots
  for (let i = OWNED_SLOTS[0]; i < Math.min(OWNED_SLOTS[1], slots.length); i++) {
    const item = slots[i]
    if (item) out[ns(item.name)] = (out[ns(item.name)] || 0) + item.count
  }
  return sortKeys(out)
}

/** An item's enchantments (an enchanted book's stored ones): [{id, level}]. */
function enchantmentsOf (item) {
  return (item && item.enchants ? item.enchants : []).map((e) => ({ id: ns(e.name), level: e.lvl }))
}

/**
 * The owned copies of the items that do not stack, as the server sent them: [{id, damage,
 * enchantments}] (damage: the uses worn off, the item's Damage), sorted by id, damage and enchantments.
 */
function copies (bot) {
  const out = []
  const slots = bot.inventory.slots
  for (let i = OWNED_SLOTS[0]; i < Math.min(OWNED_SLOTS[1], slots.length); i++) {
    const item = slots[i]
    if (item && item.stackSize === 1) out.push({ id: ns(item.name), damage: item.durabilityUsed || 0, enchantments: enchantmentsOf(item) })
  }
  const key = (c) => JSON.stringify(c.enchantments)
  return out.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : a.damage - b.damage || (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0)))
}

function sortKeys (obj) {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
}

/** Replace the marker item ids (namespaced); one bot per bridge process. */
function setMarkers (ids) {
  MARKER_ITEMS.clear()
  for (const id of ids) MARKER_ITEMS.add(ns(String(id)))
}

/** {gained, lost} between two `counts` results, marker items left out. */
function diff (before, after) {
  const gained = {}
  const lost = {}
  for (const id of new Set([...Object.keys(before), ...Object.keys(after)])) {
    if (MARKER_ITEMS.has(id)) continue
    const d = (after[id] || 0) - (before[id] || 0)
    if (d > 0) gained[id] = d
    if (d < 0) lost[id] = -d
  }
  return { gained: sortKeys(gained), lost: sortKeys(lost) }
}

/**
 * Wait until the player inventory had no slot update for `quietMs`, holds no marker item and
 * satisfies `until(counts)` when given (the change the op expects to see: a loaded server can
 * take a while to send it), or until `maxMs` passed; returns whether it settled.
 */
async function settle (bot, { quietMs = 250, maxMs = 3000, signal, until = null } = {}) {
  let last = Date.now()
  const touch = () => { last = Date.now() }
  bot.inventory.on('updateSlot', touch)
  const start = Date.now()
  try {
    for (;;) {
      const now = counts(bot)
      const markers = Object.keys(now).some((id) => MARKER_ITEMS.has(id))
      const expected = !until || until(now)
      if (!markers && expected && Date.now() - last >= quietMs) return true
      if (Date.now() - start >= maxMs) return false
      await sleep(25, signal)
    }
  } finally {
    bot.inventory.removeListener('updateSlot', touch)
  }
}

/** The registry item for an id, or throws invalid_args. */
function itemType (bot, id) {
  const item = bot.registry.itemsByName[bare(id)]
  if (!item) {
    const { OpError } = require('./errors')
    throw new OpError('invalid_args', `unknown item ${id}`)
  }
  return item
}

module.exports = { counts, copies, enchantmentsOf, diff, settle, ns, bare, itemType, setMarkers }
