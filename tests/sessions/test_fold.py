from __future__ import annotations

from dataclasses import replace
from datetime import UTC, datetime

import pytest

from fisk_ai.llm.types import Message, Role, TextBlock, ToolResultBlock, Usage, user_text
from fisk_ai.sessions import (
    Assistant,
    CallApproval,
    Claim,
    Decision,
    Deferred,
    JournalError,
    MemoryRevisions,
    Record,
    SessionStatus,
    Terminal,
    TerminalReason,
    Unrecognized,
    User,
    fold,
)
from tests.sessions.builders import journal, meta, result, turn

CLAIM = Claim("worker-2", datetime(2025, 3, 4, tzinfo=UTC))


def follow_up(text: str) -> User:
    return User(user_text(text))


def test_the_prompt_is_the_first_message() -> None:
    conversation = fold(journal())

    assert conversation.messages == (user_text("report on the ORDERS stream"),)
    assert conversation.first_prompt == "report on the ORDERS stream"


def test_a_finished_turn_with_its_results_is_committed_in_call_order() -> None:
    first = turn(1, "a", "b", "c")

    conversation = fold(journal(first, result("c"), result("a"), result("b"), turn(2)))

    assert conversation.messages[1] == first.message
    assert [block.tool_use_id for block in conversation.messages[2].content] == ["a", "b", "c"]  # type: ignore[union-attr]
    assert conversation.messages[3] == turn(2).message
    assert conversation.pending_turn is None


def test_a_trailing_turn_whose_calls_are_all_answered_is_committed() -> None:
    conversation = fold(journal(turn(1, "a"), result("a")))

    assert conversation.messages[-1] == Message(Role.USER, (ToolResultBlock("a", "output of a"),))
    assert conversation.pending == ()
    assert conversation.pending_turn is None


def test_a_crash_mid_batch_leaves_the_unanswered_calls_pending() -> None:
    batch = turn(1, "a", "b", "c")

    conversation = fold(journal(batch, result("b")))

    assert conversation.messages == (user_text("report on the ORDERS stream"),)
    assert conversation.pending_turn == batch.message
    assert [call.id for call in conversation.pending] == ["a", "c"]
    assert conversation.answered == (ToolResultBlock("b", "output of b"),)


def test_a_claim_between_a_turn_and_its_results_keeps_the_batch_pending() -> None:
    batch = turn(1, "a", "b")

    conversation = fold(journal(batch, result("a"), CLAIM))

    assert conversation.pending_turn == batch.message
    assert [call.id for call in conversation.pending] == ["b"]


def test_results_after_a_claim_still_belong_to_the_turn() -> None:
    conversation = fold(journal(turn(1, "a", "b"), result("a"), CLAIM, result("b"), turn(2)))

    assert [block.tool_use_id for block in conversation.messages[2].content] == ["a", "b"]  # type: ignore[union-attr]


def test_a_follow_up_after_tool_results_joins_their_user_message() -> None:
    conversation = fold(journal(turn(1, "a"), result("a"), follow_up("and the KV buckets?")))

    assert conversation.messages[-1] == Message(
        Role.USER, (ToolResultBlock("a", "output of a"), TextBlock("and the KV buckets?"))
    )


def test_two_follow_ups_in_a_row_are_merged() -> None:
    conversation = fold(journal(turn(1), follow_up("one"), follow_up("two")))

    assert [message.role for message in conversation.messages] == [
        Role.USER,
        Role.ASSISTANT,
        Role.USER,
    ]
    assert conversation.messages[-1].text == "onetwo"


def test_a_follow_up_commits_the_turn_before_it() -> None:
    answer = turn(1, text="ORDERS holds 3 messages")

    conversation = fold(journal(answer, follow_up("thanks")))

    assert conversation.messages[1] == answer.message


def test_a_journal_without_a_prompt_takes_its_first_prompt_from_the_first_follow_up() -> None:
    conversation = fold(journal(follow_up("hello"), first=meta(prompt="")))

    assert conversation.messages == (user_text("hello"),)
    assert conversation.first_prompt == "hello"


def test_a_result_with_no_turn_before_it_is_corruption() -> None:
    with pytest.raises(JournalError, match="no assistant turn before it"):
        fold(journal(result("a")))


def test_a_result_for_a_call_the_turn_did_not_make_is_corruption() -> None:
    with pytest.raises(JournalError, match="did not make"):
        fold(journal(turn(1, "a"), result("z")))


def test_a_second_result_for_one_call_is_corruption() -> None:
    with pytest.raises(JournalError, match="a second time"):
        fold(journal(turn(1, "a", "b"), result("a"), result("a")))


def test_a_gap_in_the_sequence_is_corruption() -> None:
    records = journal(turn(1), Terminal(TerminalReason.COMPLETED))
    records[2] = replace(records[2], seq=4)

    with pytest.raises(JournalError, match="record 4 skips ahead of record 2"):
        fold(records)


def test_a_repeated_sequence_is_corruption() -> None:
    records = journal(turn(1), Terminal(TerminalReason.COMPLETED))
    records[2] = replace(records[2], seq=2)

    with pytest.raises(JournalError, match="record 2 repeats record 2"):
        fold(records)


def test_the_first_record_must_be_meta() -> None:
    with pytest.raises(JournalError, match="does not start with a meta record"):
        fold([Record(1, Decision("x"))])


def test_an_empty_journal_is_refused() -> None:
    with pytest.raises(JournalError, match="empty"):
        fold([])


def test_a_second_meta_record_is_corruption() -> None:
    with pytest.raises(JournalError, match="second meta"):
        fold(journal(meta()))


