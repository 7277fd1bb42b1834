"""mcbuild compiler: versioned YAML specs -> deterministic Minecraft Java 1.19.0 datapacks."""
