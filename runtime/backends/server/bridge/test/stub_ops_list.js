'use strict'
/** An op-module list (the stub plus one extension op), as MCBUILD_BRIDGE_OPS may name. */
module.exports = [
  require('./stub_ops'),
  { ops: { extended: { fn: async (ctx, args) => ({ extended: true, args }), exclusive: false } } }
]
