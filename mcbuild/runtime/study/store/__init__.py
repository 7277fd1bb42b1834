"""The results store, the only code that opens ``results.sqlite``: the database (`results`), its
columns derived from the episode record (`columns`), lean trajectories (`trajectories`), the full
export (`export`) and replies replayed from a store (`replay`)."""
