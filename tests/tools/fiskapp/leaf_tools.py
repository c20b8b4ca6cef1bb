"""The tool loaded from one introspected leaf command."""

from typing import Any

from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.fiskapp.tool import FiskCommandTool
from tests.fakes.fiskapp import application


def tool_for(leaf: dict[str, Any], app_path: str = "./app") -> FiskCommandTool:
    model = ApplicationModel.model_validate(application(commands=[leaf]))
    return load_application(model, app_path).tools[0]
