"""The episode terrain's local reads (``episode_terrain.Terrain``) against plain readings of the whole
area, after edits: the open spots a block can be placed on and the open cell the body works from."""
from __future__ import annotations

import random

import numpy as np

from mcbuild.runtime.backends.sim import synthetic
from mcbuild.runtime.backends.sim.episode_terrain import Terrain
from mcbuild.runtime.backends.sim.world import NEIGHBOURS, WorldData, derive
from mcbuild.runtime.body.blocks import physics


def edited_terrain(seed: int) -> Terrain:
    """A terrain on the synthetic world, with an enclosed cave, after a few dozen blocks were broken
    and a few placed."""
    data = synthetic.world_data()
    blocks = data.blocks.copy()
    blocks[30:34, 20:23, 30:34] = 0          # an enclosed cave under the grass (array y 24) and dirt
    world = derive(WorldData(data.palette, blocks, data.origin, data.spawn, data.biome_palette, data.biomes))
    terrain, rng = Terrain(world), random.Random(seed)
    origin = np.array(terrain._o)
    for step in range(40):
        if step % 5 == 4:
            open_cells = np.argwhere(terrain.label_open[terrain.labels] & (terrain.blocks == 0))
            cell = open_cells[rng.randrange(len(open_cells))]
            terrain.place_block(tuple(int(v) for v in cell + origin), "minecraft:dirt")
        else:
            reachable = np.argwhere(terrain.reach == 1)
            terrain.break_block(tuple(int(v) for v in reachable[rng.randrange(len(reachable))] + origin))
    return terrain


def test_open_spots_and_open_neighbours_equal_a_plain_reading_of_the_area():
    terrain, rng = edited_terrain(5), random.Random(6)
    (ox, oy, oz), (nx, ny, nz) = terrain._o, terrain._n
    is_open = terrain.label_open[terrain.labels]
    empty = terrain.ids_of(physics().air)
    air = set(empty.tolist())
    blocks, solid = terrain.blocks, terrain.solid

    def inside(x: int, y: int, z: int) -> bool:
        return 0 <= x < nx and 0 <= y < ny and 0 <= z < nz

    open_air = [tuple(int(v) for v in c) for c in np.argwhere(is_open & (blocks == 0))]
    shut_air = [tuple(int(v) for v in c) for c in np.argwhere(~is_open & (blocks == 0))]    # the cave
    exposed = [tuple(int(v) for v in c) for c in np.argwhere(terrain.reach == 1)]
    assert shut_air
    chosen = 0
    for k in range(400):
        if k % 5 < 2:               # in the air: where the body stands, often beside the edits, or the cave
            cells = shut_air if k % 5 else open_air
            x, y, z = cells[rng.randrange(len(cells))]
            x, y, z = x + rng.randrange(-1, 2), y + rng.randrange(-1, 2), z + rng.randrange(-1, 2)
        elif k % 5 < 4:             # a block the body works on
            x, y, z = exposed[rng.randrange(len(exposed))]
        else:                       # anywhere, at the border and outside too
            x, y, z = rng.randrange(-2, nx + 2), rng.randrange(-2, ny + 2), rng.randrange(-2, nz + 2)
        radius = rng.choice([1, 2, 3])
        spots = sorted(((a - x) ** 2 + (b - y) ** 2 + (c - z) ** 2, a, b, c)
                       for a in range(x - radius, x + radius + 1) for b in range(y - 1, y + 2)
                       for c in range(z - radius, z + radius + 1)
                       if inside(a, b, c) and b >= 1 and (a, c) != (x, z) and int(blocks[a, b, c]) in air
                       and is_open[a, b, c] and solid[blocks[a, b - 1, c]])
        got = terrain.open_spots((x + ox, y + oy, z + oz), radius, empty)
        assert got == [(a + ox, b + oy, c + oz) for _, a, b, c in spots], ((x, y, z), radius)

        near = (x + rng.randrange(-3, 4), y + rng.randrange(-3, 4), z + rng.randrange(-3, 4))
        if inside(x, y, z) and is_open[x, y, z]:
            expected: tuple[int, int, int] | None = (x, y, z)
        else:
            faces = [(x + dx, y + dy, z + dz) for dx, dy, dz in NEIGHBOURS]
            options = sorted((sum((p - q) ** 2 for p, q in zip(n, near)), n) for n in faces if inside(*n) and is_open[n])
            expected = options[0][1] if options else None
            chosen += expected is not None
        got_spot = terrain.open_neighbour((x + ox, y + oy, z + oz), (near[0] + ox, near[1] + oy, near[2] + oz))
        assert got_spot == (None if expected is None else (expected[0] + ox, expected[1] + oy, expected[2] + oz))
    assert chosen > 100        # many asks were answered by a neighbour, not by the cell itself
