"""The ``mcbuild`` command line: a thin click layer that wires the compiler, builders and runtime."""
