"""What a terminal shows after some output: enough of one to read a streamed answer's screen.

It wraps at the width, and follows carriage return, newline, cursor up and erase below; other
escape sequences (colors, synchronized output) are dropped, since the text is what is checked.
"""

from __future__ import annotations

import re

WIDTH = 80

_CONTROL = re.compile(r"\x1b\[(\d*)([AJ])|\x1b\[[0-9;?]*[A-Za-z]|\r|\n")


def screen(written: str, width: int = WIDTH) -> list[str]:
    """The rows a terminal ``width`` cells wide shows after ``written``, trailing spaces and
    empty rows cut."""
    rows = [""]
    row = 0
    column = 0

    def put(text: str) -> None:
        nonlocal row, column
        for character in text:
            if column == width:
                row, column = row + 1, 0
                if row == len(rows):
                    rows.append("")
            line = rows[row].ljust(column)
            rows[row] = line[:column] + character + line[column + 1 :]
            column += 1

    position = 0
    for control in _CONTROL.finditer(written):
        put(written[position : control.start()])
        position = control.end()
        match control.group(0), control.group(2):
            case "\n", _:
                row, column = row + 1, 0
                if row == len(rows):
                    rows.append("")
            case "\r", _:
                column = 0
            case _, "A":
                row = max(0, row - int(control.group(1) or 1))
            case _, "J":
                rows[row] = rows[row][:column]
                del rows[row + 1 :]
    put(written[position:])
    shown = [line.rstrip() for line in rows]
    while shown and not shown[-1]:
        shown.pop()  # the row the cursor waits on
    return shown
