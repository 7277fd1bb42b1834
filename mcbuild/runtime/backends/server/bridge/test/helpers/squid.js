'use strict'
/**
 * flying-squid 1.12.0 serving a COPY of a real save (layer 3). flying-squid rewrites a 1.19
 * level.dat (it expects the pre-1.16 RandomSeed) and picks a random spawn, so the spawn is read
 * from the save's level.dat before the server touches the copy, and imposed on the server.
 * Loopback only, on a free port.
 */
const fs = require('fs')
const os = require('os')
const path = require('path')
const zlib = require('zlib')
const nbt = require('prismarine-nbt')
const { Vec3 } = require('vec3')

/** SpawnX/Y/Z from a 1.19 level.dat (gzip NBT: root.Data). */
async function readSpawn (levelDat) {
  const { parsed } = await nbt.parse(zlib.gunzipSync(fs.readFileSync(levelDat)))
  const data = nbt.simplify(parsed).Data
  return new Vec3(data.SpawnX, data.SpawnY, data.SpawnZ)
}

/** Run flying-squid in this process (used by the child started by startSquid). */
async function serveSquid (save) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'mcbuild-squid-'))
  fs.cpSync(save, dir, { recursive: true })
  const spawn = await readSpawn(path.join(dir, 'level.dat'))
  const squid = require('flying-squid')
  const serv = squid.createMCServer({
    motd: 'mcbuild layer 3',
    host: '127.0.0.1',
    port: 0,
    'max-players': 2,
    'online-mode': false,
    logging: false,
    gameMode: 0,
    difficulty: 0,
    worldFolder: dir,
    generation: { name: 'superflat', options: { worldHeight: 384 } },
    kickTimeout: 60000,
    plugins: {},
    modpe: false,
    'view-distance': 4,
    'player-list-text': { header: { text: '' }, footer: { text: '' } },
    'everybody-op': true,
    'max-entities': 100,
    version: '1.19'
  })
  serv.getSpawnPoint = async () => spawn.clone()
  const port = await new Promise((resolve, reject) => {
    serv.once('listening', resolve)
    serv.once('error', reject)
  })
  return {
    serv,
    port,
    spawn,
    dir,
    async close () {
      try { await serv.destroy() } catch (_) {}
      fs.rmSync(dir, { recursive: true, force: true })
    }
  }
}

/**
 * flying-squid in a child process (it leaves timers running after destroy(), which would keep
 * a test process alive): resolves with {port, spawn, close()}.
 */
function startSquid (save) {
  const { spawn } = require('child_process')
  const child = spawn(process.execPath, [__filename, save], { stdio: ['ignore', 'pipe', 'inherit'] })
  const exited = new Promise((resolve) => child.on('exit', resolve))
  return new Promise((resolve, reject) => {
    let buf = ''
    child.on('exit', (code) => reject(new Error(`flying-squid exited with ${code} before listening`)))
    child.stdout.on('data', (d) => {
      buf += d
      const line = buf.split('\n').find((l) => l.startsWith('{"port"'))
      if (!line) return
      const info = JSON.parse(line)
      child.stdout.resume()
      resolve({
        port: info.port,
        spawn: new Vec3(...info.spawn),
        async close () {
          child.kill('SIGTERM') // removes its copy of the save
          const timer = setTimeout(() => child.kill('SIGKILL'), 3000)
          await exited
          clearTimeout(timer)
        }
      })
    })
  })
}

if (require.main === module) {
  serveSquid(process.argv[2]).then((s) => {
    process.stdout.write(JSON.stringify({ port: s.port, spawn: [s.spawn.x, s.spawn.y, s.spawn.z] }) + '\n')
    const stop = () => s.close().finally(() => process.exit(0))
    process.on('SIGTERM', stop)
    const parent = process.ppid
    setInterval(() => { if (process.ppid !== parent) stop() }, 500) // the test process died
  }, (err) => { process.stderr.write(String(err && err.stack) + '\n'); process.exit(1) })
}

module.exports = { startSquid, serveSquid, readSpawn }
