"""The workstation drawing an answer as the model writes it, beside bare baselines of the same run.

Figures (issue 21):

- **First character on screen.** The fake Messages API streams an answer; the time from its
  writing the first piece of text to the transcript drawing it (the frame the workstation hands
  the terminal), beside a bare reader of the same stream (the anthropic SDK's own
  ``messages.stream`` iterator seeing its first text). Budget: at most 30 ms above the bare
  reader. The workstation is the real one hosting its agent over in-process a2a, as the tests
  drive it.
- **CPU per delta, first and last thousand.** A 20,000-token markdown answer (four characters a
  token) fed piece by piece to the transcript the workstation draws, each piece drawn as its own
  frame at 100x30 (the worst case: the screen caps frames at 20 a second). The cost of the
  first and of the last thousand pieces, and their ratio. Budget: at most 1.5x.
- **Memory.** What the transcript holds after the answer is complete, traced by ``tracemalloc``,
  beside the answer's size (budget: under 2x) and beside the floor, the answer's lines alone as a
  Python list (a ``str`` costs 49 bytes before its first character).
- **Keypress to frame while an answer streams**, beside the same press on an idle screen: the
  chat bar showing a typed letter, the answer streaming at 200 tokens a second. Budget: 1.5x.

    python bench/workstation_streaming.py [--runs N]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
import tracemalloc
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO_ROOT))

from fisk_ai.agent.events import PromptEvent, TextDeltaEvent, TextEvent  # noqa: E402
from tests.fakes.messages_api import FakeMessagesAPI, reply, text  # noqa: E402

SIZE = (100, 30)
TOKEN_CHARACTERS = 4
FIRST_WORDS = "Firs"
"""The answer's first piece, which the first frame of it draws."""
PACE = 1 / 200
"""Seconds between two pieces: 200 tokens a second."""
TOKENS = 20_000
THOUSAND = 1_000
DEADLINE = 60.0


