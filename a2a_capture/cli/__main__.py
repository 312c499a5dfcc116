"""`python -m a2a_capture.cli`: the checkout's own entry point."""

from a2a_capture.cli import main

main()
