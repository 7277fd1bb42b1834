"""Static audits: every check that the compiler, the Judge prompt and the CLI consume."""
