'use strict'
/** Finding and opening a placed station block (crafting table, furnaces, enchanting table). */
const { Vec3 } = require('vec3')
const { OpError } = require('./errors')
const win = require('./windows')
const { eye, REACH } = require('./position')
const { sleep } = require('./protocol')
const { settle } = require('./inventory')

const OPEN_TIMEOUT_MS = 5000 // a window normally opens within a tick or two

/**
 * The station block at `at` ([x,y,z]) or the nearest one within reach; `missingCode` when there
 * is none, station_unreachable when it is too far to use.
 */
function findStation (bot, name, at, missingCode) {
  let block
  if (at) {
    block = bot.blockAt(new Vec3(at[0], at[1], at[2]))
    if (!block || block.name !== name) throw new OpError(missingCode, `no ${name} at ${at}`)
  } else {
    const id = bot.registry.blocksByName[name].id
    block = bot.findBlock({ matching: id, maxDistance: REACH + 0.5 })
    if (!block) throw new OpError(missingCode, `no ${name} within reach`)
  }
  if (eye(bot).distanceTo(block.position.offset(0.5, 0.5, 0.5)) > REACH) {
    throw new OpError('station_unreachable', `the ${name} is out of reach`)
  }
  return block
}

/** Open the station's window (waiting up to `timeoutMs`) and check it is the expected kind. */
async function openStation (bot, block, windowType, signal, timeoutMs = OPEN_TIMEOUT_MS) {
  const window = await win.openBlock(bot, block, timeoutMs, signal)
  if (window.type !== windowType) {
    win.close(bot, window)
    throw new OpError('station_unreachable', `expected a ${windowType} window, got ${window.type}`)
  }
  return window
}

/**
 * Run `work()` in an open station window while `onProperty` hears its craft_progress_bar packets,
 * then leave as a player does: take back what is left in `slots` (a shift-click each) and let the
 * server answer; the listener goes and the window closes even when `work` throws. Resolves, once
 * the inventory has settled, to what `work` resolved to.
 */
async function useStation (bot, window, { slots, onProperty, signal }, work) {
  bot._client.on('craft_progress_bar', onProperty)
  let result
  try {
    result = await work()
    for (const slot of slots) if (window.slots[slot]) win.click(bot, window, slot, 0, 1)
    await sleep(100, signal)
  } finally {
    bot._client.removeListener('craft_progress_bar', onProperty)
    win.close(bot, window)
  }
  await settle(bot, { signal })
  return result
}

module.exports = { findStation, openStation, useStation }
