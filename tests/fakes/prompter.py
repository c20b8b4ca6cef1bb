"""A scripted prompter: answers questions in the order it was given them, and keeps them.

An answer may be ``INTERRUPT`` to raise QuestionInterrupted at that question, as an operator's
Ctrl-C at a prompt would. Running out of answers fails the test.
"""

from __future__ import annotations

from collections.abc import Iterable

from fisk_ai.tools.questions import Answer, Question, QuestionInterrupted

INTERRUPT = object()


class ScriptedPrompter:
    def __init__(self, answers: Iterable[Answer | object] = (), *, reachable: bool = True) -> None:
        self._answers = list(answers)
        self.reachable = reachable
        self.questions: list[Question] = []

    def can_prompt(self) -> bool:
        return self.reachable

    async def ask(self, question: Question) -> Answer:
        self.questions.append(question)
        if not self._answers:
            raise AssertionError(f"the scripted prompter has no answer for {question!r}")
        answer = self._answers.pop(0)
        if answer is INTERRUPT:
            raise QuestionInterrupted("the operator interrupted the question")
        return answer  # type: ignore[return-value]
