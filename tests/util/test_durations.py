from __future__ import annotations

from datetime import timedelta

import pytest

from fisk_ai.util.durations import DurationError, format_duration, parse_duration


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("300ms", timedelta(milliseconds=300)),
        ("1.5h", timedelta(hours=1, minutes=30)),
        ("2h45m", timedelta(hours=2, minutes=45)),
        ("30s", timedelta(seconds=30)),
        ("0s", timedelta(0)),
        ("0", timedelta(0)),
        ("1500us", timedelta(microseconds=1500)),
        ("7µs", timedelta(microseconds=7)),
        ("7μs", timedelta(microseconds=7)),
        (".5s", timedelta(milliseconds=500)),
        ("1h2m3.25s", timedelta(hours=1, minutes=2, seconds=3.25)),
        ("+3s", timedelta(seconds=3)),
    ],
)
def test_parse_duration_reads_go_syntax(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


def test_a_nanosecond_duration_does_not_round_to_zero() -> None:
    assert parse_duration("1ns") == timedelta(microseconds=1)


@pytest.mark.parametrize("text", ["", "5", "1h5", "s", ".s", "5 m", "5x", "1.2.3s"])
def test_parse_duration_refuses_malformed_text(text: str) -> None:
    with pytest.raises(DurationError):
        parse_duration(text)


def test_parse_duration_refuses_negatives() -> None:
    with pytest.raises(DurationError, match="negative"):
        parse_duration("-5s")


def test_a_number_without_a_unit_says_a_unit_is_needed() -> None:
    with pytest.raises(DurationError, match="needs a unit"):
        parse_duration("30")


def test_parse_duration_refuses_what_go_cannot_hold() -> None:
    with pytest.raises(DurationError, match="longer"):
        parse_duration("3000000h")


@pytest.mark.parametrize(
    ("duration", "expected"),
    [
        (timedelta(minutes=5), "5m0s"),
        (timedelta(minutes=1), "1m0s"),
        (timedelta(seconds=30), "30s"),
        (timedelta(minutes=2), "2m0s"),
        (timedelta(hours=1), "1h0m0s"),
        (timedelta(milliseconds=500), "500ms"),
        (timedelta(0), "0s"),
        (timedelta(seconds=1.5), "1.5s"),
        (timedelta(microseconds=1500), "1.5ms"),
        (timedelta(microseconds=7), "7µs"),
        (timedelta(hours=26, minutes=3, seconds=4), "26h3m4s"),
        (-timedelta(seconds=30), "-30s"),
    ],
)
def test_format_duration_prints_go_style(duration: timedelta, expected: str) -> None:
    assert format_duration(duration) == expected


@pytest.mark.parametrize("text", ["5m0s", "1h0m0s", "1.5s", "300ms", "2h45m0s", "0s"])
def test_format_duration_round_trips(text: str) -> None:
    assert format_duration(parse_duration(text)) == text


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1d", timedelta(days=1)),
        ("1D", timedelta(days=1)),
        ("1w", timedelta(weeks=1)),
        ("1W", timedelta(weeks=1)),
        ("1M", timedelta(days=30)),
        ("1y", timedelta(days=365)),
        ("1Y", timedelta(days=365)),
        ("1w2d3h4m", timedelta(days=9, hours=3, minutes=4)),
    ],
)
def test_fisk_calendar_units_are_read(text: str, expected: timedelta) -> None:
    assert parse_duration(text) == expected


def test_a_calendar_unit_counts_whole_hours_as_fisk_does() -> None:
    assert parse_duration("1.1d") == timedelta(hours=26)
    assert parse_duration("0.01d") == timedelta(0)


def test_m_is_a_minute_and_capital_m_a_month() -> None:
    assert parse_duration("2m") == timedelta(minutes=2)
    assert parse_duration("2M") == timedelta(days=60)


def test_a_calendar_duration_past_the_go_range_is_refused() -> None:
    with pytest.raises(DurationError, match="longer than a duration can be"):
        parse_duration("300y")
