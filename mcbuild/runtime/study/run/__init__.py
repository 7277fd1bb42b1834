"""Running a study: the runner (`runner`), one episode (`executor` and its `outcome`), the progress
line (`progress`) and where episodes run (`schedulers/`)."""
