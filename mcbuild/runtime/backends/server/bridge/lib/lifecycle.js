'use strict'
/**
 * The bridge dies with its parent: when stdin closes, when the parent pid disappears (polled,
 * since a killed parent may leave stdin open through an inherited descriptor), and on SIGTERM/SIGINT.
 */
const PPID_POLL_MS = 500

function parentAlive (pid) {
  if (process.ppid !== pid) return false // re-parented: the original parent is gone
  try {
    process.kill(pid, 0)
    return true
  } catch (err) {
    return err.code === 'EPERM'
  }
}

/**
 * Call `shutdown(reason)` once on any of the exit conditions. The parent is the pid in
 * MCBUILD_BRIDGE_PARENT (set by the Python client, so a parent that died before Node started is
 * noticed too), else the current ppid.
 */
function watchParent (input, shutdown) {
  const parent = Number(process.env.MCBUILD_BRIDGE_PARENT) || process.ppid
  let done = false
  const once = (reason) => { if (!done) { done = true; clearInterval(timer); shutdown(reason) } }
  input.on('end', () => once('stdin closed'))
  input.on('close', () => once('stdin closed'))
  const timer = setInterval(() => { if (!parentAlive(parent)) once('parent gone') }, PPID_POLL_MS)
  timer.unref()
  process.on('SIGTERM', () => once('SIGTERM'))
  process.on('SIGINT', () => once('SIGINT'))
}

module.exports = { watchParent }
