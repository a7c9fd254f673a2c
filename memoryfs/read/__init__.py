"""Reading memory: search, the Memory Agent (recall), packing, ranking and materializing."""
