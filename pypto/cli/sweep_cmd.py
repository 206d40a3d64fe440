"""``pypto sweep``: a thin shell over :func:`pypto.flows.sweep.run_sweep` (and ``--render k8s``).

Result lines (JSON, one per job) go to stdout and to ``--results``; progress goes to stderr (a rich
progress bar on a TTY, one plain line per finished job otherwise). The exit code is that of the
worst status: 0 ok, 3 user error, 4 toolchain error, 1 internal error.
"""

from __future__ import annotations

import json
import math
import sys
from contextlib import ExitStack
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from pypto.cli._common import state


class _Progress:
    """A rich bar when stderr is a TTY; otherwise one plain line per result."""

    def __init__(self, stack: ExitStack) -> None:
        self.total, self.done, self.bar, self.task = 0, 0, None, None
        if sys.stderr.isatty():
            from rich.console import Console
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            self.bar = stack.enter_context(Progress(TextColumn("sweep"), BarColumn(), MofNCompleteColumn(),
                                                    TimeElapsedColumn(), TextColumn("{task.description}"),
                                                    console=Console(stderr=True)))

    def plan(self, total: int) -> None:
        self.total = total
        if self.bar is not None:
            self.task = self.bar.add_task("", total=total)

    def result(self, record: dict[str, Any]) -> None:
        self.done += 1
        line = (f"[{self.done}/{self.total}] {record['status']:<15} {record['target']} {record['platform']} "
                f"{record['toolchain']}" + (" (cached)" if record["cached"] else f" ({record['seconds']:.1f}s)"))
        if self.bar is not None:
            self.bar.update(self.task, advance=1, description=f"{record['target']} {record['platform']}")
            if record["status"] != "ok":
                self.bar.console.print(line)
        else:
            click.echo(line, err=True)


def _options(p: dict[str, Any], settings: Any) -> Any:
    from pypto.flows.sweep import SweepOptions
    from pypto.flows.sweep_jobs import parse_shard

    if p["timeout"] is not None and not 0 < p["timeout"] < math.inf:
        raise click.BadParameter(f"{p['timeout']} is not a positive number of seconds (leave --timeout out for "
                                 "no limit)", param_hint="--timeout")
    if p["workers"] is not None and p["scheduler"]:
        raise click.UsageError("give --workers N (a local cluster) or --scheduler ADDRESS, not both")
    from pypto.toolchain.engine import check_image_argument

    check_image_argument(p["image"])
    executor = "dask" if p["scheduler"] else p["executor"]
    toolchains = p["toolchains"] or (settings.toolchain,)
    return SweepOptions(platforms=tuple(dict.fromkeys(p["platforms"] or (settings.platform,))),
                        toolchains=tuple(dict.fromkeys(toolchains)), runtime=settings.runtime, run=p["run"],
                        executor=executor, workers=p["workers"], scheduler=p["scheduler"],
                        in_container=p["in_container"], batch=p["batch"], shard=parse_shard(p["shard"]),
                        no_cache=p["no_cache"], store=p["store"], timeout=p["timeout"], image=p["image"])


def _render(targets: tuple[str, ...], options: Any, settings: Any) -> None:
    from pypto.flows.sweep import plan_sweep
    from pypto.flows.sweep_k8s import render_job, render_text

    image = options.image
    if not image:
        from pypto.flows.sweep_container import image_for

        image = image_for(settings, options.toolchains[0], options.platforms[0], None)[0]
    jobs = plan_sweep(targets, replace(options, in_container=False), settings)
    click.echo(render_text(render_job(targets, jobs, options, image)), nl=False)


@click.command("sweep", epilog="Exit code: that of the worst status: 0 all ok, 3 a user error, 4 a toolchain "
                                "error, 1 an internal error; 2 a bad command line.")
@click.argument("targets", nargs=-1, required=True, metavar="TARGET...")
@click.option("--platform", "platforms", multiple=True, help="Platform to sweep (repeatable; default: the setting).")
@click.option("--toolchain", "toolchains", multiple=True, metavar="VERSION",
              help="Toolchain version to sweep (repeatable; default: the setting).")
