'use strict'
/**
 * A scripted 1.19 server built on minecraft-protocol's createServer (the pattern of mineflayer's
 * internal tests): it logs one player in at a fixed spot on a flat chunk, keeps an authoritative
 * model of its windows, applies the client's clicks to it and answers like vanilla does (a
 * set_slot on the result slot after every grid change). What a grid, furnace or enchantment
 * produces is decided by the test's script, so the tests can prove the bridge reports what the
 * SERVER decided rather than what minecraft-data says.
 */
const mc = require('minecraft-protocol')
const { Vec3 } = require('vec3')

const VERSION = '1.19'
const registry = require('prismarine-registry')(VERSION)
const Chunk = require('prismarine-chunk')(VERSION)
const Item = require('prismarine-item')(registry)

const WINDOW_TYPES = { crafting: 11, enchantment: 12, furnace: 13 }
const SPAWN = { x: 0.5, y: 65, z: 0.5 }

function item (name, count = 1, nbt) {
  const it = new Item(registry.itemsByName[name].id, count)
  if (nbt) it.nbt = nbt
  return it
}

function flatChunk (blocks) {
  const chunk = new Chunk({ minY: -64, worldHeight: 384 })
  const stone = registry.blocksByName.stone.defaultState
  for (let x = 0; x < 16; x++) for (let z = 0; z < 16; z++) chunk.setBlockStateId(new Vec3(x, 64, z), stone)
  for (const [name, [x, y, z]] of blocks) chunk.setBlockStateId(new Vec3(x, y, z), registry.blocksByName[name].defaultState)
  return chunk
}

function chunkPacket (chunk, x, z) {
  const lights = chunk.dumpLight()
  return {
    x,
    z,
    heightmaps: { type: 'compound', name: '', value: { MOTION_BLOCKING: { type: 'longArray', value: new Array(37).fill([0, 0]) } } },
    chunkData: chunk.dump(),
    blockEntities: [],
    trustEdges: false,
    skyLightMask: lights.skyLightMask,
    blockLightMask: lights.blockLightMask,
    emptySkyLightMask: lights.emptySkyLightMask,
    emptyBlockLightMask: lights.emptyBlockLightMask,
    skyLight: lights.skyLight,
    blockLight: lights.blockLight
  }
}

/**
 * Start the server. `script` may define:
 *   inventory: {slot: Item}             initial player inventory (window 0 numbering)
 *   blocks: [[name, [x,y,z]], ...]      blocks in chunk 0,0 (stations)
 *   craftResult(gridItems, size) -> Item|null|undefined   result for a grid (undefined: send no set_slot)
 *   smelt(input) -> Item|null           furnace output per input item
 *   convert: {from, to: Item}           replace `from` in the inventory shortly after it arrives
 *   enchant(item, option) -> Item        the enchanted item
 *   mobs: [{id, type, pos: [x,y,z], hits, drop: {name, count}}]   mobs that die after `hits` attacks,
 *                                       dropping an item entity the player picks up by walking near it
 *   drops: [{id, pos: [x,y,z], drop: {name, count}}]   item entities lying on the ground at join
 *   onJoin(client, server)              extra packets after spawn (advancements...)
 */
function startServer (script = {}) {
  const server = mc.createServer({ 'online-mode': false, version: VERSION, port: 0, host: '127.0.0.1', motd: 'scripted' })
  const ready = new Promise((resolve) => server.on('listening', () => resolve(server.socketServer.address().port)))
  const log = []
  server.on('playerJoin', (client) => join(client, script, log, server))
  return { server, ready, log, close: () => new Promise((resolve) => { server.close(); setTimeout(resolve, 50) }) }
}

