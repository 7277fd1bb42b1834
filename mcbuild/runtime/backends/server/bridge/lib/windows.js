'use strict'
/**
 * Window clicks at the protocol level (1.19: window_click with the server's state id), with
 * timeouts on everything we wait for. mineflayer's clickWindow waits for a crafting result
 * without a timeout and its crafting helper writes minecraft-data's result into slot 0 itself; here the
 * local window model is only updated by the click simulation and by the server's own
 * set_slot / window_items packets, so slot 0 holds what the server put there.
 */
const { OpError } = require('./errors')
const { sleep } = require('./protocol')

/** Track the window state id from the server's packets (needed in every 1.19 click). */
function trackStateId (bot) {
  bot._mcbuildStateId = 0
  const remember = (packet) => { if (packet.stateId !== undefined) bot._mcbuildStateId = packet.stateId }
  bot._client.on('window_items', remember)
  bot._client.on('set_slot', remember)
}

/**
 * One click: mode 0 (left/right click, button 0/1), 1 (shift-click), ... as in the protocol.
 * The local model is updated by prismarine-windows' click simulation; the server corrects it.
 */
function click (bot, window, slot, mouseButton = 0, mode = 0) {
  const item = slot === -999 ? null : window.slots[slot]
  const request = { slot, mouseButton, mode, windowId: window.id, item }
  const before = window.slots.map((s) => (s ? JSON.stringify(s) : null))
  window.acceptClick(request)
  const changedSlots = []
  window.slots.forEach((s, i) => {
    if ((s ? JSON.stringify(s) : null) !== before[i]) changedSlots.push({ location: i, item: toNotch(bot, s) })
  })
  bot._client.write('window_click', {
    windowId: window.id,
    stateId: bot._mcbuildStateId,
    slot,
    mouseButton,
    mode,
    changedSlots,
    cursorItem: toNotch(bot, window.selectedItem)
  })
}

function toNotch (bot, item) {
  const Item = require('prismarine-item')(bot.registry)
  return Item.toNotch(item)
}

/**
 * First slot in the window's player-inventory range holding `type` that `accept` takes (the
 * fullest stack first).
 */
function findOwned (window, type, accept = () => true) {
  let best = null
  for (let i = window.inventoryStart; i < window.inventoryEnd; i++) {
    const s = window.slots[i]
    if (s && s.type === type && accept(s) && (!best || s.count > best.count)) best = s
  }
  return best
}

/**
 * Move `count` items of `type` (stacks `accept` takes) from the inventory part of the window into
 * `dest`, one per right-click, putting the rest of the picked-up stack back. Returns the number placed.
 */
async function putInto (bot, window, type, dest, count, accept = () => true) {
  let placed = 0
  while (placed < count) {
    const source = findOwned(window, type, accept)
    if (!source) break
    click(bot, window, source.slot, 0, 0) // pick up the stack
    while (placed < count && window.selectedItem) {
      click(bot, window, dest, 1, 0) // right-click: one item into dest
      placed++
    }
    if (window.selectedItem) click(bot, window, source.slot, 0, 0) // put the rest back
    await sleep(0)
  }
  return placed
}

/** Activate a block and wait (with a timeout) for the window the server opens. */
async function openBlock (bot, block, timeoutMs, signal) {
  const opened = waitFor(bot, 'windowOpen', timeoutMs, signal)
  await bot.activateBlock(block)
  try {
    const [window] = await opened
    return window
  } catch (err) {
    if (err.code === 'wait_timeout') throw new OpError('station_unreachable', `no window opened for ${block.name} within ${timeoutMs} ms`)
    throw err
  }
}

/** Close a window (or the player inventory) like the client does on leaving the screen. */
function close (bot, window) {
  if (window === bot.inventory) {
    bot._client.write('close_window', { windowId: 0 })
  } else if (bot.currentWindow === window) {
    bot.closeWindow(window)
  }
}

/** Resolve with an event's arguments, or reject with code wait_timeout / timeout (aborted). */
function waitFor (emitter, event, timeoutMs, signal, filter = () => true) {
  return new Promise((resolve, reject) => {
    const done = (fn, value) => {
      clearTimeout(timer)
      emitter.removeListener(event, on)
      signal?.removeEventListener('abort', onAbort)
      fn(value)
    }
    const on = (...args) => { if (filter(...args)) done(resolve, args) }
    const onAbort = () => done(reject, new OpError('timeout', 'aborted'))
    const timer = setTimeout(() => done(reject, new OpError('wait_timeout', `no ${event} within ${timeoutMs} ms`)), timeoutMs)
    emitter.on(event, on)
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/**
 * Count the server's updates of one window slot from now on; `until(n, item)` resolves once
 * `n` updates arrived (or `timeoutMs` passed) and returns {updates, item}.
 */
function slotWatcher (window, slot) {
  let updates = 0
  let latest = window.slots[slot]
  const on = (oldItem, newItem) => { updates++; latest = newItem }
  window.on(`updateSlot:${slot}`, on)
  return {
    get updates () { return updates },
    get item () { return latest },
    async until (n, timeoutMs, signal, quietMs = 150) {
      const start = Date.now()
      while (updates < n && Date.now() - start < timeoutMs) await sleep(20, signal)
      if (updates > 0) await sleep(quietMs, signal) // late updates of the same slot
      return { updates, item: latest }
    },
    reset () { updates = 0 },
    stop () { window.removeListener(`updateSlot:${slot}`, on) }
  }
}

module.exports = { trackStateId, click, findOwned, putInto, openBlock, close, waitFor, slotWatcher }
