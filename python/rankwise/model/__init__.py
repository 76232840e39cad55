"""The network model: the engine's model in numpy, what changed between two, slow links, a node's inside."""
