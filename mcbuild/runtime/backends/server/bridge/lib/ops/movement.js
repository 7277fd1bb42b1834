'use strict'
/**
 * goto with mineflayer-pathfinder, bounded: a per-segment time budget and stuck detection
 * (no progress of `stuck_distance` within `stuck_ms`). The pathfinder neither digs nor places
 * (canDig false, no scaffolding), so walking never changes the world or the inventory.
 *
 * args: {x, y, z, range?: 1, segment_ms?: 15000, stuck_ms?: 3000}
 * result: {position, travelled, elapsed_ms}
 * errors: no_path, stuck, segment_budget (each with details.position)
 */
const { Movements, goals } = require('mineflayer-pathfinder')
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { sleep } = require('../protocol')

function movements (bot) {
  if (!bot._mcbuildMovements) {
    const m = new Movements(bot)
    m.canDig = false
    m.allow1by1towers = false
    m.scafoldingBlocks = []
    m.allowParkour = false
    m.canOpenDoors = false
    bot._mcbuildMovements = m
  }
  return bot._mcbuildMovements
}

function here (bot) {
  const p = bot.entity.position
  return [Math.round(p.x * 100) / 100, Math.round(p.y * 100) / 100, Math.round(p.z * 100) / 100]
}

/** Walk to within `range` of a point; used by the other ops too. */
async function walk (bot, { x, y, z, range = 1, segmentMs = 15000, stuckMs = 3000, stuckDistance = 0.5 }, signal) {
  for (const v of [x, y, z]) if (typeof v !== 'number') throw new OpError('invalid_args', 'x, y and z are numbers')
  const start = bot.entity.position.clone()
  const goal = new goals.GoalNear(x, y, z, range)
  if (goal.isEnd(bot.entity.position.floored())) return { position: here(bot), travelled: 0, elapsed_ms: 0 }
  bot.pathfinder.setMovements(movements(bot))
  let failure = null
  const onPath = (r) => { if (r.status === 'noPath') failure = 'no_path' }
  const onReached = () => { failure = failure || 'reached' }
  bot.on('path_update', onPath)
  bot.on('goal_reached', onReached)
  const t0 = Date.now()
  let anchor = bot.entity.position.clone()
  let anchorTime = t0
  try {
    bot.pathfinder.setGoal(goal)
    for (;;) {
      await sleep(100, signal)
      if (failure === 'reached' || goal.isEnd(bot.entity.position.floored())) break
      if (failure === 'no_path') throw new OpError('no_path', 'no path to the goal', { position: here(bot) })
      const now = Date.now()
      if (bot.entity.position.distanceTo(anchor) >= stuckDistance) {
        anchor = bot.entity.position.clone()
        anchorTime = now
      } else if (now - anchorTime > stuckMs) {
        throw new OpError('stuck', `no progress for ${stuckMs} ms`, { position: here(bot) })
      }
      if (now - t0 > segmentMs) throw new OpError('segment_budget', `not there after ${segmentMs} ms`, { position: here(bot) })
    }
  } finally {
    bot.pathfinder.setGoal(null)
    bot.clearControlStates()
    bot.removeListener('path_update', onPath)
    bot.removeListener('goal_reached', onReached)
  }
  return { position: here(bot), travelled: Math.round(bot.entity.position.distanceTo(start) * 100) / 100, elapsed_ms: Date.now() - t0 }
}

async function gotoOp (ctx, args, signal) {
  const bot = requireBot(ctx)
  return walk(bot, { x: args.x, y: args.y, z: args.z, range: args.range ?? 1, segmentMs: args.segment_ms ?? 15000, stuckMs: args.stuck_ms ?? 3000 }, signal)
}

module.exports = { walk, here, ops: { goto: gotoOp } }
