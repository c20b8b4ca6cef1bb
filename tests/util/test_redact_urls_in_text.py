"""URLs inside a sentence are redacted and the sentence around them is left as it was."""

from fisk_ai.tools.mcp.importing import Redactor
from fisk_ai.util.redact import redact_urls


def test_the_parenthesis_closing_around_a_url_with_a_query_survives() -> None:
    text = "(http://127.0.0.1:43737/mcp?apiKey=sekrit&plain=x could not be started)"
    assert redact_urls(text) == (
        "(http://127.0.0.1:43737/mcp?apiKey=REDACTED&plain=REDACTED could not be started)"
    )


def test_a_url_ending_a_parenthesis_keeps_the_parenthesis_outside_it() -> None:
    assert redact_urls("see (https://h/mcp?key=abc)") == "see (https://h/mcp?key=REDACTED)"


def test_punctuation_ending_the_sentence_is_not_taken_into_the_url() -> None:
    assert redact_urls("failed at https://h/x?key=abc.") == "failed at https://h/x?key=REDACTED."
    assert redact_urls("at https://h/x?key=abc, then") == "at https://h/x?key=REDACTED, then"


def test_a_parenthesis_belonging_to_the_url_path_stays_in_it() -> None:
    assert redact_urls("https://h/wiki/A_(b)?key=abc") == "https://h/wiki/A_(b)?key=REDACTED"


def test_an_mcp_servers_message_keeps_its_closing_parenthesis() -> None:
    redact = Redactor.of([])
    message = 'mcp_clients "docs" (https://mcp.example.net/mcp/?apiKey=abc123) refused: 401'
    assert redact(message) == (
        'mcp_clients "docs" (https://mcp.example.net/mcp/?apiKey=REDACTED) refused: 401'
    )
