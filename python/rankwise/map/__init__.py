"""Choosing nodes and placing ranks: the engine's mapper, the congestion objective, the placement decision."""
