#!/usr/bin/env node
'use strict'
/**
 * mcbuild server bridge: one process per bot, newline-delimited JSON on stdin/stdout.
 *
 *   node index.js            real ops (mineflayer; see lib/ops/)
 *   MCBUILD_BRIDGE_OPS=path  load the op module(s) from `path` instead: one module or a list, e.g.
 *                            [...require('<bridge>/lib/ops'), extra] (tests: test/stub_ops.js)
 *
 * See docs/server.md for the protocol. stdout carries protocol lines only; logs go to stderr.
 */
const path = require('path')
const { Protocol } = require('./lib/protocol')
const { watchParent } = require('./lib/lifecycle')
const { loadOps } = require('./lib/registry')

function log (...parts) { process.stderr.write(`[bridge ${process.pid}] ${parts.join(' ')}\n`) }

/** Libraries must not write to stdout (it carries the protocol): route console output to stderr. */
function quietConsole () {
  const util = require('util')
  for (const name of ['log', 'info', 'warn', 'debug', 'error']) {
    console[name] = (...args) => process.stderr.write(util.format(...args) + '\n')
  }
}

function main () {
  quietConsole()
  const override = process.env.MCBUILD_BRIDGE_OPS
  const loaded = override ? require(path.resolve(override)) : require('./lib/ops')
  const modules = Array.isArray(loaded) ? loaded : [loaded] // one module or a list (e.g. [...real, extra])
  const ctx = { bot: null, log }
  const ops = loadOps(modules, ctx)
  const out = process.stdout
  const protocol = new Protocol({ input: process.stdin, write: (line) => out.write(line + '\n'), ops, ctx })
  ctx.emit = (name, fields) => protocol.event(name, fields)

  let exiting = false
  function shutdown (reason) {
    if (exiting) return
    exiting = true
    log('exiting:', reason)
    protocol.close()
    try { if (ctx.bot) ctx.bot.quit() } catch (_) {}
    // let the quit packet and the last protocol lines flush, then leave
    out.write('', () => setTimeout(() => process.exit(0), 50).unref())
    setTimeout(() => process.exit(0), 1000).unref()
  }
  ctx.shutdown = shutdown
  watchParent(process.stdin, shutdown)
  protocol.event('ready', { pid: process.pid, ops: [...ops.keys()].sort() })
}

main()
