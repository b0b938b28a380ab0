"""Nothing lost when the user pages were shortened (issue 37): every line and every number of each docs page as it
stood at a given commit is still in docs/ — on the page or in a note under docs/notes/.

    python docs/notes/check_moved.py 3ab32a5            # the commit before the pages were split

For each page of docs/*.md at that commit it prints the lines (non-empty, whitespace-stripped, markdown link
targets ignored) found in no current docs file, and the numbers (as written: 0.0444, 96.1, 10⁻⁵ ...) of the old
page found in no current docs file. A line missing with all its numbers kept is an edited sentence (a pointer
that said "below" now names the note); a number missing is a loss.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\([^)]*\)")
NUMBER = re.compile(r"(?<![\w.])[-−]?\d[\d,]*(?:\.\d+)?(?:[·x×]10[⁻⁰¹²³⁴⁵⁶⁷⁸⁹]+)?%?")


def _lines(text: str) -> set[str]:
    return {LINK.sub("]", line).strip() for line in text.splitlines() if line.strip()}


def _numbers(text: str) -> set[str]:
    return {n.replace("−", "-") for n in NUMBER.findall(text)}


def main(commit: str) -> int:
    names = subprocess.run(["git", "ls-tree", "--name-only", commit, "docs/"], cwd=ROOT, check=True,
                           capture_output=True, text=True).stdout.split()
    now = "\n".join(p.read_text(encoding="utf-8") for p in sorted((ROOT / "docs").rglob("*.md")))
    now_lines, now_numbers = _lines(now), _numbers(now)
    lost_numbers = 0
    for name in sorted(n for n in names if n.endswith(".md")):
        old = subprocess.run(["git", "show", f"{commit}:{name}"], cwd=ROOT, check=True, capture_output=True,
                             text=True).stdout
        lines = sorted(_lines(old) - now_lines)
        numbers = sorted(_numbers(old) - now_numbers)
        lost_numbers += len(numbers)
        print(f"{name}: {len(_lines(old))} lines, {len(lines)} not found; {len(_numbers(old))} numbers, "
              f"{len(numbers)} not found")
        for line in lines:
            print(f"    line: {line[:150]}")
        for number in numbers:
            print(f"    number: {number}")
    return 1 if lost_numbers else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else "HEAD"))
