"""``pypto sweep --in-container``: a batch of jobs in one container of the pinned image.

One ``docker run`` per batch (through the launcher, :func:`pypto.toolchain.docker.run_in_container`,
so the same image check and sandbox apply) runs a small ``/bin/sh`` script: one ``pypto compile|run``
per job, each writing ``stdout.txt``, ``stderr.txt`` and ``rc`` (exit code, start and end times in ns)
into its own ``/out/<i>/``. Jobs thus stay separate results while paying the container start once.
Containers carry ``io.pypto.sweep=<sweep id>`` and ``io.pypto.sweep.attempt=<batch dir>`` labels, so
the sweep removes the containers of attempts whose worker died.
"""

from __future__ import annotations

import shlex
import uuid
from pathlib import Path
from typing import Any

from pypto.errors import PyptoError, UserError
from pypto.flows.sweep_task import cli_argv, finish, outcome

SCRIPT_SHELL = ("/bin/sh",)


def image_for(settings: Any, toolchain: str, platform: str, image: str | None) -> tuple[str, str]:
    """(reference, image id) of the image a toolchain's jobs run in; refuses a mislabelled image."""
    from pypto.toolchain import docker
    from pypto.toolchain.engine import check_image_argument, docker_client

    check_image_argument(image)
    client = docker_client(engine=settings.container_engine)
    selected = docker.select_image(client, settings.replace(toolchain=toolchain, platform=platform), image)
    return (selected.tags[0] if selected.tags else selected.id), selected.id


def batch_script(jobs: list[dict[str, Any]], source_dir: Path, batch_dir: Path) -> str:
    """The shell script a batch container runs (paths mapped to ``/src`` and ``/out``)."""
    from pypto.toolchain.docker import CONTAINER_OUT, CONTAINER_SRC, to_container_path

    lines = ["cd " + CONTAINER_SRC]
    for i, job in enumerate(jobs):
        target = to_container_path(Path(job["file"]), source_dir, batch_dir) + (f"::{job['name']}" if job["name"] else "")
        out = f"{CONTAINER_OUT}/{i}"
        argv = shlex.join(["pypto", *cli_argv(job, target, f"{out}/artifact")])
        lines.append(f"s=$(date +%s%N); {argv} >{out}/stdout.txt 2>{out}/stderr.txt; "
                     f"echo $? $s $(date +%s%N) >{out}/rc")
    return "\n".join(lines) + "\n"


def _read_rc(path: Path) -> tuple[int, float] | None:
    try:
        code, start, end = path.read_text().split()
        return int(code), (int(end) - int(start)) / 1e9
    except (OSError, ValueError):
        return None


def run_batch_in_container(jobs: list[dict[str, Any]], ctx: dict[str, Any]) -> list[dict[str, Any]]:
    """Run a batch in one container; an engine failure is a ``toolchain_error`` line for unfinished jobs."""
    from pypto.toolchain import docker
    from pypto.toolchain.settings import resolve_settings

    store, source_dir = Path(ctx["store"]), Path(ctx["cwd"])
    batch_dir = store / "attempts" / ctx["sweep_id"] / f"batch-{uuid.uuid4().hex[:12]}"
    for i in range(len(jobs)):
        (batch_dir / str(i) / "artifact").mkdir(parents=True)
    first = jobs[0]
    failure, failure_code = "the container stopped before this job ran", 4
    try:
        settings = resolve_settings(toolchain=first["toolchain"], platform=first["platform"], runtime=first["runtime"])
        script = batch_script(jobs, source_dir, batch_dir)
        labels = {ctx["label"]: ctx["sweep_id"], f"{ctx['label']}.attempt": batch_dir.name}
        docker.run_in_container(["-c", script], settings=settings, source_dir=source_dir, output_dir=batch_dir,
                                image=ctx.get("image"), timeout=ctx.get("timeout"), labels=labels,
                                entrypoint=SCRIPT_SHELL)
    except PyptoError as exc:
        failure, failure_code = str(exc), (3 if isinstance(exc, UserError) else 4)
    records = []
    for i, job in enumerate(jobs):
        sub = batch_dir / str(i)
        done = _read_rc(sub / "rc")
        if done is None:
            records.append(finish(store, job, sub, failure_code, failure, 0.0))
            continue
        code, seconds = done
        stdout = (sub / "stdout.txt").read_text(errors="replace") if (sub / "stdout.txt").exists() else ""
        stderr = (sub / "stderr.txt").read_text(errors="replace") if (sub / "stderr.txt").exists() else ""
        code, message = outcome(code, stdout, stderr, sub / "artifact")
        records.append(finish(store, job, sub, code, message, seconds))
    import shutil

    shutil.rmtree(batch_dir, ignore_errors=True)
    return records


def remove_sweep_containers(sweep_id: str, label: str = "io.pypto.sweep", engine: str = "docker") -> int:
    """Remove the containers a sweep left behind (those of attempts whose worker died)."""
    from pypto.toolchain.docker import remove_labelled

    try:
        return remove_labelled(label, sweep_id, engine)
    except PyptoError:
        return 0
