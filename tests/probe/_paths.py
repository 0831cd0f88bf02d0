"""Puts hw/probe on sys.path for the tests (the probe's modules import each other by name), and
TempDirCase, a test case with a fresh output folder per test."""
import os
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROBE = os.path.join(ROOT, "hw", "probe")
if PROBE not in sys.path:
    sys.path.insert(0, PROBE)


class TempDirCase(unittest.TestCase):
    """self.out: an empty temporary folder for each test, removed after it."""

    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.out = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()
