"""Scoring services over many runs: scored run sets, leaderboards and the CI score-drop gate (`evalkit check`)."""
