'use strict'
/**
 * Newline-delimited JSON over stdio.
 *
 * Requests  {"id": n, "op": "...", "args": {...}, "deadline_ms": N}
 * Responses {"id": n, "ok": true, "result": {...}} | {"id": n, "ok": false, "error": {"code", "message"}}
 * Events    {"event": "...", ...} (unsolicited)
 *
 * Every request has a deadline enforced here: when it passes, the request is answered with a
 * `timeout` error and the op's AbortSignal fires (ops stop moving/clicking). Ops marked
 * exclusive run one at a time (they drive the body); the others (state queries) run at once.
 * stdout carries nothing but protocol lines; logs go to stderr.
 */
const readline = require('readline')
const { OpError, CODES } = require('./errors')

const DEFAULT_DEADLINE_MS = 30000
const MAX_DEADLINE_MS = 15 * 60 * 1000

class Protocol {
  /**
   * @param {object} opts
   * @param {NodeJS.ReadableStream} opts.input
   * @param {(line: string) => void} opts.write  writes one line (no newline) to the peer
   * @param {Map<string, {fn: Function, exclusive: boolean}>} opts.ops
   * @param {object} opts.ctx  passed to every op as its first argument
   */
  constructor ({ input, write, ops, ctx }) {
    this.write = write
    this.ops = ops
    this.ctx = ctx
    this.queue = Promise.resolve() // tail of the exclusive-op chain
    this.closed = false
    this.rl = readline.createInterface({ input, crlfDelay: Infinity })
    this.rl.on('line', (line) => this.onLine(line))
  }

  send (obj) {
    if (this.closed) return
    this.write(JSON.stringify(obj))
  }

  /** Emit an unsolicited event. */
  event (name, fields = {}) {
    this.send({ ...fields, event: name })
  }

  onLine (line) {
    if (!line.trim()) return
    let req
    try {
      req = JSON.parse(line)
    } catch (err) {
      return this.fail(null, new OpError(CODES.BAD_REQUEST, `not JSON: ${err.message}`))
    }
    if (req === null || typeof req !== 'object' || Array.isArray(req)) {
      return this.fail(null, new OpError(CODES.BAD_REQUEST, 'a request is a JSON object'))
    }
    const id = Number.isInteger(req.id) ? req.id : null
    if (id === null) return this.fail(null, new OpError(CODES.BAD_REQUEST, 'missing integer id'))
    if (typeof req.op !== 'string') return this.fail(id, new OpError(CODES.BAD_REQUEST, 'missing op'))
    const op = this.ops.get(req.op)
    if (!op) return this.fail(id, new OpError(CODES.UNKNOWN_OP, `unknown op ${req.op}`))
    const args = req.args ?? {}
    if (typeof args !== 'object' || Array.isArray(args)) {
      return this.fail(id, new OpError(CODES.BAD_REQUEST, 'args must be an object'))
    }
    let deadline = req.deadline_ms ?? DEFAULT_DEADLINE_MS
    if (typeof deadline !== 'number' || !(deadline > 0)) {
      return this.fail(id, new OpError(CODES.BAD_REQUEST, 'deadline_ms must be a positive number'))
    }
    deadline = Math.min(deadline, MAX_DEADLINE_MS)
    this.run(id, req.op, op, args, deadline)
  }

  run (id, name, op, args, deadlineMs) {
    const abort = new AbortController()
    let answered = false
    const timer = setTimeout(() => {
      answered = true
      abort.abort()
      this.fail(id, new OpError(CODES.TIMEOUT, `${name} exceeded its deadline of ${deadlineMs} ms`))
    }, deadlineMs)
    const call = async () => {
      if (answered) return // timed out while queued
      return op.fn(this.ctx, args, abort.signal)
    }
    let promise
    if (op.exclusive) {
      promise = this.queue.then(call)
      this.queue = promise.catch(() => {})
    } else {
      promise = call()
    }
    promise.then((result) => {
      if (answered) return
      answered = true
      clearTimeout(timer)
      this.send({ id, ok: true, result: result ?? {} })
    }, (err) => {
      if (answered) return
      answered = true
      clearTimeout(timer)
      this.fail(id, err)
    })
  }

  fail (id, err) {
    const known = err instanceof OpError
    if (!known) process.stderr.write(`[bridge] op error: ${err && err.stack ? err.stack : err}\n`)
    const error = { code: known ? err.code : CODES.INTERNAL, message: String(err && err.message ? err.message : err) }
    if (known && err.details !== undefined) error.details = err.details
    this.send({ id, ok: false, error })
  }

  close () {
    this.closed = true
    this.rl.close()
  }
}

/** Resolve after `ms`, or reject with a timeout error when `signal` aborts first. */
function sleep (ms, signal) {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new OpError(CODES.TIMEOUT, 'aborted'))
    const t = setTimeout(() => { signal?.removeEventListener('abort', onAbort); resolve() }, ms)
    function onAbort () { clearTimeout(t); reject(new OpError(CODES.TIMEOUT, 'aborted')) }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

/** Throw the op's timeout if its deadline already passed (call between steps of long ops). */
function checkAbort (signal) {
  if (signal?.aborted) throw new OpError(CODES.TIMEOUT, 'aborted')
}

module.exports = { Protocol, sleep, checkAbort, DEFAULT_DEADLINE_MS }
