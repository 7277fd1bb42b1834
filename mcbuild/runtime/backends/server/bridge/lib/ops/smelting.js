'use strict'
/**
 * smelt through the furnace / blast furnace / smoker window: put `count` inputs into slot 0 and
 * the fuel into slot 1 kind by kind in the given order (the Python body policy chose it: richest
 * first), the next kind whenever the slot is empty, take every output from slot 2 as the server
 * produces it, take back what is left, and report the settled inventory difference (after the
 * pack's conversions: the marker item is never reported).
 *
 * args: {station: "furnace"|"blast_furnace"|"smoker", input, count, fuel: [[id, n], ...],
 *        position?: [x,y,z], stall_ms?: 15000, open_timeout_ms?: 5000}
 * result: {station, cooked, gained, lost}
 * errors: missing_item, needs_station, station_unreachable, no_fuel, not_smeltable, stalled
 */
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { sleep } = require('../protocol')
const { counts, diff, ns, itemType } = require('../inventory')
const win = require('../windows')
const { findStation, openStation, useStation } = require('../stations')

const STATIONS = ['furnace', 'blast_furnace', 'smoker']
const INPUT = 0
const FUEL = 1
const OUTPUT = 2

async function smelt (ctx, args, signal) {
  const bot = requireBot(ctx)
  const station = args.station || 'furnace'
  if (!STATIONS.includes(station)) throw new OpError('invalid_args', `station must be one of ${STATIONS.join(', ')}`)
  const count = args.count ?? 1
  const fuels = parseFuel(bot, args.fuel)
  if (!Number.isInteger(count) || count < 1) throw new OpError('invalid_args', 'count must be a positive integer')
  const input = itemType(bot, args.input)
  const before = counts(bot)
  const need = { [ns(input.name)]: count }
  for (const { type, n } of fuels) need[ns(type.name)] = (need[ns(type.name)] || 0) + n
  const missing = Object.fromEntries(Object.entries(need).filter(([id, n]) => (before[id] || 0) < n)
    .map(([id, n]) => [id, n - (before[id] || 0)]))
  if (Object.keys(missing).length) throw new OpError('missing_item', 'not enough input or fuel', { missing })

  const block = findStation(bot, station, args.position, 'needs_station')
  const window = await openStation(bot, block, `minecraft:${station}`, signal, args.open_timeout_ms)
  let lit = false
  const onProperty = (packet) => { if (packet.windowId === window.id && packet.property === 0 && packet.value > 0) lit = true }
  let problem = null
  await useStation(bot, window, { slots: [INPUT, FUEL, OUTPUT], onProperty, signal }, async () => {
    for (const slot of [INPUT, FUEL, OUTPUT]) if (window.slots[slot]) win.click(bot, window, slot, 0, 1) // leftovers
    await win.putInto(bot, window, input.id, INPUT, count)
    const queue = [...fuels]
    const refuel = async () => {
      if (window.slots[FUEL] || !queue.length) return
      const { type, n } = queue.shift()
      await win.putInto(bot, window, type.id, FUEL, n)
    }
    await refuel()
    const stallMs = args.stall_ms ?? 15000
    let lastProgress = Date.now()
    let took = 0
    const output = win.slotWatcher(window, OUTPUT)
    try {
      for (;;) {
        if (window.slots[OUTPUT]) {
          win.click(bot, window, OUTPUT, 0, 1) // shift-click the output into the inventory
          took++
          lastProgress = Date.now()
        } else if (!window.slots[INPUT] && Date.now() - lastProgress > 500) {
          break // every input processed and taken (the server's view: it corrects our slots)
        } else if (Date.now() - lastProgress > stallMs) {
          // vanilla refuses a non-fuel in slot 1, and lights only for an input it can cook
          if (took || lit) problem = new OpError('stalled', `the ${station} stopped producing`)
          else if (!window.slots[FUEL]) problem = new OpError('no_fuel', `the ${station} did not take the fuel`)
          else problem = new OpError('not_smeltable', `the ${station} does not process ${ns(input.name)}`)
          break
        }
        if (output.updates) { lastProgress = Date.now(); output.reset() } // the server changed the output slot
        if (window.slots[INPUT]) await refuel() // the server burnt the last of one kind: the next one
        await sleep(50, signal)
      }
    } finally {
      output.stop()
    }
  })
  const change = diff(before, counts(bot))
  const cooked = change.lost[ns(input.name)] || 0 // inputs the station consumed
  if (problem) throw new OpError(problem.code, problem.message, { cooked, ...change })
  return { station, cooked, ...change }
}

/** `[[id, n], ...]` -> [{type, n}] (registry item types, positive counts, at least one kind). */
function parseFuel (bot, fuel) {
  if (!Array.isArray(fuel) || !fuel.length) throw new OpError('no_fuel', 'no fuel given')
  return fuel.map((entry) => {
    const [id, n] = Array.isArray(entry) ? entry : []
    if (!Number.isInteger(n) || n < 1) throw new OpError('invalid_args', 'fuel must be [[id, positive count], ...]')
    return { type: itemType(bot, id), n }
  })
}

module.exports = { ops: { smelt } }
