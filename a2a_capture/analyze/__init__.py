"""The analyzer: a session model, rule families, findings."""
