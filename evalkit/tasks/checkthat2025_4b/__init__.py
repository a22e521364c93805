"""CLEF CheckThat! 2025 Task 4b (tweet -> paper, official MRR@5): the task, its gold format and its submission
rules, registered through entry points as a plugin task is."""
