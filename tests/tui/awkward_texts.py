"""Texts that are easy to draw wrong: a cow, prose with em dashes, a wide table, a code block."""

from __future__ import annotations

EM_DASH_PROSE = (
    "The ORDERS stream is healthy \u2014 its consumers keep up \u2014 but INVOICES is "
    "\u201clagging\u201d: its oldest message waits for 41 minutes, and the replica on "
    "node\u20113 reports \u2018catching up\u2019 since the upgrade. Nothing is lost \u2014 the "
    "limits keep a week \u2014 so the fix can wait for the morning\u2019s window, when "
    "the on\u2011call engineer can restart the lagging consumer and watch it drain."
)

LONG_TABLE = """| Stream | Subjects | Retention | Messages | Notes |
|:-------|:---------|:---------:|---------:|:------|
| ORDERS | orders.created, orders.paid, orders.shipped | limits | 1,260 | Healthy \u2014 \
consumers keep up with every subject it holds |
| INVOICES | invoices.> | work queue | 88 | Lagging since the upgrade; the replica on \
node 3 is still catching up |
| SHIPPING | shipping.labels, shipping.tracking | interest | 12,004,311 | Quiet |"""

PYTHON_BLOCK = """Here is the check:

```python
def lagging(stream: str, minutes: int = 30) -> bool:
    # A consumer is lagging once its oldest pending message has waited longer than the limit
    return oldest_pending(stream) > minutes * 60
```"""

COW = (
    " ____________________________________\n"
    "< Why did the cow go to outer space? >\n"
    " ------------------------------------\n"
    "        \\   ^__^\n"
    "         \\  (oo)\\_______\n"
    "            (__)\\       )\\/\\\n"
    "                ||----w |\n"
    "                ||     ||\n"
)
