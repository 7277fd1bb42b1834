'use strict'
/**
 * connect / disconnect and the bot's lifecycle events (spawned, kicked, died, ended).
 *
 * connect args: {host: "127.0.0.1", port, username, version: "1.19", spawn_timeout_ms?: 30000,
 *                markers?: [id, ...] (the pack's marker items: never reported, waited out by settle)}
 * Chat is never forwarded (advancement announcements would leak milestones); see harness.js.
 */
const mineflayer = require('mineflayer')
const { pathfinder } = require('mineflayer-pathfinder')
const { OpError } = require('../errors')
const { waitFor, trackStateId } = require('../windows')
const { setMarkers } = require('../inventory')

function position (bot) {
  const p = bot.entity.position
  return [p.x, p.y, p.z]
}

async function connect (ctx, args, signal) {
  if (ctx.bot) throw new OpError('already_connected', 'this bridge already drives a bot')
  if (!Number.isInteger(args.port)) throw new OpError('invalid_args', 'port must be an integer')
  if (args.markers !== undefined && !Array.isArray(args.markers)) throw new OpError('invalid_args', 'markers must be a list of item ids')
  setMarkers(args.markers || [])
  const bot = mineflayer.createBot({
    host: args.host || '127.0.0.1',
    port: args.port,
    username: args.username || 'mcbuild',
    version: args.version || '1.19',
    auth: 'offline',
    hideErrors: true,
    logErrors: false,
    respawn: false,
    checkTimeoutInterval: 60000
  })
  ctx.bot = bot
  trackStateId(bot)
  bot.loadPlugin(pathfinder)
  for (const hook of ctx.botHooks) hook(ctx, bot)
  bot.on('kicked', (reason) => ctx.emit('kicked', { reason: String(reason) }))
  bot.on('death', () => ctx.emit('died', { position: position(bot) }))
  bot.on('error', (err) => ctx.log('bot error:', err && err.message))
  bot.on('end', (reason) => {
    ctx.emit('ended', { reason: String(reason) })
    if (ctx.bot === bot) ctx.bot = null
  })
  const ended = waitFor(bot, 'end', args.spawn_timeout_ms ?? 30000, signal)
  try {
    await Promise.race([
      waitFor(bot, 'spawn', args.spawn_timeout_ms ?? 30000, signal),
      ended.then(([reason]) => { throw new OpError('connect_failed', `connection ended: ${reason}`) })
    ])
  } catch (err) {
    ended.catch(() => {})
    try { bot.quit() } catch (_) {}
    ctx.bot = null
    if (err.code === 'wait_timeout') throw new OpError('connect_failed', 'no spawn within the timeout')
    throw err
  }
  ended.catch(() => {})
  const result = { username: bot.username, entity_id: bot.entity.id, position: position(bot), game_mode: bot.game.gameMode }
  ctx.emit('spawned', result)
  return result
}

async function disconnect (ctx) {
  if (ctx.bot) {
    const bot = ctx.bot
    ctx.bot = null
    bot.quit()
  }
  return { disconnected: true }
}

module.exports = { ops: { connect, disconnect } }
