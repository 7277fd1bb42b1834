'use strict'
/**
 * Milestones from the server's `advancements` packets. A 1.19 advancement is done when every
 * requirement group (an AND of ORs of criteria) has a criterion with an obtained date. The done
 * set is kept per bot; an `advancements` event is emitted whenever it changes. Recipe-unlock
 * advancements (`<ns>:recipes/...`) name the pack's recipes and are never reported.
 *
 * op advancements: {} -> {done: [ids, sorted]}
 */
const { requireBot } = require('../registry')

class AdvancementTracker {
  constructor () {
    this.requirements = new Map() // id -> [[criterion, ...], ...]
    this.obtained = new Map() // id -> Set(criterion)
    this.done = new Set()
  }

  /** Apply one packet; returns the ids that became done. */
  apply (packet) {
    if (packet.reset) {
      this.requirements.clear()
      this.obtained.clear()
    }
    for (const { key, value } of packet.advancementMapping || []) {
      this.requirements.set(key, value.requirements || [])
    }
    for (const id of packet.identifiers || []) { // removed advancements
      this.requirements.delete(id)
      this.obtained.delete(id)
    }
    for (const { key, value } of packet.progressMapping || []) {
      const got = this.obtained.get(key) || new Set()
      for (const { criterionIdentifier, criterionProgress } of value) {
        if (criterionProgress !== undefined && criterionProgress !== null) got.add(criterionIdentifier)
        else got.delete(criterionIdentifier)
      }
      this.obtained.set(key, got)
    }
    const previous = this.done
    this.done = new Set([...this.requirements].filter(([id, groups]) => isDone(groups, this.obtained.get(id))
      && !isRecipe(id)).map(([id]) => id))
    return { added: [...this.done].filter((id) => !previous.has(id)).sort(), removed: [...previous].filter((id) => !this.done.has(id)).sort() }
  }

  sorted () { return [...this.done].sort() }
}

function isDone (groups, got) {
  if (!groups.length || !got) return false
  return groups.every((group) => group.some((criterion) => got.has(criterion)))
}

function isRecipe (id) { return /^[^:]+:recipes\//.test(id) }

module.exports = {
  AdvancementTracker,
  onBot (ctx, bot) {
    const tracker = new AdvancementTracker()
    bot._mcbuildAdvancements = tracker
    bot._client.on('advancements', (packet) => {
      const { added, removed } = tracker.apply(packet)
      if (added.length || removed.length) ctx.emit('advancements', { done: tracker.sorted(), added, removed })
    })
  },
  ops: {
    advancements: { fn: async (ctx) => ({ done: requireBot(ctx)._mcbuildAdvancements.sorted() }), exclusive: false }
  }
}
