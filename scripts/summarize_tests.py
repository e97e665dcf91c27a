#!/usr/bin/env python3
"""Sums JUnit XML reports (lit, ctest, pytest) into one `N passed, N failed` line.

A missing or unreadable report counts as one failure: a suite that did not run
must not look green. Exits 1 when anything failed.
"""
import sys
import xml.etree.ElementTree as ET


def count(path):
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as err:
        print(f"{path}: no report ({err})")
        return 0, 1, 0
    passed = failed = skipped = 0
    for case in root.iter("testcase"):
        kinds = {child.tag for child in case}
        if kinds & {"failure", "error"}:
            failed += 1
        elif "skipped" in kinds:
            skipped += 1
        else:
            passed += 1
    return passed, failed, skipped


def main(paths):
    total_p = total_f = total_s = 0
    for path in paths:
        p, f, s = count(path)
        print(f"{path}: {p} passed, {f} failed, {s} skipped")
        total_p, total_f, total_s = total_p + p, total_f + f, total_s + s
    if total_p + total_f == 0:
        total_f = 1  # nothing ran at all
    print(f"{total_p} passed, {total_f} failed, {total_s} skipped")
    return 1 if total_f else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
