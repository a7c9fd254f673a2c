"""Landing a run: the staged tree, leave-out, sync to main, kept runs, crash recovery, run log."""
