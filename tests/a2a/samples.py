"""One message of every v1 protocol id, with its optional fields filled where it has them."""

from __future__ import annotations

from fisk_ai.a2a.messages import (
    Ack,
    AgentCallBody,
    Answer,
    Budget,
    Cancel,
    DiscoveryReply,
    DiscoveryRequest,
    ElicitReplyApprove,
    ElicitReplyConfirm,
    ElicitReplyInput,
    ElicitReplyNoOperator,
    ElicitReplySelect,
    ElicitRequestApprove,
    ElicitRequestConfirm,
    ElicitRequestInput,
    ElicitRequestSelect,
    ElicitWaiting,
    EventAgentCall,
    EventPrompt,
    EventStatus,
    EventText,
    EventThinking,
    EventToolCall,
    EventToolResult,
    EventWarning,
    ExecResult,
    Identity,
    Message,
    PromptBody,
    RequestAnswer,
    RequestPrompt,
    RequestRead,
    RequestResume,
    StatusBody,
    TerminalError,
    TerminalResult,
    TextBody,
    ThinkingBody,
    ToolBehavior,
    ToolCallBody,
    ToolDescriptor,
    ToolReply,
    ToolRequest,
    ToolResultBody,
    WarningBody,
    WireUsage,
    new_request,
    reply_to,
)
from fisk_ai.a2a.vocabulary import AnswerField, AnswerKind, ElicitChoice, ErrorCode, StopReason

CALLER = Identity(name="peer1")
AGENT = Identity(name="nats-worker", instance="w1")
TOKEN = "3Hzmp8VqrKL42NmXcPd7bTgWfR1"
USAGE = WireUsage(
    input_tokens=1200,
    output_tokens=300,
    cache_read_tokens=800,
    cache_create_tokens=100,
    thinking_tokens=40,
    llm_calls=2,
    tool_calls=1,
)

PROMPT = new_request(
    RequestPrompt,
    sender=CALLER,
    recipient=Identity(name="nats-worker"),
    request="docs1",
    prompt="how many streams are there",
    context="the production cluster",
    tool_hints=("stream_ls",),
    budget=Budget(max_tokens=50_000, max_iterations=5, call_timeout="90s"),
    stream=False,
    conversation_token=TOKEN,
    replay=20,
    force=True,
    traceparent="00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
)


def _reply(cls: type, sequence: int, **fields: object) -> Message:
    return reply_to(PROMPT, cls, sender=AGENT, sequence=sequence, **fields)


CALLER_MESSAGES: list[Message] = [
    PROMPT,
    new_request(RequestResume, sender=CALLER, conversation_token=TOKEN, force=True),
    new_request(
        RequestAnswer,
        sender=CALLER,
        conversation_token=TOKEN,
        answer=Answer(
            tool_use_id="toolu_01A9bK2mNpQr",
            kind=AnswerKind.APPROVE,
            answer=AnswerField.CHOICE,
            choice=ElicitChoice.ONCE,
        ),
        replay=4,
    ),
    new_request(RequestRead, sender=CALLER, conversation_token=TOKEN, replay=200),
    new_request(ElicitReplyApprove, sender=CALLER, question_id="q1", choice=ElicitChoice.ALWAYS),
    new_request(
        ElicitReplyApprove,
        sender=CALLER,
        question_id="q1",
        choice=ElicitChoice.NO,
        reason="use the staging cluster",
    ),
    new_request(ElicitReplyConfirm, sender=CALLER, question_id="q1", confirmed=False),
    new_request(ElicitReplySelect, sender=CALLER, question_id="q1", index=0),
    new_request(ElicitReplyInput, sender=CALLER, question_id="q1", value=""),
    new_request(ElicitReplyNoOperator, sender=CALLER, question_id="q1"),
    new_request(ElicitWaiting, sender=CALLER, question_id="q1"),
    new_request(Cancel, sender=CALLER, reason="the operator pressed Ctrl-C"),
    new_request(ToolRequest, sender=CALLER, name="stream_ls", input={"subject": "orders.>"}),
    new_request(DiscoveryRequest, sender=CALLER),
]