def test_a_journal_from_a_newer_version_is_refused_as_newer() -> None:
    with pytest.raises(JournalError, match="written by a newer fisk-ai"):
        fold(journal(first=meta(version=4)))


def test_a_journal_from_an_older_version_is_refused_too() -> None:
    with pytest.raises(JournalError, match=r"older fisk-ai .* cannot be opened"):
        fold(journal(first=meta(version=2)))


def test_no_terminal_means_open() -> None:
    conversation = fold(journal(turn(1)))

    assert conversation.status is SessionStatus.OPEN
    assert conversation.terminal is None
    assert not conversation.completed


def test_the_latest_terminal_wins() -> None:
    conversation = fold(
        journal(
            turn(1),
            Terminal(TerminalReason.SUSPENDED),
            Terminal(TerminalReason.COMPLETED, "done"),
        )
    )

    assert conversation.status is SessionStatus.COMPLETED
    assert conversation.terminal == Terminal(TerminalReason.COMPLETED, "done")
    assert conversation.completed


def test_a_suspended_session_is_not_completed() -> None:
    conversation = fold(journal(turn(1), Terminal(TerminalReason.SUSPENDED)))

    assert conversation.status is SessionStatus.SUSPENDED
    assert not conversation.completed


def test_a_turn_after_a_terminal_reopens_the_session() -> None:
    conversation = fold(journal(turn(1), Terminal(TerminalReason.SUSPENDED), CLAIM, turn(2)))

    assert conversation.status is SessionStatus.OPEN


def test_a_claim_after_a_terminal_leaves_it_standing() -> None:
    conversation = fold(journal(turn(1), Terminal(TerminalReason.SUSPENDED), CLAIM))

    assert conversation.status is SessionStatus.SUSPENDED


def test_decisions_accumulate_standing_grants() -> None:
    conversation = fold(
        journal(
            turn(1, "a"),
            result("a"),
            Decision("stream_rm"),
            Terminal(TerminalReason.SUSPENDED),
            Decision("kv_put"),
        )
    )

    assert conversation.standing_grants == frozenset({"stream_rm", "kv_put"})


def test_a_call_approval_stands_until_a_terminal_after_it() -> None:
    unspent = fold(
        journal(turn(1, "a"), Terminal(TerminalReason.SUSPENDED), CallApproval("a", "rm"))
    )
    spent = fold(
        journal(
            turn(1, "a"),
            CallApproval("a", "rm"),
            Terminal(TerminalReason.SUSPENDED),
        )
    )

    assert unspent.call_approvals == frozenset({"a"})
    assert spent.call_approvals == frozenset()


def test_a_deferred_call_is_waited_on_and_not_run_again() -> None:
    waiting = Deferred("b", "tool_b", note="waiting for CAB", handle="CHG-7")

    conversation = fold(
        journal(turn(1, "a", "b"), result("a"), waiting, Terminal(TerminalReason.SUSPENDED))
    )

    assert conversation.pending == ()
    assert conversation.deferred == (waiting,)
    assert conversation.pending_turn is not None
    assert conversation.status is SessionStatus.SUSPENDED


def test_a_deferred_call_beside_an_unfinished_one_leaves_only_that_one_to_run() -> None:
    conversation = fold(journal(turn(1, "a", "b", "c"), Deferred("b", "tool_b"), result("a")))

    assert [call.id for call in conversation.pending] == ["c"]
    assert [deferred.tool_use_id for deferred in conversation.deferred] == ["b"]


def test_answering_a_deferred_call_commits_its_turn() -> None:
    conversation = fold(
        journal(
            turn(1, "a"),
            Deferred("a", "tool_a"),
            Terminal(TerminalReason.SUSPENDED),
            result("a", "approved"),
        )
    )

    assert conversation.deferred == ()
    assert conversation.pending_turn is None
    assert conversation.messages[-1] == Message(Role.USER, (ToolResultBlock("a", "approved"),))
    assert conversation.is_answered("a")


def test_the_newest_memory_revisions_win() -> None:
    conversation = fold(
        journal(
            Terminal(TerminalReason.COMPLETED),
            MemoryRevisions({"a": 1, "b": 2}),
            MemoryRevisions({"a": 3}),
        )
    )

    assert dict(conversation.memory_revisions) == {"a": 3}


def test_counters_are_summed_from_the_records() -> None:
    conversation = fold(
        journal(
            Assistant(1, turn(1, "a", "b").message, 100, 20, "tool_use", 5, 7, 3),
            result("a"),
            result("b", remote=True),
            Assistant(2, turn(2).message, 200, 30, "end_turn", 1, 0, 4),
        )
    )

    assert conversation.usage == Usage(300, 50, 6, 7, 7)
    assert conversation.llm_calls == 2
    assert conversation.tool_calls == 2
    assert conversation.remote_tool_calls == 1
    assert conversation.next_iteration == 3
    assert conversation.last_seq == 5


def test_a_journal_of_its_meta_record_alone_folds_to_iteration_zero_as_in_go() -> None:
    assert fold(journal()).next_iteration == 0


def test_an_unrecognized_optional_record_is_passed_over() -> None:
    batch = turn(1, "a", "b")
    future = Unrecognized("io.choria.fisk-ai.v1.session.future", {"future": {}})

    conversation = fold(journal(batch, result("a"), future))

    assert [call.id for call in conversation.pending] == ["b"]
    assert conversation.last_seq == 4


def test_each_model_turn_keeps_its_stop_reason_in_order() -> None:
    records = journal(
        replace(turn(1, "a"), stop_reason="tool_use"),
        result("a"),
        replace(turn(2), stop_reason="pause_turn"),
        replace(turn(3), stop_reason="end_turn"),
    )

    assert fold(records).stop_reasons == ("tool_use", "pause_turn", "end_turn")
