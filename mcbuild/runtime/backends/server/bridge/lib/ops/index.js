'use strict'
/** The real op modules, in load order (see lib/registry.js for the module shape). */
module.exports = [
  require('./session'),
  require('./state'),
  require('./advancements'),
  require('./scanning'),
  require('./movement'),
  require('./equipping'),
  require('./digging'),
  require('./placing'),
  require('./attacking'),
  require('./crafting'),
  require('./smelting'),
  require('./enchanting'),
  require('./harness')
]
