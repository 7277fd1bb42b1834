'use strict'
/** An op-module list (the stub plus extension ops), as MCBUILD_BRIDGE_OPS may name; `listed`
 * answers with a result that is not an object and `garbled` writes bytes that are not UTF-8. */
module.exports = [
  require('./stub_ops'),
  {
    ops: {
      extended: { fn: async (ctx, args) => ({ extended: true, args }), exclusive: false },
      listed: { fn: async () => [1, 2], exclusive: false },
      garbled: { fn: async () => { process.stdout.write(Buffer.from([0xff, 0xfe, 0x0a])); return {} }, exclusive: false }
    }
  }
]