AGENT_MESSAGES: list[Message] = [
    _reply(Ack, 1, accepted=True, conversation_token=TOKEN, max_tokens=100_000),
    _reply(EventThinking, 2, block=ThinkingBody(text="hm", signature="c2ln", provider="anthropic")),
    _reply(EventText, 3, block=TextBody(text="the stream is gone", final=True)),
    _reply(
        EventToolCall,
        4,
        block=ToolCallBody(
            id="toolu_1",
            name="stream_rm",
            input={"stream": "ORDERS", "force": True},
            argv=("stream", "rm", "ORDERS", "--force"),
        ),
    ),
    _reply(
        EventToolResult,
        5,
        block=ToolResultBody(
            call_id="toolu_1",
            is_error=True,
            output="nats: error: stream not found",
            exec=ExecResult(command="stream rm ORDERS --force", exit_code=1, truncated=True),
        ),
    ),
    _reply(EventAgentCall, 6, block=AgentCallBody(id="call_1", name="db-agent", task="sub1")),
    _reply(
        EventStatus,
        7,
        block=StatusBody(iteration=2, phase="replay_end", usage=USAGE, count=12, truncated=True),
    ),
    _reply(
        EventWarning,
        8,
        block=WarningBody(
            kind="tools_sent_directly",
            name="llm.no_tool_search",
            count=40,
            params=("a", "b"),
            error="boom",
        ),
    ),
    _reply(EventPrompt, 9, block=PromptBody(text="how many streams are there")),
    _reply(
        ElicitRequestApprove,
        10,
        question_id="q1",
        tool_use_id="toolu_1",
        command="stream rm",
        display="stream rm ORDERS --force",
        tag="ai:confirm",
        wait_ms=120_000,
        argv=("stream", "rm", "--force", "--", "prod; rm -rf / $(whoami)"),
    ),
    _reply(ElicitRequestConfirm, 11, question_id="q2", question="Proceed?", wait_ms=60_000),
    _reply(
        ElicitRequestSelect,
        12,
        question_id="q3",
        tool_use_id="toolu_2",
        question="Which cluster?",
        options=("east", "west"),
    ),
    _reply(ElicitRequestInput, 13, question_id="q4", question="Name?", default="ORDERS"),
    _reply(
        TerminalResult,
        14,
        stop_reason=StopReason.END_TURN,
        text="There are 3 streams.",
        usage=USAGE,
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        content_exported=True,
    ),
    _reply(
        TerminalError,
        15,
        error="the conversation has a turn in flight",
        code=ErrorCode.CONVERSATION_BUSY,
        stop_reason=StopReason.SUSPENDED,
        usage=USAGE,
        trace_id="4bf92f3577b34da6a3ce929d0e0e4736",
        content_exported=False,
    ),
    _reply(
        ToolReply,
        0,
        is_error=False,
        output="ORDERS\n",
        exec=ExecResult(command="stream ls", exit_code=0),
    ),
    _reply(ToolReply, 0, is_error=True, code=ErrorCode.CAPACITY, output="busy"),
    _reply(
        DiscoveryReply,
        0,
        name="nats-worker",
        version="1.2.0",
        description="operates NATS",
        model="claude-sonnet-5",
        protocols=("io.choria.fisk-ai.v1",),
        tools=(
            ToolDescriptor(
                name="stream_ls",
                description="List streams",
                input_schema={"type": "object", "properties": {}},
                behavior=ToolBehavior(read_only=True, open_world=False),
            ),
            ToolDescriptor(name="bare"),
        ),
        telemetry=True,
        telemetry_content=False,
    ),
]

EVERY_MESSAGE: list[Message] = CALLER_MESSAGES + AGENT_MESSAGES


def message_id(message: Message) -> str:
    return str(message.protocol).removeprefix("io.choria.fisk-ai.v1.")
