"""The results store, the only code that opens ``results.sqlite``: the database (`results`), its
columns derived from the episode record (`columns`), lean trajectories and the export
(`trajectories`) and replies replayed from a store (`replay`)."""
