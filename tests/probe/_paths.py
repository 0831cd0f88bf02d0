"""Puts hw/probe on sys.path for the tests (the probe's modules import each other by name)."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = os.path.join(ROOT, "hw", "probe")
if PROBE not in sys.path:
    sys.path.insert(0, PROBE)
