from fisk_ai.agent.prompt import RESUME_REMINDER, SystemPrompt, hitl_note


def test_blocks_follow_the_documented_order() -> None:
    prompt = SystemPrompt(
        system_prompt="You run ops.",
        hitl_tools=("ask_human_confirm",),
        memory_note="memory note",
        knowledge_note="knowledge note",
        memory_index="memory index",
    )

    assert prompt.blocks(resumed=True) == (
        "You run ops.",
        hitl_note(("ask_human_confirm",)),
        "memory note",
        "knowledge note",
        RESUME_REMINDER,
        "memory index",
    )


def test_the_hitl_note_appears_only_with_the_tools() -> None:
    assert SystemPrompt(system_prompt="p").blocks(resumed=False) == ("p",)


def test_the_hitl_note_names_the_tools_and_says_prose_ends_the_run() -> None:
    note = hitl_note(("ask_human_confirm", "ask_human_input"))

    assert "ask_human_confirm, ask_human_input" in note
    assert "ends the run" in note


def test_the_fingerprinted_blocks_leave_out_the_reminder_and_the_index() -> None:
    prompt = SystemPrompt(system_prompt="p", memory_index="index")

    assert prompt.fingerprinted() == ("p",)
    assert prompt.blocks(resumed=True) == ("p", RESUME_REMINDER, "index")


def test_an_empty_system_prompt_sends_no_empty_block() -> None:
    assert SystemPrompt().blocks(resumed=False) == ()
