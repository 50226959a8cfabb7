"""Scores of perfcast's models against what others measured or wrote: the GPU tuning corpus, species by hand."""