function join (client, script, log, server) {
  const S = { stateId: 1, windows: new Map(), cursor: null, open: null }
  const inv = new Array(46).fill(null)
  for (const [slot, it] of Object.entries(script.inventory || {})) inv[slot] = it
  S.windows.set(0, { id: 0, kind: 'inventory', slots: inv, grid: [1, 5], size: 2, invStart: 9 })
  client.on('error', () => {})
  client.write('login', { ...registry.loginPacket, entityId: 1, gameMode: 0 })
  client.write('map_chunk', chunkPacket(flatChunk(script.blocks || []), 0, 0))
  client.write('window_items', { windowId: 0, stateId: S.stateId, items: inv.map(Item.toNotch), carriedItem: Item.toNotch(null) })
  client.write('position', { ...SPAWN, yaw: 0, pitch: 0, flags: 0, teleportId: 1, dismountVehicle: false })
  client.write('update_health', { health: 20, food: 20, foodSaturation: 5 })
  client.write('experience', { experienceBar: 0, level: 30, totalExperience: 1395 })
  const mobs = new Map()
  const drops = new Map()
  for (const mob of script.mobs || []) {
    mobs.set(mob.id, { ...mob, hitsTaken: 0 })
    spawnEntity(mob.id, mob.type, mob.pos)
  }
  for (const d of script.drops || []) dropItem(d.id, d.pos, d.drop)
  if (script.onJoin) script.onJoin(client, server)

  function spawnEntity (id, type, [x, y, z], objectData = 0) {
    client.write('spawn_entity', {
      entityId: id,
      objectUUID: `00000000-0000-4000-8000-${String(id).padStart(12, '0')}`,
      type: registry.entitiesByName[type].id,
      x, y, z, pitch: 0, yaw: 0, headPitch: 0, objectData, velocity: { x: 0, y: 0, z: 0 }
    })
  }

  function hit (id) {
    const mob = mobs.get(id)
    if (!mob || ++mob.hitsTaken < mob.hits) return
    mobs.delete(id)
    client.write('entity_status', { entityId: id, entityStatus: 3 })
    client.write('entity_destroy', { entityIds: [id] })
    dropItem(id + 1000, mob.pos, mob.drop)
  }

  /** An item entity the player picks up when within 1.5 blocks of it. */
  function dropItem (dropId, pos, { name, count }) {
    drops.set(dropId, { pos, item: item(name, count) })
    spawnEntity(dropId, 'item', pos, 1)
    client.write('entity_metadata', { entityId: dropId, metadata: [{ key: 8, type: 6, value: Item.toNotch(item(name, count)) }] })
  }

  function moved (pos) {
    for (const [id, drop] of drops) {
      const [x, y, z] = drop.pos
      if (Math.hypot(pos.x - x, pos.y - y, pos.z - z) > 1.5) continue
      drops.delete(id)
      client.write('collect', { collectedEntityId: id, collectorEntityId: 1, pickupItemCount: drop.item.count })
      client.write('entity_destroy', { entityIds: [id] })
      const inv0 = S.windows.get(0)
      for (const j of store(inv0, drop.item)) send(0, j, inv0.slots[j])
    }
  }

  const send = (windowId, slot, it) => client.write('set_slot', { windowId, stateId: ++S.stateId, slot, item: Item.toNotch(it) })
  const playerSlots = (w) => ({ start: w.invStart, end: w.invStart + 36 })

  /** Move `it` into the window's player-inventory part (hotbar first like shift-click); returns changed slots. */
  function store (w, it) {
    const { start, end } = playerSlots(w)
    const order = [...range(end - 9, end), ...range(start, end - 9)]
    for (const i of order) {
      const s = w.slots[i]
      if (s && s.type === it.type && s.count + it.count <= s.stackSize && !it.nbt) { s.count += it.count; return [i] }
    }
    for (const i of order) if (!w.slots[i]) { w.slots[i] = it; return [i] }
    return []
  }

  function gridChanged (w) {
    if (!script.craftResult) return
    const cells = w.slots.slice(w.grid[0], w.grid[0] + w.size * w.size)
    const result = script.craftResult(cells, w.size)
    if (result === undefined) return // the script sends nothing at all
    w.slots[0] = result
    send(w.id, 0, result)
  }

  function smeltTick (w) {
    if (!script.smelt) return
    const [input, fuel, output] = w.slots
    if (!input || !fuel) return
    const out = script.smelt(input)
    if (!out) return
    if (output && output.type !== out.type) return
    w.slots[2] = output ? (output.count += out.count, output) : out
    input.count -= 1; if (!input.count) w.slots[0] = null
    fuel.count -= 1; if (!fuel.count) w.slots[1] = null
    client.write('craft_progress_bar', { windowId: w.id, property: 0, value: 200 })
    for (const slot of [0, 1, 2]) send(w.id, slot, w.slots[slot])
    if (w.slots[0] && w.slots[1]) setTimeout(() => smeltTick(w), 100)
  }

  function enchantOffers (w) {
    if (w.kind !== 'enchantment') return
    const levels = w.slots[0] && w.slots[1] ? [3, 12, 30] : [0, 0, 0]
    // one flush, as the game sends a tick's packets: a reader must never see some offers without the rest
    client.socket.cork()
    levels.forEach((value, property) => client.write('craft_progress_bar', { windowId: w.id, property, value }))
    process.nextTick(() => client.socket.uncork())
  }

  /** After the player gets `from`, the "pack" replaces it (like M01/M03's smelting marker). */
  function convertLater (w) {
    const c = script.convert
    if (!c) return
    setTimeout(() => {
      const win = S.windows.get(w.id) || S.windows.get(0) // the open view of the player inventory
      const { start, end } = playerSlots(win)
      for (let i = start; i < end; i++) {
        const s = win.slots[i]
        if (s && s.name === c.from) {
          win.slots[i] = null
          send(win.id, i, null)
          for (const j of store(win, item(c.to.name, c.to.count))) send(win.id, j, win.slots[j])
        }
      }
    }, 150)
  }

  client.on('packet', (data, meta) => {
    log.push({ name: meta.name, data })
    if (meta.name === 'use_entity' && data.mouse === 1) hit(data.target)
    if ((meta.name === 'position' || meta.name === 'position_look') && drops.size) moved(data)
    if (meta.name === 'block_place') {
      const pos = data.location
      const block = (script.blocks || []).find(([, p]) => p[0] === pos.x && p[1] === pos.y && p[2] === pos.z)
      if (!block) return
      const kind = { crafting_table: 'crafting', furnace: 'furnace', enchanting_table: 'enchantment' }[block[0]]
      openWindow(kind)
    } else if (meta.name === 'window_click') {
      click(data)
    } else if (meta.name === 'close_window') {
      closeWindow(data.windowId)
    } else if (meta.name === 'enchant_item') {
      const w = S.windows.get(data.windowId)
      const option = data.enchantment
      if (!w || !w.slots[0] || !w.slots[1] || w.slots[1].count < option + 1) return
      w.slots[0] = script.enchant(w.slots[0], option)
      w.slots[1].count -= option + 1; if (!w.slots[1].count) w.slots[1] = null
      send(w.id, 0, w.slots[0]); send(w.id, 1, w.slots[1])
      client.write('experience', { experienceBar: 0, level: 30 - (option + 1), totalExperience: 1000 })
    }
  })

  function openWindow (kind) {
    const inv0 = S.windows.get(0)
    const head = { crafting: 10, furnace: 3, enchantment: 2 }[kind]
    const slots = new Array(head).fill(null)
    // the player part mirrors window 0's slots 9..44
    for (let i = 9; i <= 44; i++) slots.push(inv0.slots[i])
    const w = { id: 7, kind, slots, grid: [1, 10], size: 3, invStart: head }
    S.windows.set(7, w)
    S.open = w
    client.write('open_window', { windowId: 7, inventoryType: WINDOW_TYPES[kind], windowTitle: JSON.stringify({ text: kind }) })
    client.write('window_items', { windowId: 7, stateId: ++S.stateId, items: slots.map(Item.toNotch), carriedItem: Item.toNotch(null) })
  }

  function closeWindow (id) {
    const w = S.windows.get(id) || S.windows.get(0)
    const inv0 = S.windows.get(0)
    // vanilla returns crafting-grid items to the inventory on close
    const gridEnd = w.kind === 'inventory' ? 5 : (w.kind === 'crafting' ? 10 : 0)
    const back = []
    for (let i = 1; i < gridEnd; i++) if (w.slots[i]) { back.push(w.slots[i]); w.slots[i] = null }
    if (w.kind === 'crafting' || w.kind === 'inventory') w.slots[0] = null
    if (w.id !== 0) {
      for (let i = 0; i < 36; i++) inv0.slots[9 + i] = w.slots[w.invStart + i]
      S.windows.delete(w.id)
      S.open = null
    }
    for (const it of back) store(inv0, it)
    client.write('window_items', { windowId: 0, stateId: ++S.stateId, items: inv0.slots.map(Item.toNotch), carriedItem: Item.toNotch(null) })
  }

  /** The clicks the bridge uses: pick up / put down (mode 0, buttons 0-1) and shift-click (mode 1). */
  /**
   * A window click, then the vanilla resync: every slot the client says it changed is sent back
   * with the server's content (ServerGamePacketListenerImpl trusts no client prediction).
   */
  function click (data) {
    applyClick(data)
    const w = S.windows.get(data.windowId)
    if (!w) return
    for (const c of data.changedSlots || []) {
      if (c.location >= 0 && c.location < w.slots.length) send(w.id, c.location, w.slots[c.location])
    }
  }

  function applyClick (data) {
    const w = S.windows.get(data.windowId)
    if (!w) return
    const slot = data.slot
    const isGrid = slot >= w.grid[0] && slot < w.grid[0] + w.size * w.size && w.kind !== 'furnace' && w.kind !== 'enchantment'
    if (data.mode === 1) {
      const it = w.slots[slot]
      if (!it) return
      const isResult = slot === 0 && (w.kind === 'crafting' || w.kind === 'inventory')
      const isOutput = w.kind === 'furnace' && slot === 2
      w.slots[slot] = null
      const changed = store(w, it)
      if (isResult) {
        for (let i = w.grid[0]; i < w.grid[0] + w.size * w.size; i++) {
          const s = w.slots[i]
          if (s) { s.count -= 1; if (!s.count) w.slots[i] = null; changed.push(i) }
        }
        gridChanged(w)
      }
      for (const i of [slot, ...changed]) send(w.id, i, w.slots[i])
      if (isOutput) convertLater(w)
      return
    }
    if (data.mode !== 0) return
    const here = w.slots[slot]
    if (!S.cursor) {
      if (!here) return
      if (data.mouseButton === 0) { S.cursor = here; w.slots[slot] = null } else {
        const half = Math.ceil(here.count / 2)
        S.cursor = item(here.name, half); here.count -= half; if (!here.count) w.slots[slot] = null
      }
    } else if (!here) {
      if (data.mouseButton === 0) { w.slots[slot] = S.cursor; S.cursor = null } else {
        w.slots[slot] = item(S.cursor.name, 1, S.cursor.nbt); S.cursor.count -= 1; if (!S.cursor.count) S.cursor = null
      }
    } else if (here.type === S.cursor.type) {
      const n = data.mouseButton === 0 ? Math.min(S.cursor.count, here.stackSize - here.count) : Math.min(1, here.stackSize - here.count)
      here.count += n; S.cursor.count -= n; if (!S.cursor.count) S.cursor = null
    } else {
      w.slots[slot] = S.cursor; S.cursor = here
    }
    if (isGrid) gridChanged(w)
    if (w.kind === 'furnace' && slot <= 1) setTimeout(() => smeltTick(w), 100)
    if (w.kind === 'enchantment' && slot <= 1) enchantOffers(w)
  }
}

function range (a, b) { const out = []; for (let i = a; i < b; i++) out.push(i); return out }

module.exports = { startServer, item, registry, SPAWN }
