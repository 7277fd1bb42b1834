"""Where and how many episodes run at once: the protocol and this machine's process pool (`local`),
many episodes in flight per worker (`inflight`) and a Ray cluster (`ray`, `ray_tasks`)."""
