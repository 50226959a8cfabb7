"""One campaign on several devices or nodes at once, on Ray: one archive per device, merged by `campaign report`.

Each worker (a Ray actor; with the cuda backend, one per GPU: Ray hands each its own) runs the whole campaign
on its device into a folder of its node and sends the archive back; the driver writes it beside `--output`,
named after the worker and the device. Every archive's manifest carries the fan-out's id, its worker and the
number of workers, so that `campaign report` knows which archives came from one run. A worker whose campaign
fails, or whose process dies, is reported and the others' archives are kept; an interrupted fan-out starts
its campaigns again (each worker's partial folder is on its own node). A measured profile given with
`--device-profile` is read by the driver and sent to every worker: give one only when the devices are alike.

On one machine the workers share its cores and memory bandwidth, so campaigns that run side by side there
disturb each other's timings: fan out across nodes (or GPUs), not across the cores of one CPU.
"""

from __future__ import annotations

import platform
import shutil
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
from perfcast.tune.cluster import ClusterOptions, require_resources, start_ray

__all__ = ["FanoutResult", "CampaignWorker", "run_fanout"]


class CampaignWorker:
    """One worker of a fan-out: runs the campaign on its device, in a folder of its node (a Ray actor)."""

    def run(self, options: CampaignOptions, index: int, device_profile: str | None) -> dict[str, Any]:
        """Return the archive's bytes, the device it measured and the host, or the failure.

        `device_profile`: the text of a measured profile the driver read (its path may not exist on this node).
        """
        from perfcast.campaign.archive import Archive
        from perfcast.errors import PerfcastError

        folder = Path(tempfile.mkdtemp(prefix="perfcast-fanout-"))
        try:
            profile = None
            if device_profile is not None:
                profile = folder / "device-profile.yaml"
                profile.write_text(device_profile, encoding="utf-8")
            # With the cuda backend Ray sets CUDA_VISIBLE_DEVICES to this worker's GPU, which CuPy sees as GPU 0.
            device = "0" if options.backend == "cuda" else options.device
            try:
                archive = run_campaign(replace(options, output=folder / "campaign.zip", device=device,
                                               device_profile=profile))
            except PerfcastError as error:
                return {"index": index, "error": str(error), "host": platform.node()}
            measured = Archive.read(archive).manifest.get("device")
            name = measured if isinstance(measured, str) else str((measured or {}).get("name", "device"))
            return {"index": index, "archive": archive.read_bytes(), "device": name, "host": platform.node()}
        finally:
            shutil.rmtree(folder, ignore_errors=True)


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
    require_resources(ray, cluster.workers, bool(gpus))
    profile = options.device_profile.read_text(encoding="utf-8") if options.device_profile else None
    # Spread over the nodes: workers share a node (and disturb each other's timings) only when the nodes run out.
    worker = ray.remote(num_cpus=1, num_gpus=gpus, max_restarts=0, scheduling_strategy="SPREAD")(CampaignWorker)
    run_id = uuid.uuid4().hex[:12]
    actors = [worker.remote() for _ in range(cluster.workers)]
    archives, failures = [], []
    try:
        pending = {}
        for index, actor in enumerate(actors):
            fanout = {"id": run_id, "worker": index + 1, "workers": cluster.workers}
            mine = replace(options, fanout=fanout, command=f"{options.command} (fan-out {run_id}, worker {index + 1})")
            pending[actor.run.remote(mine, index, profile)] = index
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
                except ray.exceptions.RayError as error:  # a fault in perfcast, not a device's failure: said
                    failures.append(f"worker {index + 1}: {error}")
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
    finally:
        for actor in actors:
            ray.kill(actor)
    if not archives:
        raise ToolError("no worker finished its campaign: " + "; ".join(failures))
    return FanoutResult(run_id, sorted(archives), failures)
