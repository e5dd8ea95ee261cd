"""Shared helpers of the experiment scripts (imported as ``lib.<module>``: ``experiments/`` is on
``sys.path`` when a script runs)."""
