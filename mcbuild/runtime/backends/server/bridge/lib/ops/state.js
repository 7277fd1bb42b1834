'use strict'
/**
 * Agent-visible state of the body (no rule or world identity).
 *
 * state: {} -> {inventory: {id: n}, copies: [{id, damage, enchantments: [{id, level}]}], held,
 *               position: [x,y,z], block_position, yaw, health, food, xp_level, effects: {id: amplifier},
 *               biome, alive, dimension}
 *   copies: every owned item that does not stack (tools, weapons, armour, enchanted books)
 *   yaw: the game's own convention, degrees in [0, 360): 0 looks south (+z), 90 west, 180 north.
 * entities: {radius?: 32} -> {entities: [{id, type, kind, position, distance, item?: {id, count}}]}
 */
const { requireBot } = require('../registry')
const { counts, copies, ns } = require('../inventory')
const { feet } = require('../position')
const { toNotchianYaw } = require('mineflayer/lib/conversions')

function round (v, d = 3) { const k = 10 ** d; return Math.round(v * k) / k }

function biomeAt (bot, pos) {
  try {
    const block = bot.blockAt(pos)
    const biome = block && block.biome
    return biome && biome.name ? ns(biome.name) : null
  } catch (_) { return null }
}

async function state (ctx) {
  const bot = requireBot(ctx)
  const p = bot.entity.position
  const effects = {}
  for (const [id, effect] of Object.entries(bot.entity.effects || {})) {
    const info = bot.registry.effects[id]
    effects[info ? ns(snake(info.name)) : `effect:${id}`] = effect.amplifier
  }
  const held = bot.heldItem
  return {
    inventory: counts(bot),
    copies: copies(bot),
    held: held ? ns(held.name) : null,
    position: [round(p.x), round(p.y), round(p.z)],
    block_position: feet(bot).toArray(),
    yaw: round(((toNotchianYaw(bot.entity.yaw) % 360) + 360) % 360, 1),
    health: bot.health,
    food: bot.food,
    xp_level: bot.experience ? bot.experience.level : 0,
    effects,
    biome: biomeAt(bot, p.floored()),
    alive: bot.health > 0,
    dimension: bot.game ? bot.game.dimension : null
  }
}

/** minecraft-data effect names are CamelCase ("NightVision"): the id is snake_case. */
function snake (name) { return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase() }

function describe (bot, entity) {
  const me = bot.entity.position
  const out = {
    id: entity.id,
    type: entity.name ? ns(entity.name) : null,
    kind: entity.type,
    position: [round(entity.position.x, 2), round(entity.position.y, 2), round(entity.position.z, 2)],
    distance: round(entity.position.distanceTo(me), 2)
  }
  if (entity.name === 'item') {
    const item = require('../pickup').droppedItem(bot, entity)
    if (item) out.item = { id: ns(item.name), count: item.count }
  }
  return out
}

async function entities (ctx, args) {
  const bot = requireBot(ctx)
  const radius = args.radius ?? 32
  const list = Object.values(bot.entities)
    .filter((e) => e !== bot.entity && e.position.distanceTo(bot.entity.position) <= radius)
    .map((e) => describe(bot, e))
    .sort((a, b) => a.distance - b.distance || a.id - b.id)
  return { entities: list }
}

module.exports = { describe, ops: { state: { fn: state, exclusive: false }, entities: { fn: entities, exclusive: false } } }
