"""Scores of perfcast's models against measurements taken elsewhere: the published GPU tuning corpus."""
