'use strict'
/**
 * enchant through the enchanting table window: an unenchanted copy of the item into slot 0 (the
 * table offers nothing for an enchanted one), the option's lapis into slot 1, wait for the server's
 * offers (window properties 0-2 = level requirements), send enchant_item, wait for the enchanted
 * item in slot 0 (a book becomes an enchanted book), take both slots back and report.
 *
 * args: {item, option: "lowest"|"middle"|"highest", position?: [x,y,z], offer_timeout_ms?: 3000,
 *        open_timeout_ms?: 5000}
 * result: {enchanted, enchantments: [{id, level}], option, level_requirement, xp_level_before,
 *          xp_level_after, gained, lost}
 * errors: missing_item, needs_table, station_unreachable, not_enchantable, needs_level, enchant_failed
 */
const { OpError } = require('../errors')
const { requireBot } = require('../registry')
const { sleep } = require('../protocol')
const { counts, diff, ns, itemType, enchantmentsOf } = require('../inventory')
const win = require('../windows')
const { findStation, openStation, useStation } = require('../stations')

const OPTIONS = ['lowest', 'middle', 'highest']
const TARGET = 0
const LAPIS = 1

async function enchant (ctx, args, signal) {
  const bot = requireBot(ctx)
  const option = OPTIONS.indexOf(args.option || 'lowest')
  if (option < 0) throw new OpError('invalid_args', `option must be one of ${OPTIONS.join(', ')}`)
  const target = itemType(bot, args.item)
  const lapis = bot.registry.itemsByName.lapis_lazuli
  const before = counts(bot)
  if (!before[ns(target.name)]) throw new OpError('missing_item', `no ${ns(target.name)} in inventory`, { missing: { [ns(target.name)]: 1 } })
  if ((before['minecraft:lapis_lazuli'] || 0) < option + 1) {
    throw new OpError('missing_item', `option ${args.option} needs ${option + 1} lapis_lazuli`,
      { missing: { 'minecraft:lapis_lazuli': option + 1 - (before['minecraft:lapis_lazuli'] || 0) } })
  }
  const block = findStation(bot, 'enchanting_table', args.position, 'needs_table')
  const window = await openStation(bot, block, 'minecraft:enchantment', signal, args.open_timeout_ms)
  const levels = [null, null, null]
  const onProperty = (p) => { if (p.windowId === window.id && p.property < 3) levels[p.property] = p.value }
  const xpBefore = bot.experience.level
  const { problem, outcome } = await useStation(bot, window, { slots: [TARGET, LAPIS], onProperty, signal }, async () => {
    const plain = (item) => !enchantmentsOf(item).length // vanilla offers nothing for an enchanted item
    if (!await win.putInto(bot, window, target.id, TARGET, 1, plain)) {
      throw new OpError('not_enchantable', `${ns(target.name)} is already enchanted`)
    }
    await win.putInto(bot, window, lapis.id, LAPIS, option + 1)
    const start = Date.now()
    const timeout = args.offer_timeout_ms ?? 3000
    while (!levels.every((l) => l !== null && l >= 0) || !levels.some((l) => l > 0)) {
      if (Date.now() - start > timeout) break
      await sleep(25, signal)
    }
    const required = levels[option]
    if (!required) {
      return { problem: new OpError('not_enchantable', `the table offers no ${args.option || 'lowest'} enchantment for ${ns(target.name)}`, { levels }) }
    }
    if (xpBefore < required) return { problem: new OpError('needs_level', `needs experience level ${required}`, { levels }) }
    const changed = win.waitFor(window, `updateSlot:${TARGET}`, timeout, signal, (oldItem, newItem) => enchantmentsOf(newItem).length > 0)
    bot._client.write('enchant_item', { windowId: window.id, enchantment: option })
    try {
      const [, item] = await changed
      return { outcome: { enchanted: ns(item.name), enchantments: enchantmentsOf(item), option: OPTIONS[option], level_requirement: required } }
    } catch (err) {
      if (err.code !== 'wait_timeout') throw err
      return { problem: new OpError('enchant_failed', 'the server did not enchant the item', { levels }) }
    }
  })
  const change = diff(before, counts(bot))
  if (problem) throw new OpError(problem.code, problem.message, { ...problem.details, ...change })
  return { ...outcome, xp_level_before: xpBefore, xp_level_after: bot.experience.level, ...change }
}

module.exports = { ops: { enchant } }
