"""The engine fixtures, for every test of the prompts engine."""

from tests.serve.prompts import engine

agent = engine.agent
app_tools = engine.app_tools
broker = engine.broker
caller = engine.caller
