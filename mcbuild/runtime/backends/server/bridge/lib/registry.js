'use strict'
/**
 * Op modules, in the style of mineflayer plugins: each module exports
 *   { ops: { name: fn | {fn, exclusive} }, init?(ctx) }
 * where fn(ctx, args, signal) returns the result object or throws an OpError. Ops are exclusive
 * (serialized, they drive the body) unless they declare `exclusive: false`. A module may also
 * export onBot(ctx, bot), called right after a bot is created (before login), to listen to packets.
 */
const { OpError } = require('./errors')

function loadOps (modules, ctx) {
  const ops = new Map()
  const core = {
    ping: { fn: async () => ({ pong: true, pid: process.pid }), exclusive: false },
    quit: {
      fn: async (c) => { setImmediate(() => c.shutdown('quit op')); return { quitting: true } },
      exclusive: false
    }
  }
  ctx.botHooks = []
  for (const mod of [{ ops: core }, ...modules]) {
    if (mod.init) mod.init(ctx)
    if (mod.onBot) ctx.botHooks.push(mod.onBot)
    for (const [name, spec] of Object.entries(mod.ops || {})) {
      if (ops.has(name)) throw new Error(`op ${name} defined twice`)
      const entry = typeof spec === 'function' ? { fn: spec, exclusive: true } : { exclusive: true, ...spec }
      ops.set(name, entry)
    }
  }
  return ops
}

/** The connected bot, or a not_connected error. */
function requireBot (ctx) {
  if (!ctx.bot || !ctx.bot.entity) throw new OpError('not_connected', 'connect first')
  return ctx.bot
}

module.exports = { loadOps, requireBot }
