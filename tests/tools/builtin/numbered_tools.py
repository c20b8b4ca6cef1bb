"""An application's tools, as many as a test asks for, numbered."""

from fisk_ai.tools.fiskapp.loader import load_application
from fisk_ai.tools.fiskapp.model import ApplicationModel
from fisk_ai.tools.fiskapp.tool import FiskCommandTool
from tests.fakes.fiskapp import application, command


def app_tools(count: int, *, no_defer: str = "") -> tuple[FiskCommandTool, ...]:
    leaves = [
        command(f"cmd{index}", tags=["ai:no_defer"] if f"cmd{index}" == no_defer else [])
        for index in range(count)
    ]
    model = ApplicationModel.model_validate(application(commands=leaves))
    return load_application(model, "./app").tools
