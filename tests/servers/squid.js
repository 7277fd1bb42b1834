'use strict'
/**
 * Layer-3 test server for tests/test_server_backend.py: flying-squid (from the bridge's
 * node_modules) serving a copy of a built save, through the bridge's own test helper.
 * usage: node squid.js <bridge_dir> <save>; prints {"port", "spawn"} once listening and runs
 * until stdin closes.
 */
const path = require('path')
const { startSquid } = require(path.join(path.resolve(process.argv[2]), 'test', 'helpers', 'squid.js'))

startSquid(path.resolve(process.argv[3])).then((squid) => {
  process.stdout.write(JSON.stringify({ port: squid.port, spawn: [squid.spawn.x, squid.spawn.y, squid.spawn.z] }) + '\n')
  const stop = () => squid.close().finally(() => process.exit(0))
  process.stdin.on('end', stop)
  process.stdin.on('close', stop)
  process.stdin.resume()
}).catch((err) => {
  process.stderr.write(String(err && err.stack) + '\n')
  process.exit(1)
})
