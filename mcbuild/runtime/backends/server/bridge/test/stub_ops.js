'use strict'
/**
 * Stub bot for the protocol tests (layer 1): no Minecraft, just ops whose timing and failures the
 * tests control. Loaded with MCBUILD_BRIDGE_OPS=test/stub_ops.js.
 */
const { OpError } = require('../lib/errors')
const { sleep } = require('../lib/protocol')

const inventory = {}

module.exports = {
  ops: {
    /** connect: pretends to log in and emits `spawned` like the real op. */
    connect: async (ctx, args) => {
      ctx.emit('spawned', { username: args.username || 'stub', position: [0, 64, 0] })
      return { username: args.username || 'stub' }
    },
    echo: { fn: async (ctx, args) => ({ args }), exclusive: false },
    /** give / state: a tiny in-memory inventory, so sequencing of exclusive ops is observable. */
    give: async (ctx, args) => {
      inventory[args.item] = (inventory[args.item] || 0) + (args.count || 1)
      return { inventory: { ...inventory } }
    },
    state: { fn: async () => ({ inventory: { ...inventory } }), exclusive: false },
    /** slow: emits `slow_started`, then sleeps ms, honouring the deadline's abort signal. */
    slow: async (ctx, args, signal) => {
      ctx.emit('slow_started', { ms: args.ms })
      await sleep(args.ms || 1000, signal)
      return { slept: args.ms }
    },
    /** hang: blocks the event loop (Node cannot enforce its own deadline: the Python watchdog must). */
    hang: { fn: async () => { for (;;) {} }, exclusive: false },
    fail: async (ctx, args) => { throw new OpError(args.code || 'stub_failure', args.message || 'stub failure', args.details) },
    throw: async () => { throw new TypeError('unexpected stub exception') },
    crash: { fn: async (ctx, args) => { process.exit(args.status ?? 3) }, exclusive: false },
    emit: { fn: async (ctx, args) => { ctx.emit(args.name || 'stub_event', args.fields || {}); return {} }, exclusive: false }
  }
}
