from __future__ import annotations

from fisk_ai.multiplex import PaneReport, PaneState, TmuxPane, ZellijPane, detect


def test_tmux_is_detected_from_its_socket_and_pane() -> None:
    found = detect({"TMUX": "/tmp/tmux-1000/default,4242,0", "TMUX_PANE": "%3"})
    assert found == TmuxPane(socket_path="/tmp/tmux-1000/default", pane_id="%3")


def test_a_socket_path_with_commas_survives_detection() -> None:
    found = detect({"TMUX": "/tmp/a,b/default,4242,0", "TMUX_PANE": "%0"})
    assert found == TmuxPane(socket_path="/tmp/a,b/default", pane_id="%0")


def test_tmux_without_a_pane_is_not_claimed() -> None:
    assert detect({"TMUX": "/tmp/tmux-1000/default,4242,0"}) is None


def test_a_malformed_tmux_pane_is_not_claimed() -> None:
    assert detect({"TMUX": "/tmp/tmux-1000/default,4242,0", "TMUX_PANE": "-t evil"}) is None


def test_zellij_is_detected_with_its_pane() -> None:
    assert detect({"ZELLIJ": "0", "ZELLIJ_PANE_ID": "7"}) == ZellijPane(pane_id="7")


def test_zellij_without_a_pane_id_renames_the_focused_pane() -> None:
    zellij = detect({"ZELLIJ": "0"})
    assert isinstance(zellij, ZellijPane)
    assert zellij.pane_id is None
    report = PaneReport(state=PaneState.IDLE, title="fisk:alpha idle")
    assert zellij.command(report) == ["zellij", "action", "rename-pane", "fisk:alpha idle"]


def test_zellij_names_its_pane_when_it_knows_it() -> None:
    report = PaneReport(state=PaneState.IDLE, title="fisk:alpha idle")
    assert ZellijPane(pane_id="7").command(report)[-3:] == ["--pane-id", "7", "fisk:alpha idle"]


def test_the_first_multiplexer_that_names_itself_wins() -> None:
    found = detect({"TMUX": "/tmp/t/default,1,0", "TMUX_PANE": "%1", "ZELLIJ": "0"})
    assert isinstance(found, TmuxPane)


def test_outside_a_multiplexer_nothing_is_detected() -> None:
    assert detect({"TERM": "xterm-256color", "HOME": "/home/op"}) is None
