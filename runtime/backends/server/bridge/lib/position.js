'use strict'
/**
 * The block the feet are in. Physics leaves a standing body a hair below the top of the block
 * under it (y = 69.99999 on a block at 69), which a plain floor would put inside that block.
 */
const { Vec3 } = require('vec3')

const FEET_EPSILON = 1e-3 // blocks: how far below a block's top a standing body's y may sit

function feet (bot) {
  const p = bot.entity.position
  return new Vec3(Math.floor(p.x), Math.floor(p.y + FEET_EPSILON), Math.floor(p.z))
}

module.exports = { feet }
