"""MirrorCraft runtime: study execution and analysis."""
