'use strict'
/**
 * The block the feet are in, the eyes, and the reach from them. Physics leaves a standing body a
 * hair below the top of the block under it (y = 69.99999 on a block at 69), which a plain floor
 * would put inside that block.
 */
const { Vec3 } = require('vec3')

const FEET_EPSILON = 1e-3 // blocks: how far below a block's top a standing body's y may sit

function feet (bot) {
  const p = bot.entity.position
  return new Vec3(Math.floor(p.x), Math.floor(p.y + FEET_EPSILON), Math.floor(p.z))
}

// blocks from the eyes to a block's centre that the body digs or uses (a 4.5-block survival reach
// to the block's near face, plus about half a block to its centre)
const REACH = 5.0

/** The bot's eyes, from which reach to a block is measured. */
function eye (bot) { return bot.entity.position.offset(0, bot.entity.height * 0.9, 0) }

module.exports = { feet, eye, REACH }
