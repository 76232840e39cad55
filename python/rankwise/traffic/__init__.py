"""An application's traffic: the communication matrix, known patterns, collective calls, importers."""
