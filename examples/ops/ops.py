#!/usr/bin/env python3
"""A pretend fleet operator: the application behind the ops agent.

Every command prints canned text and changes nothing, so the gates fisk-ai puts in front of
the risky ones can be tried safely. Tags on the commands tell fisk-ai what each one does.
"""

from __future__ import annotations

import click

from fisk_ai.tools.introspect import fisk_tags, run

SERVICES = {
    "api": ("running", "web-1"),
    "web": ("running", "web-2"),
    "worker": ("running", "job-1"),
    "scheduler": ("stopped", "job-1"),
}

DISKS = [
    ("web-1", "/", 41),
    ("web-2", "/", 67),
    ("job-1", "/", 88),
    ("job-1", "/var/lib/queue", 52),
]


@click.group(name="ops")
@click.option(
    "--context",
    default="dev",
    envvar="OPS_CONTEXT",
    show_default=True,
    help="Fleet context to operate on",
)
@click.pass_context
def cli(ctx: click.Context, context: str) -> None:
    """Operate the demo fleet"""
    ctx.obj = context


@fisk_tags("ai:read_only")
@cli.command()
@click.pass_obj
def status(context: str) -> None:
    """Show a one-line summary of the fleet's health"""
    running = sum(1 for state, _ in SERVICES.values() if state == "running")
    host, mount, percent = max(DISKS, key=lambda disk: disk[2])
    click.echo(
        f"context {context}: {len(SERVICES)} services ({running} running, "
        f"{len(SERVICES) - running} stopped); fullest disk {host}:{mount} at {percent}%"
    )


@cli.group()
def disk() -> None:
    """Inspect the fleet's disks"""


@fisk_tags("ai:read_only")
@disk.command()
@click.option("--host", help="Only show this host")
@click.option(
    "--min-percent",
    type=click.IntRange(0, 100),
    default=0,
    show_default=True,
    help="Only show disks at least this full",
)
@click.pass_obj
def usage(context: str, host: str | None, min_percent: int) -> None:
    """Show disk usage per host and mount point"""
    click.echo(f"disk usage in context {context}:")
    for disk_host, mount, percent in DISKS:
        if (host is None or disk_host == host) and percent >= min_percent:
            click.echo(f"  {disk_host:<6} {mount:<16} {percent:>3}%")


@cli.group()
def service() -> None:
    """Manage the fleet's services"""


@fisk_tags("ai:read_only")
@service.command(name="list")
@click.option(
    "--state",
    type=click.Choice(["all", "running", "stopped"]),
    default="all",
    show_default=True,
    help="Only list services in this state",
)
@click.pass_obj
def list_services(context: str, state: str) -> None:
    """List services with their state and host"""
    click.echo(f"services in context {context}:")
    for name, (service_state, host) in SERVICES.items():
        if state in ("all", service_state):
            click.echo(f"  {name:<10} {service_state:<8} {host}")


@fisk_tags("ai:confirm", "ai:destructive")
@service.command()
@click.argument("name", help="The service to restart")
@click.option(
    "--drain/--no-drain",
    default=True,
    show_default=True,
    help="Let open connections finish before restarting",
)
@click.pass_obj
def restart(context: str, name: str, drain: bool) -> None:
    """Restart a service, dropping its in-flight work

    The service is stopped and started again on its current host. Without --drain, open
    connections are cut.
    """
    if name not in SERVICES:
        known = ", ".join(SERVICES)
        raise click.ClickException(f"no service {name!r} in context {context} (known: {known})")
    host = SERVICES[name][1]
    how = "after draining connections" if drain else "without draining"
    click.echo(f"context {context}: restarted {name} on {host} {how} (demo, nothing changed)")


@cli.group()
def cache() -> None:
    """Manage the shared cache"""


@fisk_tags("impact:rw")
@cache.command()
@click.option("--pattern", default="*", show_default=True, help="Key pattern to purge")
@click.pass_obj
def purge(context: str, pattern: str) -> None:
    """Purge cached objects matching a pattern"""
    click.echo(f"context {context}: purged 128 cache keys matching {pattern!r} (demo)")


@cli.group()
def secrets() -> None:
    """Read the fleet's secrets"""


@fisk_tags("ai:deny")
@secrets.command()
@click.argument("name", help="The secret to show")
@click.pass_obj
def show(context: str, name: str) -> None:
    """Print a secret's value"""
    click.echo(f"context {context}: {name} = demo-secret-value")


@cli.group(hidden=True)
def debug() -> None:
    """Developer diagnostics"""


@debug.command()
@click.pass_obj
def dump(context: str) -> None:
    """Dump the in-memory fleet state"""
    click.echo(f"context {context}: services={sorted(SERVICES)} disks={len(DISKS)}")


if __name__ == "__main__":
    run(cli)
