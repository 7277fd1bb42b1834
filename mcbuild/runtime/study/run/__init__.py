"""Running a study: the runner (`runner`), one episode (`executor` and its `outcome`), the tally it
reports as it goes (`progress`), stopping on a signal (`interrupt`) and where episodes run (`schedulers/`)."""
