"""``pypto sweep --render k8s``: the same sweep as a Kubernetes Indexed Job (rendered, never applied).

The Job has one completion index per shard (``completions`` = jobs / ``--batch``, rounded up); pod
``I`` runs ``pypto sweep ... --shard I/N`` in the pinned image (``$JOB_COMPLETION_INDEX``), so each
pod picks the same jobs a CI matrix entry would. Pods mount the sources read-only at ``/src`` and a
writable volume at ``/out`` (the result store and one ``results/shard-I.jsonl`` per index), both
from PersistentVolumeClaims the cluster provides (``pypto-sweep-src`` and ``pypto-sweep-out``). A
failed index is retried once (``backoffLimitPerIndex``) without failing the other indexes. The
manifest is written as JSON, which is YAML too: ``kubectl apply -f`` reads it.
"""

from __future__ import annotations

import hashlib
import json
import math
import shlex
from collections.abc import Sequence
from typing import Any

from pypto.errors import UserError
from pypto.flows.sweep_jobs import Job

SRC_CLAIM = "pypto-sweep-src"
OUT_CLAIM = "pypto-sweep-out"
POD_UID = 1000


def pod_command(targets: Sequence[str], options: Any, shards: int) -> str:
    """The shell line pod ``$JOB_COMPLETION_INDEX`` runs."""
    argv = ["pypto", "sweep", *targets]
    for platform in options.platforms:
        argv += ["--platform", platform]
    for toolchain in options.toolchains:
        argv += ["--toolchain", toolchain]
    argv += ["--runtime", options.runtime, "--store", "/out/store"]
    if options.run:
        argv.append("--run")
    if options.no_cache:
        argv.append("--no-cache")
    if options.timeout:
        argv += ["--timeout", f"{options.timeout:g}"]
    shard = f'--shard "$JOB_COMPLETION_INDEX/{shards}"'
    results = '--results "/out/results/shard-$JOB_COMPLETION_INDEX.jsonl"'
    return f"mkdir -p /out/results && exec {shlex.join(argv)} {shard} {results}"


def render_job(targets: Sequence[str], jobs: Sequence[Job], options: Any, image: str) -> dict[str, Any]:
    """A ``batch/v1`` Indexed Job running ``jobs`` in ceil(len(jobs) / batch) shards."""
    outside = [j.rel for j in jobs if j.rel.startswith("/")]
    if outside:
        raise UserError(f"--render k8s needs targets under the working directory (the pods' /src); got {outside[0]}",
                        hint="run the sweep from a directory that contains every target")
    if not jobs:
        raise UserError("--render k8s: the sweep has no jobs to render")
    shards = math.ceil(len(jobs) / max(1, options.batch_size()))
    digest = hashlib.sha256(json.dumps([sorted(j.shard_id for j in jobs), image]).encode()).hexdigest()[:10]
    labels = {"app.kubernetes.io/name": "pypto-sweep", "io.pypto.sweep": digest}
    container = {
        "name": "sweep", "image": image, "imagePullPolicy": "IfNotPresent",
        "command": ["/bin/sh", "-c"], "args": [pod_command(targets, options, shards)], "workingDir": "/src",
        "env": [{"name": "HOME", "value": "/tmp/home"}, {"name": "XDG_CACHE_HOME", "value": "/tmp/cache"},
                {"name": "PYPTO_CACHE_DIR", "value": "/tmp/cache/pypto"}],
        "resources": {"requests": {"cpu": "1", "memory": "2Gi"}, "limits": {"memory": "4Gi"}},
        "securityContext": {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True,
                            "capabilities": {"drop": ["ALL"]}},
        "volumeMounts": [{"name": "src", "mountPath": "/src", "readOnly": True},
                         {"name": "out", "mountPath": "/out"}, {"name": "tmp", "mountPath": "/tmp"}],
    }
    return {
        "apiVersion": "batch/v1", "kind": "Job",
        "metadata": {"name": f"pypto-sweep-{digest}", "labels": labels},
        "spec": {
            "completionMode": "Indexed", "completions": shards,
            "parallelism": min(shards, options.workers or shards),
            "backoffLimitPerIndex": 1, "maxFailedIndexes": shards,
            "template": {
                "metadata": {"labels": labels},
                "spec": {
                    "restartPolicy": "Never",
                    "securityContext": {"runAsNonRoot": True, "runAsUser": POD_UID, "runAsGroup": POD_UID,
                                        "fsGroup": POD_UID},
                    "containers": [container],
                    "volumes": [{"name": "src", "persistentVolumeClaim": {"claimName": SRC_CLAIM, "readOnly": True}},
                                {"name": "out", "persistentVolumeClaim": {"claimName": OUT_CLAIM}},
                                {"name": "tmp", "emptyDir": {"sizeLimit": "2Gi"}}],
                },
            },
        },
    }


def render_text(manifest: dict[str, Any]) -> str:
    return json.dumps(manifest, indent=2) + "\n"
