"""The pipeline floor: the stages that run the compiler and the audits together.

``build`` turns a spec into a checked artifact (compiled, traced, audited, written atomically) and
re-audits a built one; ``worlds`` builds the saves of ``specs/worlds.yaml`` from the biome packs it
compiles and audits. It stands above ``compiler`` and ``audits`` (nothing below imports it); the
Designer/Judge and the CLI call it.
"""
