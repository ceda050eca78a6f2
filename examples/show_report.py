#!/usr/bin/python3
"""Prints the decisions of an amp-report JSON file (make demo uses it).

    examples/show_report.py report.json
"""
import json
import sys


def main():
    with open(sys.argv[1]) as f:
        report = json.load(f)
    for decision in report["decisions"]:
        print(f"    {decision['name'] or '-':<20} {decision['op_type']:<26} "
              f"{decision['precision']:<5} {decision['reason']}")
    casts = report["casts"]
    print(f"  {report['ops']['low_precision']} of {report['ops']['total']} "
          f"ops in {report['precision']}; casts: {casts['inserted']} "
          f"inserted, {casts['eliminated']} eliminated, {casts['fused']} "
          f"fused, {casts['remaining']} remaining")


if __name__ == "__main__":
    main()
