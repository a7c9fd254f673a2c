"""The whole system through its CLIs: crashes, concurrent processes, hostile input, end to end."""
