"""Startup: the first frame comes before the agent is hosted, the card says what startup is
doing, type-ahead waits in the chat bar for the first turn, and the card's telemetry row."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from textual.widgets import Static

from fisk_ai.config import Config, Mode, load
from fisk_ai.tui.setup import RunSetup
from fisk_ai.tui.widgets.startup_card import startup_text
from fisk_ai.workstation.app import FiskApp
from fisk_ai.workstation.host import PHASE_HOSTING, PHASE_LOADING, telemetry_row
from tests.fakes.provider import ScriptedProvider, answer
from tests.tui.workstation import SIZE, build_app
from tests.tui.workstation_driver import settle, texts_of


def card_text(app: FiskApp) -> str:
    card = app.run_screen.query_one("#startup", Static)
    return str(card.render()) if card.display else ""


def status_text(app: FiskApp) -> str:
    return str(app.run_screen.query_one("#status", Static).render())


def starting(app: FiskApp) -> RunSetup:
    """Make ``app`` open as `fisk run` does: before its agent is hosted. Returns the setup
    hosting will hand it."""
    hosted = app.run_screen.setup
    app.run_screen.setup = replace(hosted, tools=(), warnings=(), phase=PHASE_LOADING)
    return hosted


async def test_the_card_says_what_startup_is_doing_until_the_agent_is_hosted(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider([answer("fine")])
    app, agent = build_app(tmp_path, provider, prompt="hello")
    hosted = starting(app)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await app.first_frame.wait()
            screen = app.run_screen
            assert "starting: loading the model SDK" in card_text(app)
            assert "tools    -" in card_text(app)
            assert status_text(app).startswith("[running]  loading the model SDK")

            screen.startup_phase(PHASE_HOSTING)
            await pilot.pause()
            assert "starting: loading tools and starting the broker" in card_text(app)
            # A key does not take the card away while it is the only sign of progress.
            await pilot.press("x")
            assert "starting:" in card_text(app)
            assert provider.calls == 0

            screen.hosted(replace(hosted, warnings=("warning: a hosting warning",)))
            await settle(app, pilot)
            assert screen.last_answer == "fine"
            assert status_text(app).startswith("[awaiting input]")
            assert not card_text(app)  # gone with the first response
            await pilot.press("f2")
            assert "stream_rm" in str(screen.side_panel.query_one("#side-facts", Static).render())
            assert "warning: a hosting warning" in screen.view.transcript.text()
    finally:
        await agent.close()


async def test_typing_during_startup_is_kept_and_sent_after_the_first_turn(
    tmp_path: Path,
) -> None:
    provider = ScriptedProvider([answer("first answer"), answer("second answer")])
    app, agent = build_app(tmp_path, provider, prompt="hello")
    hosted = starting(app)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await app.first_frame.wait()
            screen = app.run_screen
            await pilot.press("w", "h", "y", "z", "enter")
            assert screen.chat.value == ""
            assert screen.chat.queued == ("whyz",)
            await pilot.press("up", "backspace", "enter")
            assert provider.calls == 0

            screen.hosted(hosted)
            await settle(app, pilot)
            await settle(app, pilot)

            assert provider.calls == 2
            assert texts_of(provider, 1) == ["hello", "why"]
            transcript = screen.view.transcript.text()
            assert transcript.index("> hello") < transcript.index("> why")
            assert screen.last_answer == "second answer"
            assert not screen.chat.queued
    finally:
        await agent.close()


async def test_ctrl_c_during_startup_leaves_at_once(tmp_path: Path) -> None:
    provider = ScriptedProvider([answer("never")])
    app, agent = build_app(tmp_path, provider)
    starting(app)
    try:
        async with app.run_test(size=SIZE) as pilot:
            await app.first_frame.wait()
            await pilot.press("ctrl+c")
            await pilot.pause()
            assert not app.is_running
        assert provider.calls == 0
        assert app.outcome.result is None
    finally:
        await agent.close()


def test_the_spinner_turns_on_the_phase_line() -> None:
    setup = RunSetup(version="1", phase=PHASE_LOADING)

    frames = {startup_text(setup, "~/x", spinner=frame).splitlines()[-1] for frame in range(4)}

    assert frames == {f"{mark} starting: loading the model SDK" for mark in "|/-\\"}
    assert startup_text(replace(setup, phase=""), "~/x").splitlines()[-1] == (
        "starting: waiting for first response"
    )


def config_with(tmp_path: Path, telemetry: str) -> Config:
    path = tmp_path / "agent.yaml"
    path.write_text(f"identity: ops-agent\n{telemetry}")
    return load(str(path), Mode.LENIENT)


@pytest.mark.parametrize(
    ("telemetry", "no_telemetry", "row"),
    [
        ("", False, "off"),
        (
            "telemetry:\n  enabled: true\n  endpoint: https://otel.example:4318\n",
            False,
            "on, to https://otel.example:4318",
        ),
        ("telemetry:\n  enabled: true\n", False, "on, to http://localhost:4318"),
        ("telemetry:\n  enabled: true\n", True, "off (--no-telemetry)"),
    ],
)
def test_the_card_names_where_telemetry_goes_or_what_turned_it_off(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    telemetry: str,
    no_telemetry: bool,
    row: str,
) -> None:
    monkeypatch.delenv("FISK_TELEMETRY_DISABLED", raising=False)
    monkeypatch.delenv("OTEL_SDK_DISABLED", raising=False)
    text = telemetry_row(config_with(tmp_path, telemetry), no_telemetry=no_telemetry)

    assert text == row
    card = startup_text(RunSetup(version="1", telemetry=text), "~/x")
    assert f"telemetry {row}" in card.splitlines()
