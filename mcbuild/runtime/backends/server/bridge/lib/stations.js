'use strict'
/** Finding and opening a placed station block (crafting table, furnaces, enchanting table). */
const { Vec3 } = require('vec3')
const { OpError } = require('./errors')
const win = require('./windows')
const { eye, REACH } = require('./position')

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

module.exports = { findStation, openStation }
