'use strict'
/**
 * HARNESS-ONLY ops: never expose these to an agent. chat and command talk to the server in the
 * player's name (setup, /give in tests); harness_recipes returns the server's declare_recipes /
 * unlock_recipes packets, which contain the pack's real recipes and must stay out of anything
 * agent-facing. Incoming chat is never forwarded by the bridge.
 */
const { OpError } = require('../errors')
const { requireBot } = require('../registry')

module.exports = {
  onBot (ctx, bot) {
    const seen = { declared: [], unlocked: [] }
    bot._mcbuildRecipes = seen
    bot._client.on('declare_recipes', (p) => { seen.declared = (p.recipes || []).map((r) => r.recipeId || r.name).filter(Boolean) })
    bot._client.on('unlock_recipes', (p) => {
      const ids = [...(p.recipes1 || []), ...(p.recipes2 || [])]
      seen.unlocked.push({ action: p.action, recipes: ids })
    })
  },
  ops: {
    chat: async (ctx, args) => {
      if (typeof args.message !== 'string') throw new OpError('invalid_args', 'message must be a string')
      requireBot(ctx).chat(args.message)
      return { sent: true }
    },
    command: async (ctx, args) => {
      if (typeof args.command !== 'string') throw new OpError('invalid_args', 'command must be a string')
      requireBot(ctx).chat('/' + args.command.replace(/^\//, ''))
      return { sent: true }
    },
    harness_recipes: { fn: async (ctx) => ({ ...requireBot(ctx)._mcbuildRecipes }), exclusive: false }
  }
}
