"""Make a Python click application answer --fisk-introspect, so it becomes an agent in one line.

```python
from fisk_ai.tools.introspect import fisk_tags, run

@fisk_tags("ai:read_only")
@cli.command()
def status() -> None: ...

if __name__ == "__main__":
    run(cli)
```
"""

from fisk_ai.tools.introspect.entry import run
from fisk_ai.tools.introspect.model import application_model
from fisk_ai.tools.introspect.tags import fisk_tags

__all__ = ["application_model", "fisk_tags", "run"]
