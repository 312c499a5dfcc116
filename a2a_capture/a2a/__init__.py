"""Protocol knowledge with no I/O: spec tables, cards, and the exchange decoder."""
