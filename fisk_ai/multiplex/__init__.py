"""HOST. Pane status reporting for tmux and zellij."""
