"""The case format: what a case file may say and how it becomes a Program (the one IR).
The bottom layer: it imports nothing else of the harness, and runs nothing (see the
README's Layout for its modules)."""
