'use strict'
/**
 * craft_grid: place exactly one item per cell with window clicks, wait for the server's
 * set_slot on result slot 0 (with a timeout), record what the server put there, shift-click it
 * out and confirm by the inventory difference. Nothing here asks minecraft-data what a grid
 * should produce: the result is whatever the server (and its datapacks) decided.
 *
 * args: {station: "inventory"|"crafting_table", grid: [[id|null, ...], ...],
 *        table?: [x,y,z], result_timeout_ms?: 2000, open_timeout_ms?: 5000}
 * result: {result_item, result_count, gained, lost, station}
 * errors: invalid_args, missing_item, needs_table, station_unreachable, no_result, pickup_failed
 */
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { counts, diff, settle, ns, itemType } = require('../inventory')
const win = require('../windows')
const { findStation, openStation } = require('../stations')

const GRID = { inventory: 2, crafting_table: 3 } // grid width = height

function parseGrid (bot, grid, size) {
  if (!Array.isArray(grid) || !grid.length || !grid.every(Array.isArray)) {
    throw new OpError('invalid_args', 'grid must be an array of row arrays')
  }
  if (grid.length > size || grid.some((row) => row.length > size)) {
    throw new OpError('invalid_args', `grid larger than ${size}x${size}`)
  }
  const cells = [] // {slot, type, id}
  grid.forEach((row, r) => row.forEach((id, c) => {
    if (id === null || id === undefined) return
    const type = itemType(bot, id)
    cells.push({ slot: 1 + r * size + c, type: type.id, id: ns(type.name) })
  }))
  if (!cells.length) throw new OpError('invalid_args', 'grid is empty')
  return cells
}

async function craftGrid (ctx, args, signal) {
  const bot = requireBot(ctx)
  const station = args.station || 'inventory'
  if (!(station in GRID)) throw new OpError('invalid_args', `station must be inventory or crafting_table`)
  const cells = parseGrid(bot, args.grid, GRID[station])
  const resultTimeout = args.result_timeout_ms ?? 2000

  const before = counts(bot)
  const need = {}
  for (const cell of cells) need[cell.id] = (need[cell.id] || 0) + 1
  const missing = Object.fromEntries(Object.entries(need).filter(([id, n]) => (before[id] || 0) < n)
    .map(([id, n]) => [id, n - (before[id] || 0)]))
  if (Object.keys(missing).length) throw new OpError('missing_item', 'grid needs items not in inventory', { missing })

  let window = bot.inventory
  if (station === 'crafting_table') {
    const table = findStation(bot, 'crafting_table', args.table, 'needs_table')
    window = await openStation(bot, table, 'minecraft:crafting', signal, args.open_timeout_ms)
  }

  const result = win.slotWatcher(window, 0)
  let taken = null
  try {
    // one item per cell: pick up a stack, right-click each of its cells once, put the rest back
    const byType = new Map()
    for (const cell of cells) byType.set(cell.type, [...(byType.get(cell.type) || []), cell.slot])
    for (const [type, slots] of byType) {
      const source = win.findOwned(window, type)
      if (!source) throw new OpError('missing_item', `no ${bot.registry.items[type].name} in the window`)
      win.click(bot, window, source.slot, 0, 0)
      for (const slot of slots) win.click(bot, window, slot, 1, 0)
      if (window.selectedItem) win.click(bot, window, source.slot, 0, 0)
    }
    // the server answers every grid change with a set_slot on slot 0 (empty if no recipe matched)
    const { updates, item } = await result.until(cells.length, resultTimeout, signal)
    if (!item) {
      throw new OpError('no_result', updates
        ? 'the server left the result slot empty'
        : `the server set no result within ${resultTimeout} ms`, { result_updates: updates })
    }
    taken = { result_item: ns(item.name), result_count: item.count }
    result.stop()
    win.click(bot, window, 0, 0, 1) // shift-click the result into the inventory
  } catch (err) {
    if (err.code !== 'no_result') throw err
    result.stop()
    win.close(bot, window) // the server gives the grid back
    const restored = (now) => Object.keys(need).every((id) => (now[id] || 0) >= (before[id] || 0))
    await settle(bot, { signal, until: restored })
    throw new OpError(err.code, err.message, { ...err.details, ...diff(before, counts(bot)) })
  } finally {
    result.stop()
    win.close(bot, window) // returns anything left on the grid to the inventory
  }
  await settle(bot, { signal, until: (now) => Object.keys(diff(before, now).gained).length > 0 })
  const change = diff(before, counts(bot))
  if (!Object.keys(change.gained).length) {
    throw new OpError('pickup_failed', `the server showed ${taken.result_count} ${taken.result_item} but nothing entered the inventory`,
      { ...taken, ...change })
  }
  return { ...taken, ...change, station }
}

module.exports = { ops: { craft_grid: craftGrid } }
