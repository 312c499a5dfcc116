"""`python -m a2a_capture`: the CLI without its script on PATH (a venv not activated, CI's python)."""

from a2a_capture.cli import main

main()
