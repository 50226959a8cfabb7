"""One campaign on several devices or nodes at once, on Ray: one archive per device, merged by `campaign report`.

Each worker (a Ray actor; with the cuda backend, one per GPU: Ray hands each its own) runs the whole campaign
on its device into a folder of its node and sends the archive back; the driver writes it beside `--output`,
named after the worker and the device. Every archive's manifest carries the fan-out's id, its worker and the
number of workers, so that `campaign report` knows which archives came from one run. A worker whose campaign
fails, or whose process dies, is reported and the others' archives are kept; an interrupted fan-out starts
its campaigns again (each worker's partial folder is on its own node).

On one machine the workers share its cores and memory bandwidth, so campaigns that run side by side there
disturb each other's timings: fan out across nodes (or GPUs), not across the cores of one CPU.
"""

from __future__ import annotations

import platform
import tempfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from perfcast.campaign.run import CampaignOptions, run_campaign
from perfcast.devices.schema import device_slug
from perfcast.errors import ToolError
from perfcast.output_files import replaced
from perfcast.tune.cluster import ClusterOptions, start_ray

__all__ = ["FanoutResult", "CampaignWorker", "run_fanout"]


class CampaignWorker:
    """One worker of a fan-out: runs the campaign on its device, in a folder of its node (a Ray actor)."""

    def run(self, options: CampaignOptions, index: int, cuda_gpus: list[int]) -> dict[str, Any]:
        """Return the archive's bytes, the device it measured and the host, or the failure."""
        from perfcast.campaign.archive import Archive
        from perfcast.errors import PerfcastError

        folder = Path(tempfile.mkdtemp(prefix="perfcast-fanout-"))
        # Ray sets CUDA_VISIBLE_DEVICES to the GPU it gave this worker, which CuPy then sees as GPU 0.
        device = "0" if options.backend == "cuda" and cuda_gpus else options.device
        try:
            archive = run_campaign(replace(options, output=folder / "campaign.zip", device=device))
        except PerfcastError as error:
            return {"index": index, "error": str(error), "host": platform.node()}
        device = Archive.read(archive).manifest.get("device")
        device_name = device if isinstance(device, str) else str((device or {}).get("name", "device"))
        return {"index": index, "archive": archive.read_bytes(), "device": device_name, "host": platform.node()}


@dataclass(frozen=True)
class FanoutResult:
    """The archives a fan-out wrote, one per worker that finished, and what happened to the others."""

    id: str
    archives: list[Path]
    failures: list[str]


def _archive_path(output: Path, index: int, device: str) -> Path:
    """Return where worker `index`'s archive goes: beside `output`, named after the worker and the device."""
    return output.with_name(f"{output.stem}-{index + 1}-{device_slug(device)}{output.suffix or '.zip'}")


def run_fanout(options: CampaignOptions, cluster: ClusterOptions,
               progress: Callable[[str], None] = lambda _: None) -> FanoutResult:
    """Run the campaign of `options` on `cluster.workers` workers; return the archives written (one per device)."""
    ray = start_ray(cluster)
    gpus = 1 if options.backend == "cuda" else 0
    worker = ray.remote(num_cpus=1, num_gpus=gpus, max_restarts=0)(CampaignWorker)
    run_id = uuid.uuid4().hex[:12]
    actors = [worker.remote() for _ in range(cluster.workers)]
    pending = {}
    for index, actor in enumerate(actors):
        fanout = {"id": run_id, "worker": index + 1, "workers": cluster.workers}
        mine = replace(options, fanout=fanout, command=f"{options.command} (fan-out {run_id}, worker {index + 1})")
        pending[actor.run.remote(mine, index, [] if not gpus else [index])] = index
    archives, failures = [], []
    while pending:
        done, _ = ray.wait(list(pending), num_returns=1)
        for ref in done:
            index = pending.pop(ref)
            try:
                outcome = ray.get(ref)
            except ray.exceptions.RayActorError as error:
                failures.append(f"worker {index + 1}: its process died ({type(error).__name__})")
                progress(failures[-1])
                continue
            except ray.exceptions.RayTaskError as error:  # a fault in perfcast, not a device's failure: say it
                failures.append(f"worker {index + 1}: {error.cause!r}")
                progress(failures[-1])
                continue
            if "error" in outcome:
                failures.append(f"worker {index + 1} on {outcome['host']}: {outcome['error']}")
                progress(failures[-1])
                continue
            path = _archive_path(options.output, index, outcome["device"])
            with replaced(path) as partial:
                partial.write_bytes(outcome["archive"])
            archives.append(path)
            progress(f"worker {index + 1} on {outcome['host']}: {outcome['device']} -> {path.name}")
    for actor in actors:
        ray.kill(actor)
    if not archives:
        raise ToolError("no worker finished its campaign: " + "; ".join(failures))
    return FanoutResult(run_id, sorted(archives), failures)
