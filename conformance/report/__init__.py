"""Reports: what a run's results become (the report set, its status line, merges of shards,
expectations baselines, recordings and their drift) and the side-by-side explanation of one
item. Imports the layers below (case, run, gen), never the plugin or the command line."""
