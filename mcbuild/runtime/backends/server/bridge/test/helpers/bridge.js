'use strict'
/** Test helper: the bridge as a child process, spoken to over NDJSON exactly like Python does. */
const { spawn } = require('child_process')
const path = require('path')
const readline = require('readline')

function startBridge (env = {}) {
  const child = spawn(process.execPath, [path.join(__dirname, '..', '..', 'index.js')], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...env }
  })
  const pending = new Map()
  const events = []
  const stray = [] // stdout lines that are neither responses to us nor events
  const stderr = []
  let nextId = 1
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    let msg
    try { msg = JSON.parse(line) } catch (_) { stray.push(line); return }
    if (msg.event && msg.id === undefined) { events.push(msg); return }
    const p = pending.get(msg.id)
    if (!p) { stray.push(line); return }
    pending.delete(msg.id)
    p(msg)
  })
  child.stderr.on('data', (d) => { stderr.push(String(d)); if (process.env.BRIDGE_DEBUG) process.stderr.write(d) })
  const exited = new Promise((resolve) => child.on('exit', resolve))

  /** Resolve with the full response object ({ok, result} or {ok: false, error}). */
  function call (op, args = {}, deadlineMs = 20000) {
    const id = nextId++
    return new Promise((resolve) => {
      pending.set(id, resolve)
      child.stdin.write(JSON.stringify({ id, op, args, deadline_ms: deadlineMs }) + '\n')
    })
  }
  /** The result of a successful call, or throws with the error code in the message. */
  async function request (op, args, deadlineMs) {
    const res = await call(op, args, deadlineMs)
    if (!res.ok) {
      const err = new Error(`${op}: ${res.error.code}: ${res.error.message}`)
      err.code = res.error.code
      err.details = res.error.details
      throw err
    }
    return res.result
  }
  async function close () {
    child.stdin.end()
    const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
    await exited
    clearTimeout(timer)
  }
  return { child, call, request, events, stray, stderr, close }
}

module.exports = { startBridge }
