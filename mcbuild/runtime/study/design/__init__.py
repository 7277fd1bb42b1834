"""What a study is before it runs: its config (`config`), the episodes it expands to (`plan`) and
what they will cost (`estimate`)."""
