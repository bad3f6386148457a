"""Generated programs: hypothesis draws Programs from the op registry and the API table, runs
them as items are run, and counts what they exercised. Imports the case format and the run
layer."""