def markdown_answer(characters: int) -> str:
    """An answer as a model writes one: paragraphs, a list, a code block, again and again."""
    section = (
        "## Section\n\nThe service answers in measured time, and the queue drains as the "
        "workers take what is waiting; nothing is lost when one of them restarts.\n\n"
        "- the first point, with `code` in it\n- the second point, **bold**\n\n"
        "```python\ndef drain(queue):\n    return [item for item in queue]\n```\n\n"
    )
    body = "Firstly a word.\n\n" + section * (characters // len(section) + 1)
    return body[:characters]


async def until(condition: Callable[[], bool]) -> float:
    """The perf_counter time ``condition`` first holds, looked at each millisecond."""
    started = time.perf_counter()
    while not condition():
        if time.perf_counter() - started > DEADLINE:
            raise RuntimeError("not seen within the deadline")
        await asyncio.sleep(0.001)
    return time.perf_counter()


def drawing(app: Any) -> None:
    """Make ``app``, run headless, turn each frame into terminal bytes as a terminal's would, so
    the frame's lines are drawn when it is handed over (headless apps skip that)."""
    real_display = app._display

    def display(screen: Any, renderable: Any) -> None:
        from textual._compositor import CompositorUpdate

        if isinstance(renderable, CompositorUpdate):
            renderable.render_segments(app.console)
        real_display(screen, renderable)

    app._display = display


async def first_character_seconds(runs: int) -> tuple[float, float]:
    """The median seconds from the fake's first text to the workstation's frame drawing it,
    and to the bare SDK reader's first text."""
    import anthropic

    from fisk_ai.llm.anthropic import AnthropicProvider
    from fisk_ai.tui.widgets.transcript_view import TranscriptView
    from tests.tui.workstation import build_app

    drawn_at: list[float] = []
    real_render_line = TranscriptView.render_line

    def timed_render_line(self: TranscriptView, y: int) -> Any:
        strip = real_render_line(self, y)
        if not drawn_at and FIRST_WORDS in strip.text:
            drawn_at.append(time.monotonic())
        return strip

    TranscriptView.render_line = timed_render_line  # type: ignore[method-assign]
    answer = markdown_answer(400)
    workstation, bare = [], []
    for _ in range(runs):
        drawn_at.clear()
        streamed = reply(text(answer), chunk=TOKEN_CHARACTERS, chunk_delay=PACE)
        with FakeMessagesAPI([streamed]) as api:
            provider = AnthropicProvider("sk-bench", base_url=api.base_url, max_retries=0)
            with tempfile.TemporaryDirectory() as scratch:
                app, agent = build_app(Path(scratch), provider)
                drawing(app)
                try:
                    async with app.run_test(size=SIZE):
                        await until(lambda: bool(drawn_at))
                        await app.workers.wait_for_complete()
                finally:
                    await agent.close()
                    await provider.aclose()
            first = api.first_text_at(1)
            assert first is not None
            workstation.append(drawn_at[0] - first)
        with FakeMessagesAPI([streamed]) as api:
            client = anthropic.AsyncAnthropic(api_key="sk-bench", base_url=api.base_url)
            async with client.messages.stream(
                model="bench", max_tokens=10, messages=[{"role": "user", "content": "hi"}]
            ) as stream:
                async for _piece in stream.text_stream:
                    seen = time.monotonic()
                    break
                await stream.until_done()
            await client.close()
            first = api.first_text_at(1)
            assert first is not None
            bare.append(seen - first)
    TranscriptView.render_line = real_render_line  # type: ignore[method-assign]
    return statistics.median(workstation), statistics.median(bare)


def answer_pieces() -> tuple[str, list[str]]:
    answer = markdown_answer(TOKENS * TOKEN_CHARACTERS)
    pieces = [
        answer[start : start + TOKEN_CHARACTERS]
        for start in range(0, len(answer), TOKEN_CHARACTERS)
    ]
    return answer, pieces


async def streamed_into_view(
    measure: Callable[[Any, Any, list[str]], Coroutine[Any, Any, None]],
) -> None:
    """A transcript view at ``SIZE`` in a bare app, handed to ``measure`` with its pilot and
    the pieces."""
    from textual.app import App, ComposeResult

    from fisk_ai.tui.widgets.transcript_view import TranscriptView

    class Viewer(App[None]):
        def compose(self) -> ComposeResult:
            yield TranscriptView(copy_directory=Path(tempfile.gettempdir()))

    app = Viewer()
    async with app.run_test(size=SIZE) as pilot:
        view = app.query_one(TranscriptView)
        view.append([PromptEvent("write it all")])
        await pilot.pause()
        await measure(view, pilot, answer_pieces()[1])


def frame(view: Any, piece: str) -> None:
    """One piece drawn as its own frame: laid out, and every row on screen rendered."""
    view.transcript.add_delta(TextDeltaEvent(piece))
    view._changed()
    for row in range(view.size.height):
        view.render_line(row)


async def cost_per_delta() -> tuple[float, float]:
    """Seconds for the first and for the last thousand pieces, each drawn as a frame."""
    costs: list[float] = []

    async def measure(view: Any, pilot: Any, pieces: list[str]) -> None:
        for piece in pieces:
            started = time.process_time()
            frame(view, piece)
            costs.append(time.process_time() - started)
            # What the frame left for the event loop runs before the next piece, as it would.
            await asyncio.sleep(0)

    await streamed_into_view(measure)
    return sum(costs[:THOUSAND]), sum(costs[-THOUSAND:])


async def memory_held() -> tuple[int, int, int]:
    """The bytes the transcript view holds once the answer streamed and its event replaced the
    pieces; the answer's size; and, as the floor, what the answer's lines take as a list."""
    answer = answer_pieces()[0]
    held: list[int] = []

    async def measure(view: Any, pilot: Any, pieces: list[str]) -> None:
        tracemalloc.start()
        before = tracemalloc.get_traced_memory()[0]
        for piece in pieces:
            frame(view, piece)
            await asyncio.sleep(0)
        view.append([TextEvent(answer, final=True)])
        for row in range(view.size.height):
            view.render_line(row)
        await pilot.pause()
        held.append(tracemalloc.get_traced_memory()[0] - before)
        tracemalloc.stop()

    await streamed_into_view(measure)
    tracemalloc.start()
    lines = answer.split("\n")
    floor = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del lines
    return held[0], len(answer.encode()), floor


async def keypress_seconds(runs: int) -> tuple[float, float]:
    """The median seconds from a typed letter to the chat bar drawing it, while an answer
    streams at 200 tokens a second and on an idle screen."""
    from fisk_ai.llm.anthropic import AnthropicProvider
    from fisk_ai.tui.widgets.chat_input import ChatInput
    from tests.tui.workstation import build_app

    answer = markdown_answer(200 * TOKEN_CHARACTERS * 30)
    streaming, idle = [], []
    with FakeMessagesAPI() as api:
        api.script(
            [reply(text(answer), chunk=TOKEN_CHARACTERS, chunk_delay=PACE), reply(text("ok"))]
        )
        provider = AnthropicProvider("sk-bench", base_url=api.base_url, max_retries=0)
        with tempfile.TemporaryDirectory() as scratch:
            app, agent = build_app(Path(scratch), provider)
            try:
                async with app.run_test(size=SIZE) as pilot:
                    chat = app.run_screen.query_one(ChatInput)
                    await until(lambda: app.run_screen.view.transcript.streaming)
                    for letter in "abcdefghijklmnopqrstuvwxyz"[:runs]:
                        streaming.append(await typed(app, chat, letter))
                    await app.workers.wait_for_complete()
                    await pilot.pause()
                    for letter in "ABCDEFGHIJKLMNOPQRSTUVWXYZ"[:runs]:
                        idle.append(await typed(app, chat, letter))
            finally:
                await agent.close()
                await provider.aclose()
    return statistics.median(streaming), statistics.median(idle)


async def typed(app: Any, chat: Any, letter: str) -> float:
    started = time.perf_counter()
    app.simulate_key(letter)
    shown = await until(lambda: str(chat.text).endswith(letter) and letter in _drawn(chat))
    await asyncio.sleep(0.02)
    return shown - started


def _drawn(chat: Any) -> str:
    return "".join(chat.render_line(row).text for row in range(chat.size.height))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    options = parser.parse_args()

    workstation, bare = asyncio.run(first_character_seconds(options.runs))
    first, last = asyncio.run(cost_per_delta())
    held, size, floor = asyncio.run(memory_held())
    streaming, idle = asyncio.run(keypress_seconds(options.runs))
    above = (workstation - bare) * 1000
    print(
        f"first character on screen, median of {options.runs}: workstation "
        f"{workstation * 1000:.1f} ms, bare SDK reader {bare * 1000:.1f} ms "
        f"(+{above:.1f} ms; budget +30 ms: {'met' if above <= 30 else 'missed'})"
    )
    print(
        f"CPU per delta, each drawn as a frame: first thousand {first * 1000:.1f} ms, last "
        f"thousand {last * 1000:.1f} ms ({last / first:.2f}x; budget 1.5x: "
        f"{'met' if last / first <= 1.5 else 'missed'})"
    )
    print(
        f"transcript memory after a {size:,}-byte answer: {held:,} bytes ({held / size:.1f}x the "
        f"answer; budget 2x: {'met' if held / size < 2 else 'missed'}); the answer's lines alone "
        f"as a Python list {floor:,} bytes ({floor / size:.1f}x, the floor; held "
        f"{held / floor:.1f}x the floor)"
    )
    print(
        f"keypress to frame, median of {options.runs}: while streaming {streaming * 1000:.1f} ms, "
        f"idle {idle * 1000:.1f} ms ({streaming / idle:.2f}x; budget 1.5x: "
        f"{'met' if streaming / idle <= 1.5 else 'missed'})"
    )


if __name__ == "__main__":
    main()