@click.option("--runtime", help="tensormap_and_ringbuffer | host_build_graph [env PYPTO_RUNTIME].")
@click.option("--run", is_flag=True, help="Run each kernel on its sim platform and compare with its golden.")
@click.option("--executor", type=click.Choice(["local", "dask"]), default="local", show_default=True,
              help="local: a process pool; dask: Dask distributed (pip install 'pypto[sweep]').")
@click.option("--workers", type=click.IntRange(min=1), help="Worker processes (dask: a loopback LocalCluster).")
@click.option("--scheduler", metavar="tcp://HOST:PORT", help="A running Dask scheduler (implies --executor dask).")
@click.option("--in-container", is_flag=True, help="Run each batch of jobs in one container of the pinned image.")
@click.option("--batch", type=click.IntRange(min=1), help="Jobs per task/container (default 1; 8 with --in-container).")
@click.option("--shard", metavar="I/N", help="Only the jobs of shard I of N (stable across machines).")
@click.option("--results", type=click.Path(path_type=Path, dir_okay=False), help="Also write the result lines here.")
@click.option("--no-cache", is_flag=True, help="Run every job even when the result store has its result.")
@click.option("--store", type=click.Path(path_type=Path, file_okay=False),
              help="Result store dir (default <cache_dir>/sweep; shared storage for remote workers).")
@click.option("--timeout", type=float, help="Seconds before a job (or container batch) is killed.")
@click.option("--image", help="Image reference for --in-container / --render (default: the newest matching one).")
@click.option("--render", type=click.Choice(["k8s"]), help="Print a Kubernetes Indexed Job manifest instead of running.")
@click.pass_context
def sweep_cmd(ctx: click.Context, targets: tuple[str, ...], **params: Any) -> None:
    """Compile (with --run: and run) every TARGET on every platform and toolchain, in parallel.

    TARGET is FILE::NAME, FILE (each entry kernel in it) or a directory of kernel files. Prints one
    JSON result line per job (target, platform, toolchain, status, exit_code, message, artifact,
    cached, seconds, key); repeated jobs are served from the content-addressed result store.

    \b
    Examples:
      pypto sweep examples/ --platform a2a3sim --platform a5sim --run
      pypto sweep kernels/ --executor dask --workers 4 --results results.jsonl
      pypto sweep kernels/ --in-container --batch 16 --shard 0/4
      pypto sweep kernels/ --render k8s --image pypto-0.1.0-sim:TAG > job.json
    """
    from pypto.flows.sweep import run_sweep

    settings = state(ctx).settings(runtime=params["runtime"])
    options = _options(params, settings)
    if params["render"]:
        _render(targets, options, settings)
        return
    with ExitStack() as stack:
        progress = _Progress(stack)
        sinks: list[Any] = []

        def on_plan(total: int) -> None:  # the results file is opened only once the sweep is planned
            if params["results"]:
                params["results"].parent.mkdir(parents=True, exist_ok=True)
                sinks.append(stack.enter_context(open(params["results"], "w")))
            progress.plan(total)

        def on_result(record: dict[str, Any]) -> None:
            line = json.dumps(record)
            click.echo(line)
            for sink in sinks:
                sink.write(line + "\n")
                sink.flush()
            progress.result(record)

        report = run_sweep(targets, options, settings=settings, on_result=on_result, on_plan=on_plan)
    counts = ", ".join(f"{v} {k}" for k, v in report.counts().items())
    click.echo(f"sweep: {len(report.records)} jobs in {report.seconds:.1f}s ({counts})", err=True)
    _explain_failures(report.records)
    ctx.exit(report.exit_code)


def _explain_failures(records: list[dict[str, Any]], shown: int = 10) -> None:
    """One ``error:`` line per failed job (the first line of its message) on stderr, ``shown`` at most."""
    failed = [r for r in records if r["status"] != "ok"]
    for r in failed[:shown]:
        first = next((line for line in str(r["message"]).splitlines() if line.strip()), r["status"])
        first = first.removeprefix("error: ")
        click.echo(f"error: {r['status']}: {r['target']} {r['platform']} {r['toolchain']}: {first}", err=True)
    if len(failed) > shown:
        click.echo(f"error: ... and {len(failed) - shown} more failed jobs (see the result lines)", err=True)
