"""Running one item: a Program on torch and on the engine under test, each run inside its
guards and limits, observed into a Trace, the two traces compared, the item's verdict made.
Imports the case format only."""
