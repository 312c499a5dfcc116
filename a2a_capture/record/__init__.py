"""Recording live traffic: flow to exchange, redaction, card rewriting, the capture sink."""
