#!/usr/bin/env python3
"""Counts one test stage's results from ctest's JUnit file (ctest --output-junit), for
scripts/test.sh's summary: prints "passed failed inconclusive skipped" on the first line, then one
line per test that did not pass (its name and why: the failure's first line, the inconclusive
judgement's figures, the skip's reason) or that passed after one sample off its band with no
disturbance seen (tests/support/e2e_timing.hpp: "[ UNEXPLAINED ]").

An end-to-end timing check that could not be judged (tests/support/e2e_timing.hpp: every sample of it
was disturbed) is skipped with a message that starts "INCONCLUSIVE:"; any other skip is a test
that does not apply to this machine (no root, no huge pages...).

usage: ctest_counts.py JUNIT_FILE
"""
import sys
import xml.etree.ElementTree as ET


def first_line_after(text, marker):
    """The first line of what follows `marker` in `text` (gtest's bare "Failed" line skipped)."""
    at = text.find(marker)
    if at < 0:
        return ""
    for line in text[at + len(marker):].splitlines():
        line = line.strip()
        if line and line != "Failed":
            return line[:300]
    return ""


def main():
    if len(sys.argv) != 2:
        print("usage: ctest_counts.py JUNIT_FILE", file=sys.stderr)
        return 2
    try:
        root = ET.parse(sys.argv[1]).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"ctest_counts.py: cannot read {sys.argv[1]}: {e}", file=sys.stderr)
        return 2
    passed = failed = inconclusive = skipped = 0
    notes = []
    for case in root.iter("testcase"):
        name = case.get("name", "?")
        status = case.get("status", "")
        out = case.findtext("system-out") or ""
        if status == "run":
            passed += 1
            if "[ UNEXPLAINED ]" in out:
                why = first_line_after(out, "[ UNEXPLAINED ]")
                notes.append(f"  unexplained   {name}: {why}")
        elif status == "fail":
            failed += 1
            why = first_line_after(out, "Failure\n") or "see its output"
            notes.append(f"  FAILED        {name}: {why}")
        elif "INCONCLUSIVE:" in out:
            inconclusive += 1
            notes.append(f"  inconclusive  {name}: {first_line_after(out, 'INCONCLUSIVE:')}")
        else:
            skipped += 1
            why = first_line_after(out, "Skipped\n") or "not run"
            notes.append(f"  skipped       {name}: {why}")
    print(passed, failed, inconclusive, skipped)
    for n in notes:
        print(n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
