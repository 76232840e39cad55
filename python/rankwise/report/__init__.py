"""Summaries and tables that several verbs print; each takes the console to print on."""
