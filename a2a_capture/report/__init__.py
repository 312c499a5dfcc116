"""Turning an analysis into something to read: text, JSON, SARIF, JUnit (and walkthroughs)."""
