"""Replay and regression: masking, diff, client replay, server replay, baselines."""
